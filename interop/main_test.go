// Package interop runs the otlp-lite binary as a child process and drives it
// with real third-party OTLP clients (the OpenTelemetry Go and Python SDKs,
// grpc-go with the official generated OTLP types), then reads the disk store
// back and checks that every acknowledged item arrived unchanged.
//
// The tests build ../cmd/otlp-lite once per `go test` run (see TestMain) and
// start a fresh server on a free port with its own data directory per test.
package interop

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colprofilespb "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// serverBin is the otlp-lite binary built by TestMain.
var serverBin string

// testStart is when this test binary started; no stored record may be
// older.
var testStart = time.Now()

const (
	// readyTimeout bounds how long a started server may take to answer the
	// health check with SERVING.
	readyTimeout = 15 * time.Second
	// stopTimeout bounds the graceful shutdown after SIGTERM; the contract
	// is "flushes and exits 0 within a few seconds".
	stopTimeout = 10 * time.Second
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "otlp-lite-interop-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot create temp dir: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverBin = filepath.Join(dir, "otlp-lite")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", serverBin, "./cmd/otlp-lite")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "cannot build ../cmd/otlp-lite: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// syncBuffer collects a child's stderr while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is one running otlp-lite child process.
type server struct {
	t        testing.TB
	addr     string // gRPC listener (which answers OTLP/HTTP too)
	httpAddr string // OTLP/HTTP listener; "" unless started by startServerHTTP
	dataDir  string
	cmd      *exec.Cmd
	stderr   *syncBuffer
	done     chan struct{} // closed once cmd.Wait returned
	waitErr  error         // valid after done is closed
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("cannot find a free port: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startServer starts `otlp-lite serve` on a free port with the disk store in
// dataDir and waits until its health service reports SERVING. The process is
// killed in t.Cleanup if the test did not stop it, and its stderr is logged
// when the test failed.
func startServer(t testing.TB, dataDir string, extraArgs ...string) *server {
	t.Helper()
	// The free port may be taken between freeAddr and the child's bind;
	// a server that exits before it is ready is retried on another port.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := tryStartServer(t, dataDir, extraArgs)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("cannot start otlp-lite: %v", lastErr)
	return nil
}

// startServerHTTP is startServer with the OTLP/HTTP listener on too, on a
// second free port (server.httpAddr).
func startServerHTTP(t testing.TB, dataDir string, extraArgs ...string) *server {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		httpAddr := freeAddr(t)
		// The later -http-addr overrides the "" tryStartServer passes.
		s, err := tryStartServer(t, dataDir, append([]string{"-http-addr", httpAddr}, extraArgs...))
		if err == nil {
			s.httpAddr = httpAddr
			return s
		}
		lastErr = err
	}
	t.Fatalf("cannot start otlp-lite with OTLP/HTTP: %v", lastErr)
	return nil
}

func tryStartServer(t testing.TB, dataDir string, extraArgs []string) (*server, error) {
	s := &server{
		t:       t,
		addr:    freeAddr(t),
		dataDir: dataDir,
		stderr:  &syncBuffer{},
		done:    make(chan struct{}),
	}
	// -http-addr "" and -admin-addr "" turn off the OTLP/HTTP and admin
	// listeners, whose fixed default ports (4318, 8888) would collide
	// between servers and with other processes on the machine.
	args := append([]string{"serve", "-grpc-addr", s.addr, "-http-addr", "", "-admin-addr", "", "-data-dir", dataDir, "-storage", "disk"}, extraArgs...)
	s.cmd = exec.Command(serverBin, args...)
	s.cmd.Stdout = s.stderr
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", serverBin, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("otlp-lite %s stderr:\n%s", strings.Join(args, " "), s.stderr.String())
		}
	})
	if err := s.waitReady(); err != nil {
		s.kill()
		return nil, fmt.Errorf("%w; stderr:\n%s", err, s.stderr.String())
	}
	return s, nil
}

// waitReady polls grpc.health.v1.Health/Check for the server as a whole
// (service "") until it answers SERVING, the process exits, or readyTimeout.
func (s *server) waitReady() error {
	// grpc-go backs off a second after a refused connection; poll faster,
	// the child is expected to listen within milliseconds.
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.5, MaxDelay: 200 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}))
	if err != nil {
		return fmt.Errorf("cannot create health client: %w", err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(false))
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			// Another process may have taken the port between freeAddr
			// and our child's bind, and answered for it; then our child
			// has failed (or is about to fail) to listen.
			select {
			case <-s.done:
				return fmt.Errorf("otlp-lite exited although %s answered: %v", s.addr, s.waitErr)
			case <-time.After(20 * time.Millisecond):
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("otlp-lite exited before it was ready: %v", s.waitErr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("otlp-lite not SERVING after %s: last check: status %v, error %v", readyTimeout, resp.GetStatus(), err)
		}
	}
}

// stop sends SIGTERM and requires a clean exit (status 0) within stopTimeout.
func (s *server) stop() {
	s.t.Helper()
	select {
	case <-s.done:
		s.t.Fatalf("otlp-lite exited before it was stopped: %v", s.waitErr)
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatalf("cannot send SIGTERM to otlp-lite: %v", err)
	}
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		s.kill()
		s.t.Fatalf("otlp-lite did not exit within %s of SIGTERM", stopTimeout)
	}
	if s.waitErr != nil {
		s.t.Fatalf("otlp-lite did not exit cleanly after SIGTERM: %v", s.waitErr)
	}
}

// kill sends SIGKILL (no flush, no graceful shutdown) and waits for the
// process to be gone. It is a no-op on a process that already exited.
func (s *server) kill() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		// A SIGKILLed process that is not reaped within seconds means the
		// machine is wedged; nothing more a test can do.
	}
}

// dial returns a grpc-go client connection to the server, closed in
// t.Cleanup.
func (s *server) dial(t testing.TB, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)
	conn, err := grpc.NewClient(s.addr, opts...)
	if err != nil {
		t.Fatalf("cannot dial %s: %v", s.addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// scanStore reads every record of signal from the stopped server's data
// directory and unmarshals it into a fresh message made by newMsg, with the
// official generated types. A record that does not parse fails the test.
func scanStore[M proto.Message](t testing.TB, dataDir string, signal storage.Signal, newMsg func() M) []M {
	t.Helper()
	var msgs []M
	n := 0
	err := disk.Scan(dataDir, signal, func(r disk.Record) error {
		n++
		m := newMsg()
		// proto.Unmarshal copies bytes fields, so m stays valid after
		// r.Data is reused by the next callback.
		if err := proto.Unmarshal(r.Data, m); err != nil {
			return fmt.Errorf("cannot parse %s record #%d (%d bytes, time %s): %w", signal, n, len(r.Data), r.Time, err)
		}
		// Record.Time is when the server accepted the request: during
		// this test run.
		if r.Time.Before(testStart) || r.Time.After(time.Now()) {
			return fmt.Errorf("%s record #%d has time %s, outside this run (%s to now)", signal, n, r.Time, testStart)
		}
		if want := itemCount(m); r.Items != want {
			return fmt.Errorf("%s record #%d says it holds %d items, its data holds %d", signal, n, r.Items, want)
		}
		msgs = append(msgs, m)
		return nil
	})
	if err != nil {
		t.Fatalf("disk.Scan(%s, %s): %v", dataDir, signal, err)
	}
	return msgs
}

// matchMessages pairs every sent message with an equal stored one (the
// server stores each acknowledged request as one record, in any order) and
// reports the ones that have no counterpart.
func matchMessages[M proto.Message](t testing.TB, what string, sent, stored []M) {
	t.Helper()
	if len(sent) != len(stored) {
		t.Errorf("%s: %d requests acknowledged, %d records stored", what, len(sent), len(stored))
	}
	used := make([]bool, len(stored))
	for i, s := range sent {
		found := false
		for j, r := range stored {
			if !used[j] && proto.Equal(s, r) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("%s: acknowledged request #%d has no identical stored record:\n%s", what, i, closestDiff(s, stored, used))
		}
	}
}

// itemCount counts what storage.Sink calls items: spans, metric data points,
// log records or profiles.
func itemCount(m proto.Message) int {
	n := 0
	switch r := m.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		for _, rs := range r.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				n += len(ss.GetSpans())
			}
		}
	case *colmetricspb.ExportMetricsServiceRequest:
		for _, rm := range r.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, x := range sm.GetMetrics() {
					n += len(x.GetGauge().GetDataPoints()) + len(x.GetSum().GetDataPoints()) +
						len(x.GetHistogram().GetDataPoints()) + len(x.GetExponentialHistogram().GetDataPoints()) +
						len(x.GetSummary().GetDataPoints())
				}
			}
		}
	case *collogspb.ExportLogsServiceRequest:
		for _, rl := range r.GetResourceLogs() {
			for _, sl := range rl.GetScopeLogs() {
				n += len(sl.GetLogRecords())
			}
		}
	case *colprofilespb.ExportProfilesServiceRequest:
		for _, rp := range r.GetResourceProfiles() {
			for _, sp := range rp.GetScopeProfiles() {
				n += len(sp.GetProfiles())
			}
		}
	}
	return n
}
