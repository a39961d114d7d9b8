package interop

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otlp-lite/otlp-lite/storage"
)

// Loopback addresses of the three parties (Linux answers on all of
// 127/8): the client, HAProxy's side towards otlp-lite (the one trusted
// peer), and the untrusted rest (127.0.0.1, where the readiness check
// comes from).
const (
	clientIP = "127.0.0.2"
	proxyIP  = "127.0.0.3"
)

// dialFrom dials TCP from the local address ip and records the local
// address of each connection in conns.
func dialFrom(ip string, conns chan<- string) func(ctx context.Context, addr string) (net.Conn, error) {
	return func(ctx context.Context, addr string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conns <- c.LocalAddr().String()
		}
		return c, err
	}
}

// TestHAProxyProxyProtocol: HAProxy (Debian's package; `make haproxy`
// installs it) relays OTLP/gRPC to otlp-lite with send-proxy (v1) and
// send-proxy-v2, from the one address trusted by
// -proxy-protocol-trusted-cidrs. The request log names the client's own
// address and port, not HAProxy's; a client that forges a header from an
// untrusted address is refused, counted, and its address never logged.
func TestHAProxyProxyProtocol(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed (make haproxy installs Debian's package as root): the PROXY protocol is tested with hand-written headers in ./server only")
	}
	dataDir := t.TempDir()
	addr, adminAddr := freeAddr(t), freeAddr(t)
	srv := startServerAt(t, dataDir, addr, "-grpc-addr", addr, "-admin-addr", adminAddr, "-log-level", "debug",
		"-proxy-protocol-trusted-cidrs", proxyIP+"/32")

	v1, v2 := freeAddr(t), freeAddr(t)
	cfg := fmt.Sprintf(`global
    maxconn 100
defaults
    mode tcp
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend v1
    bind %s
    default_backend v1
frontend v2
    bind %s
    default_backend v2
backend v1
    server otlp %s send-proxy source %s
backend v2
    server otlp %s send-proxy-v2 source %s
`, v1, v2, addr, proxyIP, addr, proxyIP)
	cfgPath := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	hap := exec.Command(bin, "-f", cfgPath, "-db")
	var hlog syncBuffer
	hap.Stdout, hap.Stderr = &hlog, &hlog
	if err := hap.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hap.Process.Kill()
		hap.Wait()
		if t.Failed() {
			t.Logf("haproxy:\n%s", hlog.String())
		}
	})
	for _, a := range []string{v1, v2} {
		waitListening(t, a)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conns := make(chan string, 10)
	var sent []*coltracepb.ExportTraceServiceRequest
	clientAddrs := map[string]string{}
	for i, front := range []string{v1, v2} {
		conn, err := grpc.NewClient(front, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(dialFrom(clientIP, conns)))
		if err != nil {
			t.Fatal(err)
		}
		req := traceRequest(testSpan(fmt.Sprintf("through-haproxy-v%d", i+1), byte(i+1)))
		if _, err := coltracepb.NewTraceServiceClient(conn).Export(ctx, req); err != nil {
			t.Fatalf("Export through HAProxy (PROXY v%d): %v", i+1, err)
		}
		conn.Close()
		sent = append(sent, req)
		clientAddrs[fmt.Sprintf("v%d", i+1)] = <-conns
	}

	// A client that is not the trusted proxy sends a header naming
	// someone else: refused before any request.
	forged, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(forged, "PROXY TCP4 203.0.113.66 10.0.0.1 6666 4317\r\nPRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	forged.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(forged); err != nil {
		t.Fatalf("forged header: %v, want the connection closed", err)
	}
	forged.Close()
	metrics := scrapeMetrics(t, adminAddr)
	srv.stop()

	log := srv.stderr.String()
	for v, a := range clientAddrs {
		if !strings.HasPrefix(a, clientIP+":") || !strings.Contains(log, "msg=request peer="+a+" transport=grpc") {
			t.Errorf("PROXY %s: no request log line with the client's address %s", v, a)
		}
	}
	if strings.Contains(log, "peer="+proxyIP) || strings.Contains(log, "203.0.113.66") {
		t.Errorf("the log names HAProxy's address or the forged one:\n%s", log)
	}
	// The readiness probes of HAProxy's ports count headers too.
	for _, want := range []string{
		`otlplite_proxy_protocol_headers_total{version="1"} [1-9]`,
		`otlplite_proxy_protocol_headers_total{version="2"} [1-9]`,
		`otlplite_proxy_protocol_refused_total{reason="untrusted"} 1\n`,
		`otlplite_proxy_protocol_refused_total{reason="missing"} 0\n`,
	} {
		if !regexp.MustCompile(regexp.QuoteMeta(want[:strings.LastIndexByte(want, ' ')]) + want[strings.LastIndexByte(want, ' '):]).MatchString(metrics) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	stored := scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	matchMessages(t, "traces through HAProxy", sent, stored)
}

// waitListening waits until addr accepts connections.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not listening after %v: %v", addr, readyTimeout, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a child process's port: no event to wait on
	}
}
