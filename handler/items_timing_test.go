package handler

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpview"
	"github.com/otlp-lite/otlp-lite/storage"
)

// BenchmarkExportGRPC500x10Sink compares, in one run, the byte sink
// (discard) with the decoded-item sink (storage.ItemSink) at gRPC 500x10:
// sink=items-empty has a Span visitor that does nothing (the cost
// of the views in the validation pass), items-read one that reads every
// span's ids, name and times. The target: items at most 1.2x
// bytes per span. Run with -count 6 and compare the sub-benchmarks with
// benchstat -col /sink.
func BenchmarkExportGRPC500x10Sink(b *testing.B) {
	payload := loadPayload(b, "traces_500x10.pb")
	empty := func(*otlpview.Resource, *otlpview.Scope, *otlpview.Span) error { return nil }
	read := func(_ *otlpview.Resource, _ *otlpview.Scope, sp *otlpview.Span) error {
		benchSum += uint64(sp.TraceID[0]) + uint64(sp.SpanID[7]) + uint64(len(sp.Name)) + sp.StartTimeUnixNano + sp.EndTimeUnixNano
		return nil
	}
	for _, bb := range []struct {
		name string
		cfg  Config
	}{
		{"bytes", Config{}},
		{"items-empty", Config{Items: &benchEngine{span: empty}}},
		{"items-read", Config{Items: &benchEngine{span: read}}},
	} {
		b.Run("sink="+bb.name, func(b *testing.B) {
			cpu := processCPU()
			benchmarkExportWith(b, bb.cfg, nil, traceExport, "application/grpc", compression.Identity, payload, 0)
			// The process's CPU time per span, the handler's setup
			// included (negligible): less disturbed than wall time
			// by other processes on a shared host.
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*500), "cpu-ns/span")
		})
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchSum keeps the reading visitor's reads from being optimised away
// (the benchmark runs one request at a time: no race).
var benchSum uint64

// benchEngine is an ItemSink whose batches are pooled, each with its
// Visitor made once, as an engine keeping the request path free of
// allocations does; Commit stores nothing.
type benchEngine struct {
	span    func(*otlpview.Resource, *otlpview.Scope, *otlpview.Span) error
	batches sync.Pool
}

type benchBatch struct {
	e *benchEngine
	v otlpdecode.Visitor
}

func (e *benchEngine) BeginItems(context.Context, storage.Signal) (storage.ItemBatch, error) {
	bb, _ := e.batches.Get().(*benchBatch)
	if bb == nil {
		bb = &benchBatch{e: e, v: otlpdecode.Visitor{Span: e.span}}
	}
	return bb, nil
}

func (e *benchEngine) Close() error { return nil }

func (bb *benchBatch) Visitor() *otlpdecode.Visitor { return &bb.v }
func (bb *benchBatch) Commit(context.Context) error { bb.e.batches.Put(bb); return nil }
func (bb *benchBatch) Discard()                     { bb.e.batches.Put(bb) }
