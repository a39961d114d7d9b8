package handler

import (
	"bytes"
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/internal/connstate"
)

// shedFunc is a connstate.Shedder for tests.
type shedFunc func(except *connstate.Conn) bool

func (f shedFunc) ShedQuiet(except *connstate.Conn) bool { return f(except) }

// TestStreamGate: units up to the limit are taken at once; past it a
// request waits (asking for a quiet connection to be shed, not its own)
// and gets the unit another returns; a second waiter of the same
// connection, and a wait past maxWait, are refused and counted.
func TestStreamGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sheds atomic.Int32
		var shedder shedFunc
		a := connstate.New(time.Now(), shedFunc(func(e *connstate.Conn) bool { return shedder(e) }))
		b := connstate.New(time.Now(), shedFunc(func(e *connstate.Conn) bool { return shedder(e) }))
		shedder = func(except *connstate.Conn) bool {
			if except != b {
				t.Errorf("shed asked with except %p, want the waiter's own connection %p", except, b)
			}
			sheds.Add(1)
			return false
		}
		g := newStreamGate(2, 5*time.Second)
		ctx := context.Background()
		if !g.acquire(ctx, a) || !g.acquire(ctx, a) {
			t.Fatal("units within the limit refused")
		}
		got := make(chan bool, 2)
		go func() { got <- g.acquire(ctx, b) }()
		synctest.Wait()
		// A second waiter of the same connection is refused at once.
		if g.acquire(ctx, b) {
			t.Fatal("a second waiter of one connection got a unit")
		}
		if !a.HoldsUnits() || b.HoldsUnits() {
			t.Fatalf("units held: a %v, b %v; want a's two, none of waiting b's", a.HoldsUnits(), b.HoldsUnits())
		}
		time.Sleep(300 * time.Millisecond)
		g.release(a)
		if !<-got {
			t.Fatal("the waiter did not get the unit released")
		}
		if !b.HoldsUnits() {
			t.Fatal("the waiter's connection holds no unit once it got one")
		}
		if n := sheds.Load(); n < 2 {
			t.Errorf("%d sheds asked while waiting 300 ms, want the first and one every %v", n, reshedEvery)
		}
		start := time.Now()
		if g.acquire(ctx, b) {
			t.Fatal("got a unit past the limit")
		}
		if d := time.Since(start); d != maxGateWait {
			t.Errorf("refused after %v, want after maxGateWait %v", d, maxGateWait)
		}
		if g.refused.Load() != 2 || g.waited.Load() != 2 || g.inUse() != 2 {
			t.Errorf("refused %d waited %d in use %d, want 2, 2, 2", g.refused.Load(), g.waited.Load(), g.inUse())
		}
	})
}

// TestStreamBoundRefusals: with every unit of the stream bound held (by a
// request the sink holds), a new request is refused as retryable on each
// protocol, without its body being read: UNAVAILABLE with RetryInfo, 503
// with Retry-After; an export stream's requests are then processed by its
// read loop, one at a time, and still acknowledged.
func TestStreamBoundRefusals(t *testing.T) {
	sink := &gateSink{gate: make(chan struct{})}
	h := New(Config{Sink: sink, Logger: quietLogger(), RetryDelay: 2 * time.Second,
		Admission: AdmissionConfig{MaxStreams: 1, MaxWait: 10 * time.Millisecond}})
	c := startHandler(t, h)
	done := make(chan error, 1)
	// Two spans: gateSink holds writes of more than one item.
	go func() {
		_, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID, goodID))
		done <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for sink.blocked.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // polling the sink
	}
	_, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID))
	if st := statusOf(t, err); st.Code != grpcwire.Unavailable || st.RetryDelay <= 0 {
		t.Fatalf("gRPC: %+v, want UNAVAILABLE with RetryInfo", st)
	}
	resp, err := http.Post(c.BaseURL+"/v1/traces", "application/x-protobuf", bytes.NewReader(traceRequest(goodID)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("HTTP: %d Retry-After=%q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	close(sink.gate)
	if err := <-done; err != nil {
		t.Fatalf("the held request: %v", err)
	}
	// The bound is free again; a stream takes its one unit, so its
	// requests are processed by its read loop.
	s := openStream(t, c, "ExportTraces")
	for id := uint64(1); id <= 3; id++ {
		s.send(id, traceRequest(goodID))
		if a, ok := s.recv(); !ok || a.id != id || a.code != resultSuccess {
			t.Fatalf("stream request %d: %+v", id, a)
		}
	}
	if got := h.gate.refused.Load(); got != 2 {
		t.Errorf("otlplite_streams_refused_total %d, want 2", got)
	}
}
