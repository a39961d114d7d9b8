package otlpclient

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// Config is what every exporter needs to reach a receiver.
type Config struct {
	// Endpoint is the receiver's "host:port", or "unix:PATH" (also
	// "unix:///ABSOLUTE/PATH") for a Unix domain socket, whose requests
	// carry the authority UnixAuthority (ParseEndpoint). Over TLS to a
	// socket, TLS.ServerName is the name checked (empty: UnixAuthority,
	// as grpc-go; ServerName gives the flags' and URLs' rule, which
	// wants it set).
	Endpoint string
	// TLS, if not nil, makes the client speak HTTP/2 over TLS; nil means
	// h2c (HTTP/2 without TLS, what OTLP/gRPC receivers accept with
	// insecure: true).
	TLS *tls.Config
	// Signal selects the service: traces, metrics, logs or profiles (zero
	// means traces).
	Signal Signal
	// Compression compresses each request message (grpc-encoding).
	Compression compression.Codec
	// Latency, if positive, adds this round-trip time to the connection
	// (see Dial). Ignored when HTTP is set.
	Latency time.Duration
	// ReceiveWindow is the client's HTTP/2 receive window for each stream;
	// the connection window is four times it. Zero means 4 MiB. Responses
	// are small (an ExportResponse is ~10 bytes), so this only has to cover
	// the bandwidth-delay product of the response direction; the request
	// direction is governed by the server's windows.
	ReceiveWindow int
	// RequestTimeout bounds how long one request may wait for its
	// acknowledgement, retries included; after it the request is dropped.
	// Zero means 30s; negative means no limit: retry until the caller's
	// context ends.
	RequestTimeout time.Duration
	// AttemptTimeout bounds each attempt of a unary request (one Export
	// call; see Config.Retry), unlike RequestTimeout, which bounds them
	// all; an attempt that runs out fails as retryable (a transport error
	// or DEADLINE_EXCEEDED). For the StreamExporter it is how long a
	// request may wait for its acknowledgement on a stream that
	// acknowledges nothing meanwhile: then the stream is stalled, ended
	// and replaced, its requests resent after a back-off (LastError says
	// so). Zero means no bound but RequestTimeout's for a unary request,
	// DefaultStreamStallTimeout for a stream; negative, none.
	AttemptTimeout time.Duration
	// Backoff paces retries.
	Backoff Backoff
	// OnRetry, if not nil, is called by UnaryExporter and Config.Retry
	// after a retryable failure, with the failure and the wait before the
	// next attempt, from the goroutine of the request, and by
	// StreamExporter after a stream failed (a transport error, a stall, a
	// retryable status), with the wait before the next stream. It must
	// not block.
	OnRetry func(err error, delay time.Duration)
	// HTTP, if not nil, is used instead of a client built from the fields
	// above, for example to share one connection between exporters. It
	// must speak HTTP/2 to Endpoint (for a socket: be built by
	// NewHTTPClientFor or on DialEndpoint).
	HTTP *http.Client
	// DialContext, if not nil, opens the connections of the client built
	// when HTTP is nil, instead of TCP (tests reach an in-memory server
	// with it); for a unix: Endpoint it is asked for the socket (network
	// "unix", address PATH).
	DialContext DialFunc
	// IdempotencyKeys gives each export that has no key of its own
	// (WithIdempotencyKey) a random one (NewIdempotencyKey), sent with
	// every attempt of that export, so that a receiver keeping a window
	// of keys stores it once however often a lost acknowledgement makes
	// it retry. A StreamExporter with it and no ClientID names itself
	// with a random identity. Off, only the caller's keys are sent.
	IdempotencyKeys bool
}

// DialFunc opens a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// DefaultStreamStallTimeout is how long a StreamExporter's request waits
// for its acknowledgement on a stream that acknowledges nothing, when
// Config.AttemptTimeout is zero: a receiver applying backpressure still
// acknowledges within seconds; one silent for this long with requests
// waiting has stalled, and its stream is replaced.
const DefaultStreamStallTimeout = 30 * time.Second

func (c *Config) streamStallTimeout() time.Duration {
	switch {
	case c.AttemptTimeout == 0:
		return DefaultStreamStallTimeout
	case c.AttemptTimeout < 0:
		return 0
	}
	return c.AttemptTimeout
}

func (c *Config) requestTimeout() time.Duration {
	switch {
	case c.RequestTimeout == 0:
		return 30 * time.Second
	case c.RequestTimeout < 0:
		return 0
	}
	return c.RequestTimeout
}

func (c *Config) baseURL() string {
	if c.TLS != nil {
		return "https://" + AuthorityOf(c.Endpoint)
	}
	return "http://" + AuthorityOf(c.Endpoint)
}

func (c *Config) httpClient() *http.Client {
	if c.HTTP != nil {
		return noRedirects(c.HTTP)
	}
	return newHTTPClient(c.TLS, c.Latency, c.ReceiveWindow, DialEndpoint(c.Endpoint, c.DialContext))
}

// Bounds of the connections to a receiver, each against a misbehaving one.
const (
	// maxResponseHeaderBytes bounds a response's headers (and, over
	// HTTP/2, its trailers): an OTLP response's are a few hundred bytes;
	// net/http's default lets a server make each response hold 10 MiB.
	// grpc-go's default is 16 KiB; 64 KiB leaves room for long
	// grpc-message and grpc-status-details-bin values.
	maxResponseHeaderBytes = 64 << 10
	// pingEvery and pingTimeout notice a dead peer (a killed server, a
	// dropped NAT entry, a connection that stalls): an HTTP/2 connection
	// silent for pingEvery is pinged, and closed, to be replaced by a
	// new one, if the ping is not answered within pingTimeout.
	pingEvery   = 10 * time.Second
	pingTimeout = 5 * time.Second
)

// noRedirects returns hc, or a copy of it, that does not follow
// redirects: an OTLP receiver answers its own URL, and following would
// send the request, and the headers WithHeader adds (credentials), to
// wherever the destination points. A 3xx is the answer instead
// (RefusesClient: the URL needs fixing).
func noRedirects(hc *http.Client) *http.Client {
	if hc.CheckRedirect != nil {
		return hc
	}
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// NewHTTPClient returns an HTTP/2-only client (h2c when tlsConfig is nil)
// whose connections get rtt of added round-trip time (none if zero), with
// receiveWindow bytes of HTTP/2 receive window per stream (zero: 4 MiB) and
// four times that per connection. Exporters sharing the result share one
// connection per endpoint, their streams multiplexed on it.
//
// net/http's HTTP/2 client has static windows (no BDP estimator as in
// grpc-go), so the window must be chosen for the largest bandwidth-delay
// product expected: at 200ms, 4 MiB carries 20 MiB/s.
func NewHTTPClient(tlsConfig *tls.Config, rtt time.Duration, receiveWindow int) *http.Client {
	return newHTTPClient(tlsConfig, rtt, receiveWindow, nil)
}

// NewHTTPClientDial is NewHTTPClient whose connections dial opens (nil:
// TCP).
func NewHTTPClientDial(tlsConfig *tls.Config, dial DialFunc) *http.Client {
	return newHTTPClient(tlsConfig, 0, 0, dial)
}

// NewHTTPClientFor is NewHTTPClient for exporters of one endpoint, which
// may be a Unix socket (ParseEndpoint): its connections are dialed by
// DialEndpoint, rtt added to them as to TCP ones.
func NewHTTPClientFor(endpoint string, tlsConfig *tls.Config, rtt time.Duration, receiveWindow int) *http.Client {
	return newHTTPClient(tlsConfig, rtt, receiveWindow, DialEndpoint(endpoint, nil))
}

func newHTTPClient(tlsConfig *tls.Config, rtt time.Duration, receiveWindow int, dial DialFunc) *http.Client {
	if receiveWindow <= 0 {
		receiveWindow = 4 << 20
	}
	if dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	tr := &http.Transport{
		Protocols:         new(http.Protocols),
		TLSClientConfig:   tlsConfig,
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialRTT(ctx, dial, network, addr, rtt)
		},
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		HTTP2: &http.HTTP2Config{
			MaxReceiveBufferPerStream:     receiveWindow,
			MaxReceiveBufferPerConnection: 4 * receiveWindow,
			// A stream exporter keeps one long-lived stream: notice a
			// dead peer instead of waiting on it forever.
			SendPingTimeout: pingEvery,
			PingTimeout:     pingTimeout,
		},
	}
	if tlsConfig == nil {
		tr.Protocols.SetUnencryptedHTTP2(true)
	} else {
		tr.Protocols.SetHTTP2(true)
	}
	return noRedirects(&http.Client{Transport: tr})
}

// WithHeader returns hc with header added to every request (gRPC metadata
// for the gRPC exporters: authentication, tenant ids); hc itself if header
// is empty.
func WithHeader(hc *http.Client, header http.Header) *http.Client {
	if len(header) == 0 {
		return hc
	}
	return wrapTransport(hc, func(base http.RoundTripper) http.RoundTripper {
		return headerTransport{base: base, header: header}
	})
}

// wrapTransport returns a copy of hc whose transport is wrap of hc's
// (http.DefaultTransport when it has none).
func wrapTransport(hc *http.Client, wrap func(base http.RoundTripper) http.RoundTripper) *http.Client {
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	w := *hc
	w.Transport = wrap(base)
	return &w
}

// headerTransport adds header to each request. A RoundTripper must not
// change the request it is given, so it sends a clone.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.header {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// WithTenantHeader returns hc setting header (such as X-Scope-OrgID) on
// each request to the tenant of its context (otlp.WithTenant), for
// requests whose data belongs to a tenant; hc itself if header is empty.
// Only unary requests can carry a tenant each: a stream's headers are sent
// once for all the requests on it.
func WithTenantHeader(hc *http.Client, header string) *http.Client {
	if header == "" {
		return hc
	}
	return wrapTransport(hc, func(base http.RoundTripper) http.RoundTripper {
		return tenantHeaderTransport{base: base, header: header}
	})
}

type tenantHeaderTransport struct {
	base   http.RoundTripper
	header string
}

func (t tenantHeaderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if tenant, ok := otlp.TenantFrom(r.Context()); ok {
		// RoundTrippers must not modify the request they are given.
		r = r.Clone(r.Context())
		r.Header.Set(t.header, tenant)
	}
	return t.base.RoundTrip(r)
}
