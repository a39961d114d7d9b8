package otlpclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlp"
)

func TestParseEndpoint(t *testing.T) {
	long := "/" + strings.Repeat("d", maxSocketPath)
	for _, tc := range []struct {
		in      string
		want    Endpoint
		wantErr string
	}{
		{in: "localhost:4317", want: Endpoint{"tcp", "localhost:4317"}},
		{in: "[::1]:4317", want: Endpoint{"tcp", "[::1]:4317"}},
		{in: "unix:/run/otlp.sock", want: Endpoint{"unix", "/run/otlp.sock"}},
		{in: "unix:otlp.sock", want: Endpoint{"unix", "otlp.sock"}},
		{in: "unix:///run/otlp.sock", want: Endpoint{"unix", "/run/otlp.sock"}},
		{in: "unix://host/run/otlp.sock", wantErr: "names a host"},
		{in: "unix:", wantErr: "socket path is empty"},
		{in: "unix://", wantErr: "names a host"},
		{in: "unix:" + long, wantErr: "more than the 107"},
		{in: "unix:/run/otlp.sock?x=1", wantErr: "control character, ? or #"},
		{in: "unix:/run/a\nb.sock", wantErr: "control character, ? or #"},
		{in: "localhost", wantErr: "missing port in address"},
		{in: ":4317", want: Endpoint{"tcp", ":4317"}}, // the local system, as net.Dial and before unix:
		{in: "localhost:", wantErr: "no port"},
		{in: "http://localhost:4317", wantErr: "it is a URL"},
	} {
		got, err := ParseEndpoint(tc.in)
		if tc.wantErr != "" {
			var ee *EndpointError
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &ee) ||
				!strings.HasPrefix(err.Error(), "cannot parse endpoint ") {
				t.Errorf("ParseEndpoint(%q) = %v, %v; want an *EndpointError with %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseEndpoint(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if e, _ := ParseEndpoint("unix:///run/otlp.sock"); e.String() != "unix:/run/otlp.sock" || e.Authority() != UnixAuthority {
		t.Errorf("String %q, Authority %q", e.String(), e.Authority())
	}
}

// TestServerName: one rule for flags and URLs: the explicit name, else the
// endpoint's host; a socket has no host, so TLS to one needs the name
// (unless nothing is verified).
func TestServerName(t *testing.T) {
	for _, tc := range []struct {
		endpoint, explicit string
		skip               bool
		want, wantErr      string
	}{
		{endpoint: "collector:4317", want: "collector"},
		{endpoint: "[::1]:4317", want: "::1"},
		{endpoint: "collector:4317", explicit: "otel.example", want: "otel.example"},
		{endpoint: "unix:/run/otlp.sock", explicit: "otel.example", want: "otel.example"},
		{endpoint: "unix:/run/otlp.sock", skip: true, want: ""},
		{endpoint: "unix:/run/otlp.sock", wantErr: "cannot verify the server of unix:/run/otlp.sock: a socket path names no host"},
		{endpoint: "collector", wantErr: "cannot parse endpoint"},
		// No host, no name to check: refused here, not by crypto/tls at
		// the handshake ("either ServerName or InsecureSkipVerify must
		// be specified"), nor checked against a name nobody chose.
		{endpoint: ":4317", wantErr: "cannot verify the server of :4317: it names no host"},
		{endpoint: ":4317", skip: true, want: ""},
		{endpoint: ":4317", explicit: "otel.example", want: "otel.example"},
	} {
		got, err := ServerName(tc.endpoint, tc.explicit, tc.skip)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ServerName(%q, %q) = %q, %v; want error %q", tc.endpoint, tc.explicit, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ServerName(%q, %q) = %q, %v; want %q", tc.endpoint, tc.explicit, got, err, tc.want)
		}
	}
}

// socketPath returns a socket path inside t.TempDir(), or skips the test
// if that directory is too long for a socket address.
func socketPath(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "r.sock")
	if len(p) > maxSocketPath {
		t.Skipf("t.TempDir() gives a socket path of %d bytes, more than the %d a Unix socket address holds (set TMPDIR to a shorter directory)", len(p), maxSocketPath)
	}
	return p
}

// hostLog records the Host (HTTP/2 :authority) of every request.
type hostLog struct {
	h     http.Handler
	mu    sync.Mutex
	hosts map[string]int
}

func (l *hostLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.hosts[r.Host]++
	l.mu.Unlock()
	l.h.ServeHTTP(w, r)
}

// startUnixServer serves h over HTTP/1.1 and h2c on a socket in
// t.TempDir() and returns the endpoint "unix:PATH".
func startUnixServer(t *testing.T, h http.Handler) string {
	t.Helper()
	path := socketPath(t)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "unix:" + path
}

// TestUnixEndpoint sends over a Unix socket with every exporter: unary
// gRPC (its own client, and one delayed by Latency), the stream, OTLP/HTTP,
// and a client shared by exporters (NewHTTPClientFor); every request is
// stored, each with the authority "localhost".
func TestUnixEndpoint(t *testing.T) {
	sink := newCountSink()
	log := &hostLog{h: newHandler(sink, handler.StreamConfig{}), hosts: map[string]int{}}
	endpoint := startUnixServer(t, log)
	ctx := context.Background()
	n := uint64(0)
	next := func() []byte { n++; return testRequest(n, 3) }

	var dialed []string
	var mu sync.Mutex
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, network+" "+addr)
		mu.Unlock()
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	u := NewUnaryExporter(Config{Endpoint: endpoint, DialContext: dial})
	if err := u.Export(ctx, next()); err != nil {
		t.Fatalf("unary: %v", err)
	}
	if path := strings.TrimPrefix(endpoint, "unix:"); len(dialed) != 1 || dialed[0] != "unix "+path {
		t.Fatalf("DialContext asked for %q, want [unix %s]", dialed, path)
	}

	// The delaying dialer works for a socket as for TCP: a request
	// takes at least one added round trip (a lower bound, not a speed).
	const rtt = 100 * time.Millisecond
	slow := NewUnaryExporter(Config{Endpoint: "unix://" + strings.TrimPrefix(endpoint, "unix:"), Latency: rtt})
	start := time.Now()
	if err := slow.Export(ctx, next()); err != nil {
		t.Fatalf("unary with latency: %v", err)
	}
	if d := time.Since(start); d < rtt {
		t.Fatalf("a request with %v added took %v: the delaying dialer was not used", rtt, d)
	}

	s := NewStreamExporter(StreamConfig{Config: Config{Endpoint: endpoint, Latency: 20 * time.Millisecond}})
	o := newOutcomes()
	for range 5 {
		req := next()
		if err := s.Send(ctx, req, o.done(requestNumber(req))); err != nil {
			t.Fatal(err)
		}
	}
	closeExporter(t, s)

	h := NewHTTPExporter(HTTPConfig{Config: Config{Endpoint: endpoint}, URL: "http://" + AuthorityOf(endpoint) + "/v1/traces"})
	if _, err := h.ExportResult(ctx, next()); err != nil {
		t.Fatalf("OTLP/HTTP: %v", err)
	}

	shared := NewHTTPClientFor(endpoint, nil, 0, 0)
	for range 2 {
		if err := NewUnaryExporter(Config{Endpoint: endpoint, HTTP: shared}).Export(ctx, next()); err != nil {
			t.Fatalf("shared client: %v", err)
		}
	}

	counts := sink.counts()
	for i := uint64(1); i <= n; i++ {
		if counts[i] != 1 {
			t.Fatalf("request %d stored %d times (all: %v)", i, counts[i], counts)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.hosts) != 1 || log.hosts[UnixAuthority] == 0 {
		t.Fatalf("requests' hosts %v, want all %q", log.hosts, UnixAuthority)
	}
}

// TestUnixEndpointTLS: TLS over a socket checks the name of the TLS
// configuration (the socket's path is no name): the right one connects,
// a wrong one is refused by the certificate check.
func TestUnixEndpointTLS(t *testing.T) {
	path := socketPath(t)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	sink := newCountSink()
	srv := httptest.NewUnstartedServer(newHandler(sink, handler.StreamConfig{}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())

	good := NewUnaryExporter(Config{Endpoint: "unix:" + path, TLS: &tls.Config{RootCAs: roots, ServerName: "example.com"}})
	if err := good.Export(context.Background(), testRequest(1, 1)); err != nil {
		t.Fatalf("TLS over the socket: %v", err)
	}
	bad := NewUnaryExporter(Config{Endpoint: "unix:" + path, TLS: &tls.Config{RootCAs: roots, ServerName: "other.example"}, RequestTimeout: 300 * time.Millisecond, Backoff: Backoff{Initial: time.Millisecond, Max: time.Millisecond}})
	err = bad.Export(context.Background(), testRequest(2, 1))
	if err == nil || !strings.Contains(err.Error(), "certificate is valid for example.com") {
		t.Fatalf("a wrong server name: %v, want the certificate check's refusal", err)
	}
	if c := sink.counts(); len(c) != 1 || c[1] != 1 {
		t.Fatalf("stored %v, want request 1 once", c)
	}
}

// TestUnixEndpointBad: a malformed unix: endpoint fails each request with
// the reason, and the socket that is not there says so.
func TestUnixEndpointBad(t *testing.T) {
	u := NewUnaryExporter(Config{Endpoint: "unix://host/x.sock", RequestTimeout: time.Second, Backoff: Backoff{Initial: time.Millisecond, Max: time.Millisecond}})
	err := u.Export(context.Background(), testRequest(1, 1))
	if err == nil || !strings.Contains(err.Error(), "cannot parse endpoint") {
		t.Fatalf("malformed endpoint: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "none.sock")
	h := NewHTTPExporter(HTTPConfig{Config: Config{Endpoint: "unix:" + missing, Signal: otlp.Traces, RequestTimeout: time.Second, Backoff: Backoff{Initial: time.Millisecond, Max: time.Millisecond}}, URL: "http://localhost/v1/traces"})
	_, err = h.ExportResult(context.Background(), testRequest(1, 1))
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("missing socket: %v, want the error to name %s", err, missing)
	}
}

// FuzzParseEndpoint: any string is an endpoint that prints back to one
// that parses the same, or an *EndpointError on one line; never a panic.
// Seeds: testdata/fuzz/FuzzParseEndpoint.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"localhost:4317", "unix:/run/otlp.sock", "unix:///run/otlp.sock", "unix://h/x", "unix:", "[::1]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseEndpoint(s)
		if err != nil {
			if _, ok := errors.AsType[*EndpointError](err); !ok || strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseEndpoint(%q): %v", s, err)
			}
			return
		}
		again, err := ParseEndpoint(e.String())
		if err != nil || again != e || (e.Network != "tcp" && e.Network != "unix") || e.Authority() == "" {
			t.Fatalf("ParseEndpoint(%q) = %+v; its String parses to %+v, %v", s, e, again, err)
		}
		if e.IsUnix() && (len(e.Address) > maxSocketPath || strings.ContainsRune(e.Address, 0)) {
			t.Fatalf("ParseEndpoint(%q) accepted socket path %q", s, e.Address)
		}
	})
}

// TestUnixEndpointStaysOnTheSocket: nothing sends a socket endpoint's data
// elsewhere. A server that answers 307 with a Location on a TCP listener
// gets its one request and an error back, for OTLP/HTTP and gRPC alike
// (redirects are never followed, and a socket's dialer dials the socket
// whatever address it is asked); and the socket's clients use no proxy
// (their transports have no Proxy, so HTTP_PROXY is never read).
func TestUnixEndpointStaysOnTheSocket(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got["tcp"]++
		mu.Unlock()
	}))
	defer other.Close()
	endpoint := startUnixServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got["socket"]++
		mu.Unlock()
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	ctx := context.Background()
	h := NewHTTPExporter(HTTPConfig{Config: Config{Endpoint: endpoint}, URL: "http://" + AuthorityOf(endpoint) + "/v1/traces"})
	if _, err := h.ExportResult(ctx, testRequest(1, 1)); err == nil {
		t.Error("OTLP/HTTP: a 307 was taken as success")
	}
	u := NewUnaryExporter(Config{Endpoint: endpoint, RequestTimeout: 5 * time.Second})
	if err := u.Export(ctx, testRequest(2, 1)); err == nil {
		t.Error("gRPC: a 307 was taken as success")
	}
	mu.Lock()
	if got["tcp"] != 0 || got["socket"] < 2 {
		t.Errorf("requests: %v; want every one on the socket, none on the Location's listener", got)
	}
	mu.Unlock()
	for name, c := range map[string]*http.Client{
		"NewHTTPClientFor":            NewHTTPClientFor(endpoint, nil, 0, 0),
		"NewHTTP1Client+DialEndpoint": NewHTTP1Client(nil, DialEndpoint(endpoint, nil)),
	} {
		if tr, ok := c.Transport.(*http.Transport); !ok || tr.Proxy != nil {
			t.Errorf("%s: transport %T with a Proxy: a socket's data could go to HTTP_PROXY", name, c.Transport)
		}
	}
}
