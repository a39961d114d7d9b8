package main

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// What a burst left is given back (issue 26, "memory that follows the bytes
// in flight"): 32 requests of 2 MiB at once grow 32 pooled buffers of that
// size, which Go frees only after two collections that an idle process does
// not run for minutes. With -memory-limit auto (the default), once nothing
// has been in flight for 5 s the receiver collects twice and returns the
// pages (service/memlimit.go, burstRelease): resident memory falls back near
// its idle size, every request of the burst was acknowledged, and the server
// still serves. Fails before the release existed: the counter never moves
// and the burst's heap stays.
func TestBurstMemoryGivenBack(t *testing.T) {
	t.Parallel()
	// The request buffers are the receiver's whatever the sink; the disk
	// store keeps buffers of its own (its batch records), not under test.
	s := startAbuseServer(t, "-storage", "discard")
	s.mustServe(t)
	idle := readProc(t, s.pid)

	const requests, size = 32, 2 << 20
	pad := bytes.Repeat([]byte{'x'}, size)
	c := grpcwire.NewClient(s.addr, nil)
	defer c.HTTP.CloseIdleConnections()
	ids := make([]string, requests)
	errs := make(chan error, requests)
	var wg sync.WaitGroup
	for i := range ids {
		ids[i] = fmt.Sprintf("burst-%d", i)
		req := tracesRequest(pad, ids[i])
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := c.Invoke(ctx, methodTraces, req); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a request of the burst failed: %v", err)
	}
	held := readProc(t, s.pid)
	// The burst must have grown the process for the test to prove
	// anything: its bodies were pooled (about 64 MiB).
	if held.hwm < idle.rss+32<<20 {
		t.Fatalf("the burst grew resident memory by %d MiB only (idle %d MiB): it held too little to test", (held.hwm-idle.rss)>>20, idle.rss>>20)
	}
	// What may stay: the process after a request (runtime, pools of
	// small objects) plus the release's threshold (burstMin, 16 MiB).
	// Polled like waitMetric: the release comes 5 s after the last
	// request (or sooner, if collections already freed the pools).
	bound := idle.rss + 16<<20
	after := readProc(t, s.pid)
	for deadline := time.Now().Add(20 * time.Second); after.rss > bound && time.Now().Before(deadline); after = readProc(t, s.pid) {
		<-time.After(50 * time.Millisecond)
	}
	t.Logf("resident memory: idle %d MiB, after the burst %d MiB (peak %d MiB), then %d MiB; releases: %.0f",
		idle.rss>>20, held.rss>>20, held.hwm>>20, after.rss>>20, s.metric(t, "otlplite_go_burst_releases_total"))
	if after.rss > bound {
		t.Errorf("resident memory %d MiB 20 s after the burst, want at most the idle %d MiB + 16 MiB", after.rss>>20, idle.rss>>20)
	}
	s.mustServe(t)
}

// Memory that follows the bytes in flight (issue 26): 64 requests of about
// 1 MiB in flight at once hold 64 MiB of bodies, read into pooled,
// pointer-free buffers. With Go's default GOGC=100 the heap grew to twice
// its live data, so those bodies cost twice their size; with -memory-limit
// auto the collector's slack is 4 MiB or a quarter of the live heap
// (service/gcpercent.go). Peak resident memory above the idle process must
// stay within one and a half times the bodies (a quarter for the slack, a
// quarter for the garbage of buffers that grow by doubling while the pool
// is cold) and 8 MiB for the rest (net/http's stream state, the runtime's
// own): 108-109 MiB against a bound of 119; with GOGC=100, 135-136. Before the slack
// followed the garbage, peak memory exceeded the bound.
func TestMemoryFollowsBytesInFlight(t *testing.T) {
	t.Parallel()
	s := startAbuseServer(t, "-storage", "discard")
	s.mustServe(t)
	idle := readProc(t, s.pid)

	const inFlight, rounds = 64, 6
	req := tracesRequest(bytes.Repeat([]byte{'x'}, 1<<20), "in-flight")
	c := grpcwire.NewClient(s.addr, nil)
	defer c.HTTP.CloseIdleConnections()
	errs := make(chan error, inFlight)
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			for range rounds {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				_, err := c.Invoke(ctx, methodTraces, req)
				cancel()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a request failed: %v", err)
	}
	peak := readProc(t, s.pid).hwm
	bodies := int64(inFlight * len(req))
	bound := idle.rss + bodies*3/2 + 8<<20
	t.Logf("peak resident memory %d MiB: idle %d MiB + %d MiB for %d MiB of bodies in flight (bound %d MiB)",
		peak>>20, idle.rss>>20, (peak-idle.rss)>>20, bodies>>20, bound>>20)
	if peak > bound {
		t.Errorf("peak resident memory %d MiB with %d MiB of bodies in flight, want at most %d MiB (idle %d MiB + 1.5 × the bodies + 8 MiB)",
			peak>>20, bodies>>20, bound>>20, idle.rss>>20)
	}
	s.mustServe(t)
}
