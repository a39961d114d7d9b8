package otlpclient

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/storage"
)

// startServer serves h over h2c on a loopback port and returns its address.
func startServer(t *testing.T, h http.Handler) string { return startServerB(t, h) }

func startServerB(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func newHandler(sink storage.Sink, stream handler.StreamConfig) *handler.Handler {
	return handler.New(handler.Config{Sink: sink, Logger: quietLogger(), Stream: stream})
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testRequest returns an ExportTraceServiceRequest of spans spans, all
// carrying n in their trace id, so that every request of a test is
// distinct and the sink can tell which one it stored.
func testRequest(n uint64, spans int) []byte {
	var mp easyproto.MarshalerPool
	m := mp.Get()
	ss := m.MessageMarshaler().AppendMessage(1).AppendMessage(2)
	var tid [16]byte
	binary.BigEndian.PutUint64(tid[8:], n)
	for i := range spans {
		sp := ss.AppendMessage(2)
		sp.AppendBytes(1, tid[:])
		sp.AppendBytes(2, []byte{1, 2, 3, 4, 5, 6, 7, byte(i + 1)})
		sp.AppendString(5, "span")
	}
	return m.Marshal(nil)
}

// requestNumber extracts n from a stored testRequest.
func requestNumber(data []byte) uint64 {
	i := bytes.Index(data, []byte{0x0a, 16}) // trace_id: field 1, 16 bytes
	if i < 0 {
		return 0
	}
	return binary.BigEndian.Uint64(data[i+2+8 : i+2+16])
}

// countSink counts stores per request number. Requests with more than one
// span wait for gate, when it is not nil; failFirst makes the first
// attempt of each request fail with storage.ErrUnavailable.
type countSink struct {
	mu        sync.Mutex
	stored    map[uint64]int
	attempts  map[uint64][]int64 // time of each Write, for retry delays
	gate      chan struct{}
	blocked   atomic.Int32
	maxActive atomic.Int32
	active    atomic.Int32
	failFirst bool
}

func newCountSink() *countSink {
	return &countSink{stored: map[uint64]int{}, attempts: map[uint64][]int64{}}
}

func (s *countSink) Write(_ context.Context, _ storage.Signal, data []byte, items int) error {
	n := requestNumber(data)
	a := s.active.Add(1)
	defer s.active.Add(-1)
	for {
		m := s.maxActive.Load()
		if a <= m || s.maxActive.CompareAndSwap(m, a) {
			break
		}
	}
	s.mu.Lock()
	s.attempts[n] = append(s.attempts[n], time.Now().UnixNano())
	first := len(s.attempts[n]) <= 1
	gate := s.gate
	s.mu.Unlock()
	if s.failFirst && first {
		return storage.ErrUnavailable
	}
	if gate != nil && items > 1 {
		s.blocked.Add(1)
		<-gate
		s.blocked.Add(-1)
	}
	s.mu.Lock()
	s.stored[n]++
	s.mu.Unlock()
	return nil
}

func (s *countSink) Close() error { return nil }

func (s *countSink) counts() map[uint64]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[uint64]int, len(s.stored))
	for k, v := range s.stored {
		out[k] = v
	}
	return out
}

// outcomes records each request's done callbacks.
type outcomes struct {
	mu    sync.Mutex
	calls map[uint64][]error
	order []uint64
}

func newOutcomes() *outcomes { return &outcomes{calls: map[uint64][]error{}} }

func (o *outcomes) done(n uint64) func(error) {
	return func(err error) {
		o.mu.Lock()
		o.calls[n] = append(o.calls[n], err)
		o.order = append(o.order, n)
		o.mu.Unlock()
	}
}

func (o *outcomes) snapshot() (map[uint64][]error, []uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	calls := make(map[uint64][]error, len(o.calls))
	for k, v := range o.calls {
		calls[k] = append([]error(nil), v...)
	}
	return calls, append([]uint64(nil), o.order...)
}

// requireAllAcked fails unless requests 1..n each completed exactly once,
// successfully.
func (o *outcomes) requireAllAcked(t *testing.T, n uint64) {
	t.Helper()
	calls, _ := o.snapshot()
	for i := uint64(1); i <= n; i++ {
		c := calls[i]
		if len(c) != 1 || c[0] != nil {
			t.Fatalf("request %d: done called %d times, errors %v", i, len(c), c)
		}
	}
	if len(calls) != int(n) {
		t.Fatalf("%d requests completed, want %d", len(calls), n)
	}
}
