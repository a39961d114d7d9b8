package service_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/service"
)

// freeAddr is a loopback address whose port was free a moment ago: the
// tests below need to know the gRPC port before Start so that they can
// check it is free again after a failed Start.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// settledGoroutines waits until the goroutine count is at most want (as
// goleak does: goroutines told to stop exit asynchronously), and returns
// the last count seen.
func settledGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 200 && n > want; i++ {
		time.Sleep(10 * time.Millisecond) // waiting for exits, not standing in for an event
		n = runtime.NumGoroutine()
	}
	return n
}

func tokenFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte("s3cret-token-for-review\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReviewStartFailureReleases: a Start that fails half way (the admin
// address in use; the data directory a file) releases what it opened: the
// gRPC port is free again, the token file's watcher and every other
// goroutine are gone, and Shutdown afterwards says so without panicking.
func TestReviewStartFailureReleases(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  func(*service.Config)
	}{
		{"admin address in use", func(c *service.Config) { c.AdminAddr = busy.Addr().String() }},
		{"data dir is a file", func(c *service.Config) { c.DataDir = notDir }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			cfg := testConfig(t.TempDir())
			cfg.GRPCAddr = freeAddr(t)
			cfg.AuthTokenFile = tokenFile(t)
			tc.set(&cfg)
			svc, err := service.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Start(context.Background()); err == nil {
				svc.Shutdown(context.Background())
				t.Fatal("Start succeeded")
			}
			ln, err := net.Listen("tcp", cfg.GRPCAddr)
			if err != nil {
				t.Fatalf("the gRPC port is still held after a failed Start: %v", err)
			}
			ln.Close()
			if n := settledGoroutines(before); n > before {
				buf := make([]byte, 1<<16)
				t.Fatalf("%d goroutines after a failed Start, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
			}
			if err := svc.Shutdown(context.Background()); err == nil {
				t.Fatal("Shutdown after a failed Start returned nil")
			}
		})
	}
}

// TestReviewStartAgainAfterFailure: a second Start after a failed one is
// refused or works, and never panics (abandon closed the stop channel,
// which a second abandon or the Shutdown of the retried Start closed
// again: "close of closed channel").
func TestReviewStartAgainAfterFailure(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t.TempDir())
	cfg.GRPCAddr = busy.Addr().String()
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err == nil {
		t.Fatal("Start on a busy port succeeded")
	}
	busy.Close()
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("a second Start after a failed one panicked: %v", p)
			}
		}()
		if err := svc.Start(context.Background()); err != nil {
			return // refused: fine
		}
		if err := svc.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}()
}

// TestReviewShutdownBeforeStart: a Shutdown before Start is refused, and
// does not latch: the Shutdown after a later Start stops the receiver (its
// port free again), rather than returning the first call's error and
// leaving the listeners, the storage and the goroutines running.
func TestReviewShutdownBeforeStart(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.GRPCAddr = freeAddr(t)
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Shutdown(context.Background()); err == nil {
		t.Fatal("Shutdown before Start returned nil")
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	export(t, svc.GRPCAddr(), 1, 1)
	if err := svc.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown after Start: %v", err)
	}
	ln, err := net.Listen("tcp", cfg.GRPCAddr)
	if err != nil {
		t.Fatalf("the gRPC port is still held after Shutdown: %v", err)
	}
	ln.Close()
}

// TestReviewShutdownConcurrent: Shutdowns called together all return the
// first one's result, once every acknowledged request is stored.
func TestReviewShutdownConcurrent(t *testing.T) {
	dir := t.TempDir()
	svc := start(t, testConfig(dir))
	sent := export(t, svc.GRPCAddr(), 3, 5)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = svc.Shutdown(context.Background()) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Shutdown %d: %v", i, err)
		}
	}
	if got := records(t, dir); len(got) != len(sent) {
		t.Fatalf("%d records, %d acknowledged", len(got), len(sent))
	}
}

// TestReviewForwardWithSinkMessage: forwarding with an embedder's Sink is
// refused by New with a message an embedder can act on: it names the
// Config fields, not a "-storage sink" flag value that does not exist.
func TestReviewForwardWithSinkMessage(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Sink = &countSink{}
	cfg.Forward.Destinations = []forward.Destination{mustParse(t, "a=grpc://127.0.0.1:1")}
	_, err := service.New(cfg)
	if err == nil {
		t.Fatal("New accepted forwarding with a Sink")
	}
	if strings.Contains(err.Error(), "-storage sink") {
		t.Errorf("error %q names a -storage value that does not exist", err)
	}
}

// closeFailSink is a Sink whose Close fails.
type closeFailSink struct{ countSink }

func (s *closeFailSink) Close() error { return errors.New("flush failed") }

// TestReviewShutdownSinkCloseFails: when the storage cannot be closed,
// Shutdown reports it and still releases the admin listener: a library
// outlives its receiver, and its port must not stay held.
func TestReviewShutdownSinkCloseFails(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Sink = &closeFailSink{}
	cfg.AdminAddr = "127.0.0.1:0"
	svc := start(t, cfg)
	admin := svc.AdminAddr()
	if err := svc.Shutdown(context.Background()); err == nil || !strings.Contains(err.Error(), "flush failed") {
		t.Fatalf("Shutdown = %v, want the sink's Close error", err)
	}
	ln, err := net.Listen("tcp", admin)
	if err != nil {
		t.Fatalf("the admin port is still held after Shutdown: %v", err)
	}
	ln.Close()
}

// TestReviewShutdownRightAfterStart: a Shutdown right after Start frees
// the ports when it returns, although the listeners' Serve goroutines may
// not have taken them yet (http.Server.Serve after Shutdown closes its
// listener only when it runs).
func TestReviewShutdownRightAfterStart(t *testing.T) {
	for range 20 {
		cfg := testConfig(t.TempDir())
		cfg.AdminAddr = "127.0.0.1:0"
		svc := start(t, cfg)
		addrs := []string{svc.GRPCAddr(), svc.AdminAddr()}
		shutdown(t, svc)
		for _, a := range addrs {
			ln, err := net.Listen("tcp", a)
			if err != nil {
				t.Fatalf("a port is still held after Shutdown: %v", err)
			}
			ln.Close()
		}
	}
}

// TestReviewRetryWithSharedMetrics: an embedder whose Start failed (a busy
// admin port) makes a new Service with the same Config, its own metrics
// set included, and starts it: the failed Start's metrics must not make
// the second one panic ("metric already registered").
func TestReviewRetryWithSharedMetrics(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t.TempDir())
	cfg.Metrics = metrics.NewSet()
	cfg.AuthTokenFile = tokenFile(t)
	cfg.AdminAddr = busy.Addr().String()
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err == nil {
		t.Fatal("Start on a busy admin port succeeded")
	}
	busy.Close()
	cfg.AdminAddr = "127.0.0.1:0"
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("the second Service's Start panicked: %v", p)
		}
	}()
	svc = start(t, cfg)
	shutdown(t, svc)
}
