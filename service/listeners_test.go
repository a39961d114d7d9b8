package service_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/service"
)

// syncBuffer is a log destination written from the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func unixDial(path string) otlpclient.DialFunc {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}
}

// The OTLP and admin listeners on Unix sockets: an export over gRPC is
// stored, the request log names the client by its process, the admin
// socket answers /readyz, the sockets have -unix-socket-mode, and a clean
// stop removes them.
func TestServiceUnixSockets(t *testing.T) {
	dir := t.TempDir()
	sock, adminSock := filepath.Join(dir, "otlp.sock"), filepath.Join(dir, "admin.sock")
	cfg := testConfig(filepath.Join(dir, "data"))
	cfg.GRPCAddr, cfg.AdminAddr, cfg.UnixSocketMode = "unix:"+sock, "unix:"+adminSock, "0600"
	var log syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc := start(t, cfg)
	if svc.GRPCAddr() != "unix:"+sock || svc.AdminAddr() != "unix:"+adminSock {
		t.Fatalf("addresses %q, %q; want the unix: addresses", svc.GRPCAddr(), svc.AdminAddr())
	}
	for _, p := range []string{sock, adminSock} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v; want mode 0600", p, fi, err)
		}
	}
	e := otlpclient.NewUnaryExporter(otlpclient.Config{Endpoint: "localhost", DialContext: unixDial(sock)})
	req := otlpclient.NewSpanGenerator(3, 2, 1).AppendBatch(nil)
	if err := e.Export(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	admin := &http.Client{Transport: &http.Transport{DialContext: unixDial(adminSock)}}
	resp, err := admin.Get("http://localhost/readyz")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz over the admin socket: %s", resp.Status)
	}
	shutdown(t, svc)
	if got := len(records(t, cfg.DataDir)); got != 1 {
		t.Fatalf("%d records stored, want 1", got)
	}
	peer := regexp.MustCompile(`msg=request peer=unix:pid:` + strconv.Itoa(os.Getpid()) + `,uid:\d+,conn:\d+ `)
	if !peer.MatchString(log.String()) {
		t.Fatalf("no request log line naming the Unix client by its process:\n%s", log.String())
	}
	for _, p := range []string{sock, adminSock} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Fatalf("%s after Shutdown: %v, want it removed", p, err)
		}
	}
}

// The PROXY protocol through the whole receiver: the request log names the
// client the header names, a header from an untrusted peer is refused.
func TestServiceProxyProtocol(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.ProxyProtocolTrustedCIDRs = "127.0.0.0/8"
	var log syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc := start(t, cfg)
	dial := func(header string) otlpclient.DialFunc {
		return func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				_, err = io.WriteString(c, header)
			}
			return c, err
		}
	}
	e := otlpclient.NewUnaryExporter(otlpclient.Config{Endpoint: svc.GRPCAddr(),
		DialContext: dial("PROXY TCP4 198.51.100.23 10.0.0.1 40000 4317\r\n")})
	if err := e.Export(context.Background(), otlpclient.NewSpanGenerator(1, 1, 1).AppendBatch(nil)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "msg=request peer=198.51.100.23:40000 ") {
		t.Fatalf("the request log does not name the PROXY header's client:\n%s", log.String())
	}
	shutdown(t, svc)
	if n := svc.Metrics().GetOrCreateCounter(`otlplite_proxy_protocol_headers_total{version="1"}`).Get(); n == 0 {
		t.Fatal("no v1 header counted")
	}
}

func TestConfigListenerErrors(t *testing.T) {
	for _, c := range []struct {
		set  func(*service.Config)
		want string
	}{
		{func(c *service.Config) { c.GRPCAddr = "unix:" }, "bad -grpc-addr"},
		{func(c *service.Config) { c.AdminAddr = "localhost" }, "bad -admin-addr"},
		{func(c *service.Config) { c.UnixSocketMode = "0999" }, "bad -unix-socket-mode"},
		{func(c *service.Config) { c.UnixSocketMode = "1777" }, "bad -unix-socket-mode"},
		{func(c *service.Config) { c.ProxyProtocolTrustedCIDRs = "10.0.0.1/8" }, "bad -proxy-protocol-trusted-cidrs"},
		{func(c *service.Config) { c.ProxyProtocolTimeout = -1 }, "bad -proxy-protocol-timeout"},
	} {
		cfg := testConfig(t.TempDir())
		c.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate: %v, want %q", err, c.want)
		}
	}
}
