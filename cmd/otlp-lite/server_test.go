package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/metrics"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

func testLimits() httpLimits {
	return httpLimits{maxStreams: 100, streamWindow: 1 << 20, connWindow: 4 << 20, maxFrameSize: 1 << 20,
		maxHeaderBytes: 1 << 20, readHeaderTime: 10 * time.Second, idleTimeout: time.Minute, writeByteTimeout: time.Minute}
}

func startTestServer(t *testing.T, l httpLimits, tlsConfig *tls.Config, auth handler.Authenticator) (string, *connTracker) {
	t.Helper()
	reg := metrics.NewRegistry()
	h := handler.New(handler.Config{Sink: &discard.Sink{}, Metrics: reg, Auth: auth})
	conns := newConnTracker(l.maxConnAge, l.maxConnAgeGrace, reg)
	srv := newHTTPServer(h, l, tlsConfig, conns)
	srv.TLSConfig = tlsConfig
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if tlsConfig != nil {
		go srv.ServeTLS(ln, "", "")
	} else {
		go srv.Serve(ln)
	}
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), conns
}

var healthCheck = []byte{0, 0, 0, 0, 0}

func checkHealth(c *grpcwire.Client, ctx context.Context) error {
	_, err := c.Invoke(ctx, "/grpc.health.v1.Health/Check", nil)
	return err
}

// countConns makes n health checks spaced by gap and returns how many
// distinct connections served them.
func countConns(t *testing.T, c *grpcwire.Client, n int, gap time.Duration) int {
	t.Helper()
	seen := map[string]bool{}
	for range n {
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { seen[info.Conn.LocalAddr().String()] = true },
		})
		if err := checkHealth(c, ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(gap)
	}
	return len(seen)
}

// TestH2CConnectionOutlivesReadHeaderTimeout guards against
// golang/go#80876: an h2c connection in use must not be closed when
// ReadHeaderTimeout expires.
func TestH2CConnectionOutlivesReadHeaderTimeout(t *testing.T) {
	l := testLimits()
	l.readHeaderTime = 300 * time.Millisecond
	addr, _ := startTestServer(t, l, nil, nil)
	if n := countConns(t, grpcwire.NewClient(addr, nil), 10, 150*time.Millisecond); n != 1 {
		t.Fatalf("%d connections for 1.5 s of requests with a 300 ms ReadHeaderTimeout: the h2c connection was dropped", n)
	}
}

func TestMaxConnectionAgeSendsGoaway(t *testing.T) {
	l := testLimits()
	l.maxConnAge = 200 * time.Millisecond
	l.maxConnAgeGrace = time.Second
	addr, _ := startTestServer(t, l, nil, nil)
	if n := countConns(t, grpcwire.NewClient(addr, nil), 8, 100*time.Millisecond); n < 2 {
		t.Fatalf("one connection served 800 ms of requests despite a 200 ms max age")
	}
}

// fakeConn is a net.Conn for connTracker tests: only Close is used.
type fakeConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *fakeConn) Close() error { c.closed.Store(true); return nil }

// acceptFakeConns registers n connections with tr as net/http would when
// accepting them (ConnContext, then StateNew) and returns them with their
// connection contexts.
func acceptFakeConns(tr *connTracker, n int) ([]*fakeConn, []context.Context) {
	conns := make([]*fakeConn, n)
	ctxs := make([]context.Context, n)
	for i := range conns {
		conns[i] = &fakeConn{}
		ctxs[i] = tr.connContext(context.Background(), conns[i])
		tr.track(conns[i], http.StateNew)
	}
	return conns, ctxs
}

// TestMaxConnectionAgeJitterPerConnection: connections accepted at the same
// instant get different deadlines within ±10% of the max age, and every
// request on a connection gets the same answer (close or not) at a given
// time: the one its deadline gives. With the jitter drawn per request,
// repeated requests during the jitter window disagreed.
func TestMaxConnectionAgeJitterPerConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const age = time.Minute
		tr := newConnTracker(age, 20*time.Second, metrics.NewRegistry())
		start := time.Now()
		conns, ctxs := acceptFakeConns(tr, 64)
		deadlines := make([]time.Time, len(conns))
		distinct := map[time.Time]bool{}
		for i, c := range conns {
			d, ok := ctxs[i].Value(connDeadlineKey{}).(time.Time)
			if !ok {
				t.Fatal("no deadline in the connection context")
			}
			if lo, hi := start.Add(age*9/10), start.Add(age*11/10); d.Before(lo) || d.After(hi) {
				t.Fatalf("deadline %v after accept, want %v to %v", d.Sub(start), lo.Sub(start), hi.Sub(start))
			}
			tr.mu.Lock()
			tracked := tr.conns[c]
			tr.mu.Unlock()
			if !tracked.Equal(d) {
				t.Fatalf("closeExpired sees deadline %v, requests see %v", tracked.Sub(start), d.Sub(start))
			}
			deadlines[i] = d
			distinct[d] = true
		}
		if len(distinct) != len(conns) {
			t.Fatalf("%d connections accepted together share %d deadlines", len(conns), len(distinct))
		}

		h := tr.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		closes := func(ctx context.Context) bool {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "POST", "/", nil))
			return rec.Header().Get("Connection") == "close"
		}
		sawMixed := false
		for off := age * 85 / 100; off <= age*115/100; off += age / 100 {
			time.Sleep(time.Until(start.Add(off)))
			n := 0
			for i, ctx := range ctxs {
				want := time.Now().After(deadlines[i])
				for range 8 {
					if got := closes(ctx); got != want {
						t.Fatalf("at %v, connection with deadline %v: close=%v, want %v", off, deadlines[i].Sub(start), got, want)
					}
				}
				if want {
					n++
				}
			}
			sawMixed = sawMixed || (n > 0 && n < len(ctxs))
		}
		if !sawMixed {
			t.Fatal("all connections crossed their deadline in the same step")
		}
	})
}

// TestCloseExpiredUsesConnectionDeadline: closeExpired closes each
// connection on the first tick after its own deadline plus grace, not
// after the largest possible jittered age.
func TestCloseExpiredUsesConnectionDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const age, grace = time.Minute, 20 * time.Second
		tick := grace / 4 // closeExpired's period for this grace
		tr := newConnTracker(age, grace, metrics.NewRegistry())
		start := time.Now()
		conns, ctxs := acceptFakeConns(tr, 64)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { tr.closeExpired(ctx); close(done) }()
		defer func() { cancel(); <-done }() // also on t.Fatal: the bubble must end with no goroutines
		sawMixed := false
		for time.Since(start) <= age*11/10+grace+tick {
			time.Sleep(tick)
			synctest.Wait() // closeExpired has handled this tick
			n := 0
			for i, c := range conns {
				d := ctxs[i].Value(connDeadlineKey{}).(time.Time)
				want := time.Now().After(d.Add(grace))
				if got := c.closed.Load(); got != want {
					t.Fatalf("at %v, connection with deadline %v and grace %v: closed=%v, want %v", time.Since(start), d.Sub(start), grace, got, want)
				}
				if want {
					n++
				}
			}
			sawMixed = sawMixed || (n > 0 && n < len(conns))
		}
		if !sawMixed {
			t.Fatal("all connections were closed on the same tick")
		}
	})
}

func TestPlainHTTP1OnH2CPort(t *testing.T) {
	addr, _ := startTestServer(t, testLimits(), nil, nil)
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || len(body) == 0 {
		t.Fatalf("HTTP/1.1 GET /: %d %q", resp.StatusCode, body)
	}
}

// writeCert writes a certificate signed by parent (self-signed when nil)
// and returns it with its key.
func writeCert(t *testing.T, dir, name string, isCA bool, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  isCA,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	kb, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, key
}

func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := writeCert(t, dir, "ca", true, nil, nil)
	writeCert(t, dir, "server", false, ca, caKey)
	writeCert(t, dir, "client", false, ca, caKey)
	otherCA, otherKey := writeCert(t, dir, "other-ca", true, nil, nil)
	writeCert(t, dir, "stranger", false, otherCA, otherKey)

	cfg, err := serverTLSConfig(tlsOptions{certFile: filepath.Join(dir, "server.crt"), keyFile: filepath.Join(dir, "server.key"),
		clientCAFile: filepath.Join(dir, "ca.crt"), minVersion: "1.2"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := startTestServer(t, testLimits(), cfg, nil)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	client := func(name string) *grpcwire.Client {
		tc := &tls.Config{RootCAs: roots}
		if name != "" {
			pair, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"))
			if err != nil {
				t.Fatal(err)
			}
			tc.Certificates = []tls.Certificate{pair}
		}
		return grpcwire.NewClient(addr, tc)
	}
	if err := checkHealth(client("client"), context.Background()); err != nil {
		t.Fatalf("client with a good certificate: %v", err)
	}
	if err := checkHealth(client(""), context.Background()); err == nil {
		t.Fatal("client without a certificate was served")
	}
	if err := checkHealth(client("stranger"), context.Background()); err == nil {
		t.Fatal("client with a certificate from another CA was served")
	}
}

func TestTLSCertificateReload(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := writeCert(t, dir, "ca", true, nil, nil)
	writeCert(t, dir, "server", false, ca, caKey)
	reloaded := make(chan error, 1)
	r, err := newCertReloader(filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"), func(err error) { reloaded <- err })
	if err != nil {
		t.Fatal(err)
	}
	first, _ := r.GetCertificate(nil)
	time.Sleep(1100 * time.Millisecond) // modification times must differ; checks run at most once a second
	writeCert(t, dir, "server", false, ca, caKey)
	second, _ := r.GetCertificate(nil)
	if err := <-reloaded; err != nil {
		t.Fatal(err)
	}
	if first == second {
		t.Fatal("certificate not reloaded")
	}
}
