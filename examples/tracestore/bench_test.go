package main

import (
	"bytes"
	"context"
	"fmt"
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
	"github.com/otlp-lite/otlp-lite/otlpview"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// BenchmarkExport500 stores OTLP/HTTP requests of 500 spans (10 attributes
// each) through the receiver (handler.ServeHTTP, no network), in one run:
// sink=items into this example's store, handed the spans in the
// validation pass (storage.ItemSink); sink=bytes into the same Pebble
// store as a byte sink (storage.Sink) that walks each request again with
// otlpview, as the example did before the item sink; sink=discard into
// the repo's discard sink, which keeps nothing. The ratios of their
// cpu-ns/span are the cost of the store, and what the item sink saves.
// cpu-ns/span is the process's user and system CPU time (Pebble's
// background flushes and compactions included, the wait for fsync not),
// per span.
func BenchmarkExport500(b *testing.B) {
	const spans = 500
	gen := otlpclient.NewSpanGenerator(spans, 10, 1)
	batches := make([][]byte, 64) // distinct trace ids, as from a real fleet
	for i := range batches {
		batches[i] = gen.AppendBatch(nil)
	}
	open := func(b *testing.B) *store {
		db, err := pebble.Open(b.TempDir(), &pebble.Options{Logger: quietPebble{}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return &store{db: db}
	}
	for _, sink := range []struct {
		name string
		cfg  func(b *testing.B) handler.Config
	}{
		{"discard", func(*testing.B) handler.Config { return handler.Config{Sink: &discard.Sink{}} }},
		{"bytes", func(b *testing.B) handler.Config { return handler.Config{Sink: &byteStore{s: open(b)}} }},
		{"items", func(b *testing.B) handler.Config { return handler.Config{Items: open(b)} }},
	} {
		b.Run("sink="+sink.name, func(b *testing.B) {
			cfg := sink.cfg(b)
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			h := handler.New(cfg)
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
	}
}

// byteStore is the store as a byte sink: Write walks the validated request
// again with otlpview and hands each span to the same putSpan, in one
// Pebble batch.
type byteStore struct {
	s    *store
	decs sync.Pool // of *otlpview.TracesDecoder
}

func (bs *byteStore) Write(ctx context.Context, sig storage.Signal, data []byte, _ int) error {
	it, err := bs.s.BeginItems(ctx, sig)
	if err != nil {
		return err
	}
	w := it.(*writer)
	dec, _ := bs.decs.Get().(*otlpview.TracesDecoder)
	if dec == nil {
		dec = new(otlpview.TracesDecoder)
	}
	err = dec.Decode(data, w.putSpan)
	bs.decs.Put(dec)
	if err != nil {
		w.Discard()
		return fmt.Errorf("cannot store span: %w", err)
	}
	return w.Commit(ctx)
}

func (bs *byteStore) Close() error { return nil }

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

// quietPebble keeps Pebble's informational lines out of the benchmark's
// output, which benchstat reads.
type quietPebble struct{}

func (quietPebble) Infof(string, ...any)         {}
func (quietPebble) Errorf(string, ...any)        {}
func (quietPebble) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
