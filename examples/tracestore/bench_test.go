package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// BenchmarkExport500 stores OTLP/HTTP requests of 500 spans (10 attributes
// each) through the receiver (handler.ServeHTTP, no network) into this
// example's Pebble store and, in the same run, into the repo's discard
// sink, which keeps nothing: the ratio of their cpu-ns/span is the cost of
// the store. Sink/* measures Write alone. cpu-ns/span is the process's user
// and system CPU time (Pebble's background flushes and compactions
// included, the wait for fsync not), per span.
func BenchmarkExport500(b *testing.B) {
	const spans = 500
	gen := otlpclient.NewSpanGenerator(spans, 10, 1)
	batches := make([][]byte, 64) // distinct trace ids, as from a real fleet
	for i := range batches {
		batches[i] = gen.AppendBatch(nil)
	}
	db, err := pebble.Open(b.TempDir(), &pebble.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	pebbleStore := &store{db: db, writers: sync.Pool{New: func() any { return new(writer) }}}
	// views is the store's work before Pebble's: the second pass with
	// otlpview and the records in a batch that is never committed (what a
	// visitor in the validation pass would save is the pass, not the records).
	views := sinkFunc(func(data []byte) error {
		w := pebbleStore.writers.Get().(*writer)
		defer pebbleStore.writers.Put(w)
		w.batch = db.NewBatch()
		defer w.batch.Close()
		return w.dec.Decode(data, w.putSpan)
	})
	for _, sink := range []struct {
		name string
		s    storage.Sink
	}{{"discard", &discard.Sink{}}, {"views", views}, {"pebble", pebbleStore}} {
		b.Run("Receiver/sink="+sink.name, func(b *testing.B) {
			h := handler.New(handler.Config{Sink: sink.s, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			w := &nopResponseWriter{h: http.Header{}}
			rd := bytes.NewReader(nil)
			req, _ := http.NewRequest("POST", "http://x/v1/traces", io.NopCloser(rd))
			req.Header.Set("Content-Type", "application/x-protobuf")
			measure(b, spans, len(batches[0]), func(i int) {
				rd.Reset(batches[i%len(batches)])
				clear(w.h)
				h.ServeHTTP(w, req)
				if w.status != 0 && w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			})
		})
		b.Run("Sink/sink="+sink.name, func(b *testing.B) {
			measure(b, spans, len(batches[0]), func(i int) {
				if err := sink.s.Write(context.Background(), storage.Traces, batches[i%len(batches)], spans); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// measure runs op b.N times and reports wall and CPU time per span.
func measure(b *testing.B, spans, size int, op func(i int)) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		op(i)
	}
	b.StopTimer()
	n := float64(b.N * spans)
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/n, "cpu-ns/span")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/span")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// nopResponseWriter is a reusable in-memory ResponseWriter (as in the
// handler's benchmarks), so that the benchmark measures no network stack.
type nopResponseWriter struct {
	h      http.Header
	status int
}

func (w *nopResponseWriter) Header() http.Header         { return w.h }
func (w *nopResponseWriter) WriteHeader(status int)      { w.status = status }
func (w *nopResponseWriter) Write(p []byte) (int, error) { return len(p), nil }

// sinkFunc is a storage.Sink of traces made of a function.
type sinkFunc func(data []byte) error

func (f sinkFunc) Write(_ context.Context, _ storage.Signal, data []byte, _ int) error {
	return f(data)
}

func (f sinkFunc) Close() error { return nil }
