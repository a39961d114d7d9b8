package otlpclient

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/handler"
)

func closeExporter(t *testing.T, e *StreamExporter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestStreamExportsAndCloses(t *testing.T) {
	sink := newCountSink()
	addr := startServer(t, newHandler(sink, handler.StreamConfig{}))
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}})
	o := newOutcomes()
	const n = 200
	for i := uint64(1); i <= n; i++ {
		if err := e.Send(context.Background(), testRequest(i, 1), o.done(i)); err != nil {
			t.Fatal(err)
		}
	}
	closeExporter(t, e)
	o.requireAllAcked(t, n)
	st := e.Stats()
	if st.Acknowledged != n || st.Sent != n || st.Retried != 0 || st.Dropped != 0 || st.Duplicates != 0 || st.Streams != 1 {
		t.Fatalf("stats %+v", st)
	}
	for i, c := range sink.counts() {
		if c != 1 {
			t.Fatalf("request %d stored %d times", i, c)
		}
	}
}

// TestStreamOutOfOrderAcks holds the first request in the sink: the
// requests after it are acknowledged first, and the exporter matches each
// acknowledgement to its request by id.
func TestStreamOutOfOrderAcks(t *testing.T) {
	sink := newCountSink()
	sink.gate = make(chan struct{})
	addr := startServer(t, newHandler(sink, handler.StreamConfig{}))
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}})
	o := newOutcomes()
	ctx := context.Background()
	if err := e.Send(ctx, testRequest(1, 2), o.done(1)); err != nil { // held by the sink
		t.Fatal(err)
	}
	for i := uint64(2); i <= 6; i++ {
		if err := e.Send(ctx, testRequest(i, 1), o.done(i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "acks of requests 2-6", func() bool { _, order := o.snapshot(); return len(order) == 5 })
	if _, order := o.snapshot(); contains(order, 1) {
		t.Fatalf("request 1 completed while held: %v", order)
	}
	if e.Pending() != 1 {
		t.Fatalf("%d pending, want 1", e.Pending())
	}
	close(sink.gate)
	closeExporter(t, e)
	o.requireAllAcked(t, 6)
	if _, order := o.snapshot(); order[5] != 1 {
		t.Fatalf("completion order %v: request 1 should be last", order)
	}
}

func contains(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// waitFor polls cond for up to 10s; it is a wait for an event, not a
// timing assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStreamIDsNeverReused sends through several rotations and checks the
// wire: no id appears twice on one stream, an id appears on a later stream
// only as the resend of a request the server never acknowledged, and the
// ids are exactly 1..n.
func TestStreamIDsNeverReused(t *testing.T) {
	sink := newCountSink()
	wl := &wireLog{h: newHandler(sink, handler.StreamConfig{MaxRequests: 9})}
	addr := startServer(t, wl)
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}, MaxPending: 16})
	o := newOutcomes()
	const n = 120
	for i := uint64(1); i <= n; i++ {
		if err := e.Send(context.Background(), testRequest(i, 1), o.done(i)); err != nil {
			t.Fatal(err)
		}
	}
	closeExporter(t, e)
	o.requireAllAcked(t, n)
	seen := map[uint64]bool{}
	for si, ids := range wl.snapshot() {
		onStream := map[uint64]bool{}
		for _, id := range ids {
			if onStream[id] {
				t.Fatalf("stream %d: id %d sent twice", si, id)
			}
			onStream[id] = true
			seen[id] = true
		}
	}
	for id := uint64(1); id <= n; id++ {
		if !seen[id] {
			t.Fatalf("id %d never sent", id)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d distinct ids on the wire, want %d", len(seen), n)
	}
	// Resent ids were never stored before: each request is stored once.
	for i, c := range sink.counts() {
		if c != 1 {
			t.Fatalf("request %d stored %d times", i, c)
		}
	}
}

// TestStreamRotationLosesNothing: the server rotates every 7 requests; the
// exporter reopens and resends exactly the unacknowledged requests, and
// every request is stored and acknowledged exactly once.
func TestStreamRotationLosesNothing(t *testing.T) {
	sink := newCountSink()
	addr := startServer(t, newHandler(sink, handler.StreamConfig{MaxRequests: 7}))
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}, MaxPending: 32})
	o := newOutcomes()
	const n = 300
	for i := uint64(1); i <= n; i++ {
		if err := e.Send(context.Background(), testRequest(i, 1), o.done(i)); err != nil {
			t.Fatal(err)
		}
	}
	closeExporter(t, e)
	o.requireAllAcked(t, n)
	st := e.Stats()
	if st.Acknowledged != n || st.Dropped != 0 || st.Failed != 0 || st.Duplicates != 0 {
		t.Fatalf("stats %+v", st)
	}
	if st.Streams < n/7 {
		t.Fatalf("%d streams for %d requests rotated every 7", st.Streams, n)
	}
	if st.Sent != n+st.Retried {
		t.Fatalf("sent %d = %d requests + %d resends?", st.Sent, n, st.Retried)
	}
	counts := sink.counts()
	for i := uint64(1); i <= n; i++ {
		// A rotated stream acknowledges everything it read, so a resent
		// request was never stored before.
		if counts[i] != 1 {
			t.Fatalf("request %d stored %d times", i, counts[i])
		}
	}
	t.Logf("%d streams, %d resends", st.Streams, st.Retried)
}

// TestStreamRotationWithoutResend: with DisableResend, the requests a
// rotation leaves unacknowledged are dropped and reported, not resent.
func TestStreamRotationWithoutResend(t *testing.T) {
	sink := newCountSink()
	addr := startServer(t, newHandler(sink, handler.StreamConfig{MaxRequests: 5}))
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}, MaxPending: 32, DisableResend: true})
	o := newOutcomes()
	const n = 100
	for i := uint64(1); i <= n; i++ {
		if err := e.Send(context.Background(), testRequest(i, 1), o.done(i)); err != nil {
			t.Fatal(err)
		}
	}
	closeExporter(t, e)
	calls, _ := o.snapshot()
	var acked, broken uint64
	for i := uint64(1); i <= n; i++ {
		switch c := calls[i]; {
		case len(c) != 1:
			t.Fatalf("request %d: %d outcomes", i, len(c))
		case c[0] == nil:
			acked++
		case errors.Is(c[0], ErrStreamBroken):
			broken++
		default:
			t.Fatalf("request %d: %v", i, c[0])
		}
	}
	st := e.Stats()
	if st.Retried != 0 || st.Dropped != broken || st.Acknowledged != acked || acked+broken != n {
		t.Fatalf("stats %+v, %d acked, %d broken", st, acked, broken)
	}
	if uint64(len(sink.counts())) != acked {
		t.Fatalf("%d stored, %d acknowledged", len(sink.counts()), acked)
	}
}

// TestStreamClientRebalance: the client retires its stream every 10
// requests, or after 30ms, while the sink is slow, so acknowledgements are
// still due on the old stream when the new one starts. A retired stream is
// half-closed and drained, so nothing is resent and nothing stored twice.
func TestStreamClientRebalance(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  StreamConfig
	}{
		{"requests", StreamConfig{RebalanceRequests: 10}},
		{"timeout", StreamConfig{RebalanceTimeout: 30 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := newCountSink()
			sink.gate = make(chan struct{})
			wl := &wireLog{h: newHandler(sink, handler.StreamConfig{MaxInFlight: 64})}
			addr := startServer(t, wl)
			cfg := tc.cfg
			cfg.Endpoint = addr
			cfg.MaxPending = 64
			e := NewStreamExporter(cfg)
			o := newOutcomes()
			const n = 60
			for i := uint64(1); i <= n; i++ {
				// Every third request waits in the sink for the gate.
				spans := 1
				if i%3 == 0 {
					spans = 2
				}
				if err := e.Send(context.Background(), testRequest(i, spans), o.done(i)); err != nil {
					t.Fatal(err)
				}
				if tc.cfg.RebalanceTimeout > 0 && i%10 == 0 {
					time.Sleep(tc.cfg.RebalanceTimeout * 2)
				}
			}
			waitFor(t, "requests held in the sink", func() bool { return sink.blocked.Load() == n/3 })
			if streams := len(wl.snapshot()); streams < 3 {
				t.Fatalf("%d streams while requests are held: the client did not rebalance", streams)
			}
			close(sink.gate)
			closeExporter(t, e)
			o.requireAllAcked(t, n)
			st := e.Stats()
			if st.Retried != 0 || st.Sent != n || st.Duplicates != 0 {
				t.Fatalf("stats %+v: a rebalanced stream must be drained, not resent", st)
			}
			for i, c := range sink.counts() {
				if c != 1 {
					t.Fatalf("request %d stored %d times", i, c)
				}
			}
		})
	}
}

// TestStreamRetryDelayHonoured: the sink refuses the first attempt of each
// request, the server answers FailedRetryable with its retry_delay, and the
// exporter resends no earlier than that delay. This measures a lower bound
// the client must respect, not performance.
func TestStreamRetryDelayHonoured(t *testing.T) {
	const delay = 300 * time.Millisecond
	sink := newCountSink()
	sink.failFirst = true
	h := handler.New(handler.Config{Sink: sink, Logger: quietLogger(), RetryDelay: delay})
	addr := startServer(t, h)
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}})
	o := newOutcomes()
	for i := uint64(1); i <= 3; i++ {
		if err := e.Send(context.Background(), testRequest(i, 1), o.done(i)); err != nil {
			t.Fatal(err)
		}
	}
	closeExporter(t, e)
	o.requireAllAcked(t, 3)
	if st := e.Stats(); st.Retried != 3 || st.Sent != 6 {
		t.Fatalf("stats %+v", st)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for n, at := range sink.attempts {
		if len(at) != 2 {
			t.Fatalf("request %d: %d attempts", n, len(at))
		}
		if gap := time.Duration(at[1] - at[0]); gap < delay {
			t.Fatalf("request %d resent after %v, server asked for %v", n, gap, delay)
		}
	}
}

// TestStreamRequestTimeoutDrops: requests the server holds past
// RequestTimeout are dropped and reported; their late acknowledgements are
// counted as duplicates.
func TestStreamRequestTimeoutDrops(t *testing.T) {
	sink := newCountSink()
	sink.gate = make(chan struct{})
	addr := startServer(t, newHandler(sink, handler.StreamConfig{}))
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr, RequestTimeout: 100 * time.Millisecond}})
	o := newOutcomes()
	for i := uint64(1); i <= 3; i++ {
		if err := e.Send(context.Background(), testRequest(i, 2), o.done(i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "three drops", func() bool { return e.Stats().Dropped == 3 })
	calls, _ := o.snapshot()
	for i := uint64(1); i <= 3; i++ {
		if c := calls[i]; len(c) != 1 || !errors.Is(c[0], ErrDropped) {
			t.Fatalf("request %d: %v", i, c)
		}
	}
	if e.Pending() != 0 {
		t.Fatalf("%d still pending", e.Pending())
	}
	close(sink.gate)
	waitFor(t, "late acknowledgements", func() bool { return e.Stats().Duplicates == 3 })
	closeExporter(t, e)
	if st := e.Stats(); st.Acknowledged != 0 || st.Dropped != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStreamMemoryBoundStalledSink: with the sink stalled, the server reads
// at most MaxInFlight requests, HTTP/2 flow control stops the exporter's
// writer, and Send blocks at MaxPending: neither side buffers without
// bound. Then the sink resumes and everything is acknowledged.
func TestStreamMemoryBoundStalledSink(t *testing.T) {
	sink := newCountSink()
	sink.gate = make(chan struct{})
	addr := startServer(t, newHandler(sink, handler.StreamConfig{MaxInFlight: 2}))
	const maxPending = 40
	// Each message compressed alone: flow control bounds bytes, and
	// stateful compression makes these repetitive requests a few hundred
	// bytes each, so all of MaxPending fit in the window. (The server's
	// side of that case, MaxInFlight decoded requests each charged to
	// admission, is handler's TestStreamZstdHostile and compression's
	// TestStreamBombCharged.)
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}, MaxPending: maxPending, DisableStreamCompression: true})
	o := newOutcomes()
	big := make([][]byte, 60)
	for i := range big {
		big[i] = testRequest(uint64(i+1), 5000) // ~190 KB each
	}
	sendDone := make(chan struct{})
	var queued atomic.Int32
	go func() {
		defer close(sendDone)
		for i, req := range big {
			if err := e.Send(context.Background(), req, o.done(uint64(i+1))); err != nil {
				t.Error(err)
				return
			}
			queued.Add(1)
		}
	}()
	waitFor(t, "Send to block at MaxPending", func() bool { return queued.Load() == maxPending })
	// The wire stalls: the writer is blocked by flow control, far below
	// MaxPending requests on the wire.
	waitFor(t, "the writer to stall", func() bool {
		a := e.Stats().Sent
		time.Sleep(100 * time.Millisecond)
		return e.Stats().Sent == a
	})
	if held := sink.maxActive.Load(); held > 2 {
		t.Fatalf("server processed %d requests at once, limit 2", held)
	}
	sent := e.Stats().Sent
	if sent >= maxPending {
		t.Fatalf("%d requests (%d MB) written into a stalled server: no flow-control back-pressure", sent, sent*190/1000)
	}
	if q := queued.Load(); q != maxPending {
		t.Fatalf("Send accepted %d requests, MaxPending is %d", q, maxPending)
	}
	t.Logf("stalled with %d requests on the wire, %d pending", sent, e.Pending())
	close(sink.gate)
	<-sendDone
	closeExporter(t, e)
	o.requireAllAcked(t, uint64(len(big)))
}

// TestKeepBufferBounded holds the stream writer's bound on what it keeps
// between requests: buffers up to maxKeptBuffer are reused, larger ones
// are let go.
func TestKeepBufferBounded(t *testing.T) {
	small := make([]byte, 10, 64<<10)
	if got := keepBuffer(small); cap(got) != cap(small) {
		t.Fatalf("a %d-byte buffer was not kept", cap(small))
	}
	edge := make([]byte, 0, maxKeptBuffer)
	if got := keepBuffer(edge); cap(got) != maxKeptBuffer {
		t.Fatalf("a buffer of exactly maxKeptBuffer was not kept")
	}
	large := make([]byte, 0, maxKeptBuffer+1)
	if got := keepBuffer(large); got != nil {
		t.Fatalf("a %d-byte buffer was kept (bound %d)", cap(large), maxKeptBuffer)
	}
	if keepBuffer(nil) != nil {
		t.Fatal("nil did not stay nil")
	}
}
