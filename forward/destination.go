package forward

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// Protocol is how a destination is spoken to.
type Protocol uint8

const (
	// GRPC is OTLP/gRPC unary Export calls (otlpclient.UnaryExporter).
	GRPC Protocol = iota + 1
	// Stream is otlp-lite's pipelined streaming mode
	// (otlpclient.StreamExporter), for another otlp-lite across a WAN.
	Stream
	// HTTP is OTLP/HTTP with protobuf or JSON bodies
	// (otlpclient.HTTPExporter).
	HTTP
	// Sink is a storage.Sink (Kafka) opened by a scheme registered with
	// RegisterScheme: each record is one Write.
	Sink
)

func (p Protocol) String() string {
	switch p {
	case GRPC:
		return "grpc"
	case Stream:
		return "stream"
	case HTTP:
		return "http"
	case Sink:
		return "sink"
	}
	return "protocol(" + strconv.Itoa(int(p)) + ")"
}

// Defaults of a destination's parameters, each with its reason.
const (
	// DefaultTimeout bounds one attempt (a stream's wait for an
	// acknowledgement included): long enough for a loaded receiver to
	// store a large request, short enough that a hung connection or a
	// stalled stream is noticed and retried.
	DefaultTimeout = 10 * time.Second
	// DefaultInitialBackoff and DefaultMaxBackoff pace retries of a
	// destination that is down: the first retry soon (a restart takes
	// seconds), then at least every 30 s however long the outage, so a
	// destination that comes back is used within 30 s.
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	// DefaultStreamInFlight is the stream mode's window of records sent
	// and not yet acknowledged: it covers the bandwidth-delay product of
	// a WAN link (at 200 ms and 1000 records/s, 200) and is what a crash
	// may resend.
	DefaultStreamInFlight = 256
	// DefaultUnaryInFlight is how many unary (gRPC or HTTP) requests are
	// in flight at once: enough to hide a LAN round trip, few enough not
	// to overload a receiver that is catching up.
	DefaultUnaryInFlight = 8
	// maxInFlight bounds the window (a record may be up to 64 MiB, and
	// the window's records are held in memory).
	maxInFlight = 4096
)

// Destination is where records are forwarded, and how.
type Destination struct {
	// Name identifies the destination: its cursors, dead letters and
	// metrics. 1 to 64 of [A-Za-z0-9_-].
	Name     string
	Protocol Protocol
	// Endpoint is "host:port", or "unix:PATH" for a Unix socket
	// (otlpclient.ParseEndpoint).
	Endpoint string
	// Path (HTTP only) is prepended to each signal's path (/v1/traces,
	// ...), as OTEL_EXPORTER_OTLP_ENDPOINT's path is.
	Path string
	// TLS is nil for a plaintext connection (h2c for gRPC).
	TLS *tls.Config
	// Header is sent with every request (gRPC metadata for gRPC and the
	// stream mode).
	Header      http.Header
	Compression compression.Codec
	// DisableStreamCompression stops a stream destination from offering
	// stateful compression (otlpclient.StreamConfig; query
	// stream-compression=none).
	DisableStreamCompression bool
	// DisableStreamColumns stops a stream destination from offering the
	// columnar transform under stateful compression
	// (otlpclient.StreamConfig; query stream-compression=zstd, where the
	// default is zstd+columns). With it (the default) each signal's
	// stream holds an otlpcolumns.Encoder between
	// records, at most otlpcolumns.EncoderCost (about 14.5 MiB: its
	// tables are bounded, and it keeps at most 4 MiB of buffers from one
	// record to the next), beside its stateful zstd encoder; the
	// stream's writer keeps at most 4 MiB per buffer between records too
	// (otlpclient's maxKeptBuffer).
	DisableStreamColumns bool
	// JSON (HTTP only) sends OTLP/JSON bodies instead of protobuf.
	JSON bool
	// Signals are the signals forwarded.
	Signals []storage.Signal
	// Start is where a destination without a cursor begins.
	Start disk.Start
	// Timeout bounds one attempt: a unary call or HTTP request, or, on a
	// stream, the wait for an acknowledgement while the stream
	// acknowledges nothing (then the stream is replaced and the state is
	// backing_off).
	Timeout time.Duration
	// Backoff paces retries of retryable failures (a server's RetryInfo
	// or Retry-After is honoured over it) and of a destination that
	// refuses the client (see State).
	Backoff otlpclient.Backoff
	// InFlight is how many records may be sent and not yet acknowledged.
	InFlight int
	// Uncommitted, if more than InFlight, is how many records may be read
	// and not yet behind a committed cursor (Window): what a crash may
	// resend. Zero means InFlight. A destination sent one record at a
	// time (replay's unary protocols, which keep the log's order) needs
	// more, or it would wait for a commit (two fsyncs) after each record.
	Uncommitted int
	// TenantHeader, if set (grpc and http only), sends each record's
	// tenant in this header, such as X-Scope-OrgID: the tenant travels
	// with the data to a receiver that takes it from there.
	TenantHeader string
	// OpenSink opens the destination of a Sink protocol (see
	// RegisterScheme); New calls it, Close closes what it returned.
	OpenSink func(*slog.Logger) (storage.Sink, error)
	// Dial, if not nil, opens the connections to Endpoint instead of TCP
	// (tests reach an in-memory destination with it).
	Dial otlpclient.DialFunc
	// Cursor names the destination's cursors (one per signal); empty
	// means CursorName(Name), which a store opened with HoldPrefix
	// CursorPrefix holds. replay names its own (-cursor).
	Cursor string
	// NoCursor reads the log from its oldest record without a cursor:
	// nothing is committed and every run starts over (replay without
	// -cursor).
	NoCursor bool
	// scheme is the URL's, for String.
	scheme string
}

// SchemeParser reads the URL of a destination that is a storage.Sink:
// host is the URL's host part as written (it may list several
// host:port), q its query, from which it must delete the parameters it
// takes (the others are the common ones: signals, start, timeout,
// retry-*, inflight). It returns the function that opens the sink.
type SchemeParser func(host string, q url.Values) (func(*slog.Logger) (storage.Sink, error), error)

var schemes = map[string]SchemeParser{}

// RegisterScheme makes ParseURL accept scheme, for a destination opened by
// p: how the Kafka forwarder, built only without the nokafka tag, plugs in.
// It is meant for init functions.
func RegisterScheme(scheme string, p SchemeParser) { schemes[scheme] = p }

// defaultSignals are what a destination gets without signals=: the stable
// OTLP signals. Profiles (v1development) are opt-in, signals=...,profiles:
// a receiver without them answers UNIMPLEMENTED or 404, which would hold a
// destination in state failing.
var defaultSignals = []storage.Signal{storage.Traces, storage.Metrics, storage.Logs}

// Parse reads a -forward flag's value, "NAME=URL"; see ParseURL. A value
// without "=" is not quoted in the error: it may be a credential that white
// space split off a URL (in OTLP_LITE_FORWARD, which separates values by
// it).
func Parse(flag string) (Destination, error) {
	name, raw, ok := strings.Cut(flag, "=")
	if !ok {
		return Destination{}, errors.New("invalid -forward value (not shown: it has no NAME=): want NAME=URL, for example otel=grpc://collector:4317; a space in a URL is written %20")
	}
	return ParseURL(name, raw)
}

// ParseURL reads a destination's URL: the scheme picks the protocol and
// TLS, the host and port are the endpoint, the query carries the rest:
//
//	grpc:// grpcs://      OTLP/gRPC (h2c, TLS)
//	stream:// streams://  otlp-lite stream mode (h2c, TLS)
//	http:// https://      OTLP/HTTP; a path is a prefix of /v1/traces ...
//
// after which comes host:port, or unix:PATH (unix:///ABS/PATH) for a Unix
// socket (otlpclient.ParseEndpoint), which takes the whole path up to the
// query: grpc://unix:/run/otlp.sock?compression=none.
//
//	signals=traces,metrics,logs,profiles (default traces,metrics,logs)
//	compression=gzip|zstd|none    (default gzip; zstd not over HTTP)
//	encoding=protobuf|json        (HTTP only; default protobuf)
//	header=Name:Value             (repeatable)
//	tenant-header=X-Scope-OrgID   (grpc, http: each record's tenant)
//	start=oldest|now              (for a new cursor; default oldest)
//	timeout=10s                   (each attempt)
//	retry-initial-backoff=500ms retry-max-backoff=30s
//	inflight=N                    (default 256 for stream, 8 otherwise)
//	tls-ca=FILE tls-cert=FILE tls-key=FILE tls-server-name=NAME
//	insecure-skip-verify=true     (TLS schemes only)
//
// Every error is one line naming the destination and the parameter, and
// shows none of the URL's secrets (package redact decides which: the
// userinfo, credential headers, secret parameters), which are registered
// with package redact as soon as they are read, valid or not, so that no
// other output shows them either.
func ParseURL(name, raw string) (Destination, error) {
	secrets := redact.URLSecrets(name + "=" + raw)
	redact.Register(secrets...)
	if checkName(name) != nil {
		// What came before the first "=" is not a name: it may be part
		// of a URL or a credential (white space split off), never shown.
		return Destination{}, errors.New("invalid -forward value: invalid destination name (what comes before the first \"=\", not shown): want NAME=URL, NAME 1 to 64 of [A-Za-z0-9_-]")
	}
	return parseURLFor("-forward "+name, name, raw, secrets)
}

// ParseEndpointURL reads the URL of an endpoint that a flag other than
// -forward names, in a destination's URL language (ParseURL) and with its
// secrets kept out of every output as ParseURL keeps them: an error names
// flag. The destination is named name.
func ParseEndpointURL(flag, name, raw string) (Destination, error) {
	secrets := redact.URLSecrets(raw)
	redact.Register(secrets...)
	return parseURLFor(flag, name, raw, secrets)
}

func parseURLFor(flag, name, raw string, secrets []string) (Destination, error) {
	d, err := parseURL(name, raw)
	if err != nil {
		return Destination{}, errors.New(redact.Line(redact.Hide(fmt.Sprintf("invalid %s: %v", flag, err), secrets...)))
	}
	return d, nil
}

func parseURL(name, raw string) (Destination, error) {
	if err := checkName(name); err != nil {
		return Destination{}, err
	}
	raw, socket, err := cutSocket(raw)
	if err != nil {
		return Destination{}, err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Destination{}, fmt.Errorf("cannot parse URL: %v", err)
	}
	d := Destination{
		Name:        name,
		Compression: compression.Gzip,
		Signals:     defaultSignals,
		Timeout:     DefaultTimeout,
		Backoff:     otlpclient.Backoff{Initial: DefaultInitialBackoff, Max: DefaultMaxBackoff},
	}
	secure := false
	switch u.Scheme {
	case "grpc", "grpcs":
		d.Protocol, secure = GRPC, u.Scheme == "grpcs"
	case "stream", "streams":
		d.Protocol, secure = Stream, u.Scheme == "streams"
	case "http", "https":
		d.Protocol, secure = HTTP, u.Scheme == "https"
	default:
		parse, ok := schemes[u.Scheme]
		if !ok {
			return Destination{}, fmt.Errorf("unknown scheme %q: want grpc, grpcs, stream, streams, http or https%s", u.Scheme, extraSchemes())
		}
		return parseSinkURL(d, u, parse)
	}
	if u.User != nil {
		return Destination{}, errors.New("user info in the URL is not supported: send credentials with header=Authorization:...")
	}
	if u.Fragment != "" {
		return Destination{}, errors.New("the URL has a fragment (#...): remove it")
	}
	if socket != "" {
		// The socket's path is the URL's, so its %-escapes are
		// decoded as a path's are (grpc-go decodes unix:///PATH too):
		// a space, which splits OTLP_LITE_FORWARD's values, is %20.
		path, err := url.PathUnescape(strings.TrimPrefix(socket, "unix:"))
		if err != nil {
			return Destination{}, fmt.Errorf("cannot parse URL: the socket path has a bad %%-escape: %v", err)
		}
		ep, err := otlpclient.ParseEndpoint("unix:" + path)
		if err != nil {
			return Destination{}, err
		}
		d.Endpoint = ep.String()
	} else {
		if u.Port() == "" || u.Hostname() == "" {
			return Destination{}, fmt.Errorf("%q has no host:port (or unix:PATH)", raw)
		}
		if _, err := strconv.ParseUint(u.Port(), 10, 16); err != nil {
			return Destination{}, fmt.Errorf("bad port %q", u.Port())
		}
		d.Endpoint = net.JoinHostPort(u.Hostname(), u.Port())
	}
	if p := strings.TrimSuffix(u.Path, "/"); p != "" {
		if d.Protocol != HTTP {
			return Destination{}, fmt.Errorf("a path (%s) is only for http:// and https://", u.Path)
		}
		d.Path = p
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Destination{}, fmt.Errorf("cannot parse the query: %v", err)
	}
	var tlsFiles struct{ ca, cert, key, serverName string }
	skipVerify := false
	for key, vals := range q {
		if key != "header" && len(vals) > 1 {
			return Destination{}, fmt.Errorf("%s is given %d times", key, len(vals))
		}
		v := vals[0]
		if ok, err := d.common(key, v); ok || err != nil {
			if err != nil {
				return Destination{}, err
			}
			continue
		}
		switch key {
		case "compression":
			switch v {
			case "gzip":
				d.Compression = compression.Gzip
			case "zstd":
				d.Compression = compression.Zstd
			case "none":
				d.Compression = compression.Identity
			default:
				return Destination{}, fmt.Errorf("compression=%s: want gzip, zstd or none", v)
			}
		case "stream-compression":
			if d.Protocol != Stream {
				return Destination{}, fmt.Errorf("stream-compression=%s is only for stream:// and streams://", v)
			}
			switch v {
			case "zstd":
				d.DisableStreamCompression, d.DisableStreamColumns = false, true
			case "zstd+columns":
				d.DisableStreamCompression, d.DisableStreamColumns = false, false
			case "none":
				d.DisableStreamCompression = true
			default:
				return Destination{}, fmt.Errorf("stream-compression=%s: want zstd+columns (the default: stateful zstd and the columnar transform under it, as far as the server accepts them), zstd (stateful zstd alone) or none", v)
			}
		case "tenant-header":
			if v == "" || strings.ContainsAny(v, " \t\r\n:") {
				return Destination{}, fmt.Errorf("tenant-header=%s: want a header name such as X-Scope-OrgID", v)
			}
			d.TenantHeader = v
		case "encoding":
			switch v {
			case "protobuf":
				d.JSON = false
			case "json":
				d.JSON = true
			default:
				return Destination{}, fmt.Errorf("encoding=%s: want protobuf or json", v)
			}
		case "header":
			if d.Header == nil {
				d.Header = http.Header{}
			}
			for _, h := range vals {
				k, val, ok := strings.Cut(h, ":")
				k = strings.TrimSpace(k)
				if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(val, "\r\n") {
					return Destination{}, fmt.Errorf("header=%s: want Name:Value", h)
				}
				d.Header.Add(k, strings.TrimSpace(val))
			}
		case "tls-ca":
			tlsFiles.ca = v
		case "tls-cert":
			tlsFiles.cert = v
		case "tls-key":
			tlsFiles.key = v
		case "tls-server-name":
			tlsFiles.serverName = v
		case "insecure-skip-verify":
			if skipVerify, err = strconv.ParseBool(v); err != nil {
				return Destination{}, fmt.Errorf("insecure-skip-verify=%s: want true or false", v)
			}
		default:
			return Destination{}, fmt.Errorf("unknown parameter %q: want signals, compression, encoding, header, tenant-header, start, timeout, retry-initial-backoff, retry-max-backoff, inflight, tls-ca, tls-cert, tls-key, tls-server-name or insecure-skip-verify", key)
		}
	}
	if d.Backoff.Initial > d.Backoff.Max {
		return Destination{}, fmt.Errorf("retry-initial-backoff (%v) is more than retry-max-backoff (%v)", d.Backoff.Initial, d.Backoff.Max)
	}
	if d.Protocol == Stream && d.TenantHeader != "" {
		return Destination{}, errors.New("tenant-header is for grpc and http: a stream's headers are sent once for all its records")
	}
	if d.Protocol != HTTP && d.JSON {
		return Destination{}, errors.New("encoding=json is only for http:// and https://")
	}
	if d.Protocol == HTTP && d.Compression == compression.Zstd {
		// OTLP v1.11 "OTLP/HTTP Request" names gzip only.
		return Destination{}, errors.New("compression=zstd is not part of OTLP/HTTP: use gzip or none")
	}
	if d.InFlight == 0 {
		d.InFlight = DefaultUnaryInFlight
		if d.Protocol == Stream {
			d.InFlight = DefaultStreamInFlight
		}
	}
	if !secure {
		if tlsFiles != (struct{ ca, cert, key, serverName string }{}) || skipVerify {
			return Destination{}, fmt.Errorf("TLS parameters need a TLS scheme (%ss://)", strings.TrimSuffix(u.Scheme, "s"))
		}
		return d, nil
	}
	d.TLS, err = clientTLS(d.Endpoint, tlsFiles.ca, tlsFiles.cert, tlsFiles.key, tlsFiles.serverName, skipVerify)
	return d, err
}

// cutSocket takes a Unix socket endpoint out of raw, a destination URL
// written SCHEME://unix:PATH[?QUERY] (PATH as otlpclient.ParseEndpoint
// reads it, unix:///ABS/PATH included): it returns raw with the socket
// replaced by the host UnixAuthority, for url.Parse to read the scheme
// and query, and "unix:PATH"; raw itself and "" for a URL without one. A
// socket's path takes the URL's whole path, so such a URL has no path
// prefix.
//
// A URL whose authority (what comes before the first /, ? or #) is a
// host named unix keeps the meaning it had before sockets: with user
// info (unix:PASSWORD@host:port) it is no socket, and url.Parse reads it
// (user info is refused, its password never becomes a path shown
// wherever the destination is); unix:PORT, host unix and port PORT, is
// refused, since an endpoint unix:PORT is the socket ./PORT (grpc-go's
// reading, ParseEndpoint's) and would be dialed as such.
func cutSocket(raw string) (string, string, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || !strings.HasPrefix(rest, "unix:") {
		return raw, "", nil
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if strings.Contains(authority, "@") {
		return raw, "", nil
	}
	if port := strings.TrimPrefix(authority, "unix:"); port != "" && strings.Trim(port, "0123456789") == "" {
		return "", "", fmt.Errorf("%s://unix:%s is ambiguous: for a socket, write its path, unix:./%s or unix:/ABSOLUTE/PATH; for a host named unix, its address or full name", scheme, port, port)
	}
	socket, query, hasQuery := strings.Cut(rest, "?")
	raw = scheme + "://" + otlpclient.UnixAuthority
	if hasQuery {
		raw += "?" + query
	}
	return raw, socket, nil
}

// parseSinkURL reads a registered scheme's URL: the parser takes its own
// parameters, the common ones are read here.
func parseSinkURL(d Destination, u *url.URL, parse SchemeParser) (Destination, error) {
	d.Protocol, d.scheme, d.Endpoint = Sink, u.Scheme, u.Host
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Destination{}, fmt.Errorf("cannot parse the query: %v", err)
	}
	if d.OpenSink, err = parse(u.Host, q); err != nil {
		return Destination{}, err
	}
	for key, vals := range q {
		if len(vals) > 1 {
			return Destination{}, fmt.Errorf("%s is given %d times", key, len(vals))
		}
		v := vals[0]
		ok, err := d.common(key, v)
		if err != nil {
			return Destination{}, err
		}
		if !ok {
			return Destination{}, fmt.Errorf("unknown parameter %q for %s://", key, u.Scheme)
		}
	}
	if d.Backoff.Initial > d.Backoff.Max {
		return Destination{}, fmt.Errorf("retry-initial-backoff (%v) is more than retry-max-backoff (%v)", d.Backoff.Initial, d.Backoff.Max)
	}
	if d.InFlight == 0 {
		d.InFlight = DefaultUnaryInFlight
	}
	return d, nil
}

// common reads a parameter every destination takes: signals, start,
// timeout, retry-initial-backoff, retry-max-backoff, inflight. ok is false
// for another key.
func (d *Destination) common(key, v string) (ok bool, err error) {
	switch key {
	case "signals":
		d.Signals, err = parseSignals(v)
	case "start":
		switch v {
		case "oldest":
			d.Start = disk.StartOldest
		case "now":
			d.Start = disk.StartEnd
		default:
			err = fmt.Errorf("start=%s: want oldest or now", v)
		}
	case "timeout", "retry-initial-backoff", "retry-max-backoff":
		t, perr := time.ParseDuration(v)
		if perr != nil || t <= 0 {
			return true, fmt.Errorf("%s=%s: want a positive duration such as 10s", key, v)
		}
		switch key {
		case "timeout":
			d.Timeout = t
		case "retry-initial-backoff":
			d.Backoff.Initial = t
		default:
			d.Backoff.Max = t
		}
	case "inflight":
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 || n > maxInFlight {
			return true, fmt.Errorf("inflight=%s: want 1 to %d", v, maxInFlight)
		}
		d.InFlight = n
	default:
		return false, nil
	}
	return true, err
}

func extraSchemes() string {
	var s string
	for name := range schemes {
		s += " or " + name
	}
	return s
}

// clientTLS builds the TLS configuration of a destination, loading its
// files now so that a wrong path is an error at start, not at the first
// send. The server name is otlpclient.ServerName's: tls-server-name, else
// the endpoint's host (a socket has none: then tls-server-name is needed).
func clientTLS(endpoint, caFile, certFile, keyFile, serverName string, skipVerify bool) (*tls.Config, error) {
	serverName, err := otlpclient.ServerName(endpoint, serverName, skipVerify)
	if err != nil {
		return nil, fmt.Errorf("%w: add tls-server-name=NAME", err)
	}
	c, err := otlpclient.ClientTLS(otlpclient.TLSFiles{CAFile: caFile, CertFile: certFile, KeyFile: keyFile, ServerName: serverName, InsecureSkipVerify: skipVerify})
	if err != nil {
		return nil, fmt.Errorf("tls-ca/tls-cert/tls-key: %w", err)
	}
	return c, nil
}

func parseSignals(v string) ([]storage.Signal, error) {
	var sigs []storage.Signal
	for s := range strings.SplitSeq(v, ",") {
		sig, err := storage.ParseSignal(strings.TrimSpace(s))
		if err != nil || !slices.Contains(storage.Signals, sig) {
			return nil, fmt.Errorf("signals=%s: want a list of traces, metrics, logs and profiles", v)
		}
		if !slices.Contains(sigs, sig) {
			sigs = append(sigs, sig)
		}
	}
	return sigs, nil
}

func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("invalid destination name %q: want 1 to 64 of [A-Za-z0-9_-]", name)
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("invalid destination name %q: want 1 to 64 of [A-Za-z0-9_-]", name)
		}
	}
	return nil
}

// cursor is the name of the destination's cursors.
func (d *Destination) cursor() string {
	if d.Cursor != "" {
		return d.Cursor
	}
	return CursorName(d.Name)
}

// String is the destination without its query (which may carry
// credentials in headers): for logs and stats.
func (d *Destination) String() string {
	if d.Protocol == Sink {
		return d.scheme + "://" + d.Endpoint
	}
	scheme := d.Protocol.String()
	if d.TLS != nil {
		scheme += "s"
	}
	return scheme + "://" + d.Endpoint + d.Path
}
