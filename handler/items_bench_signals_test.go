package handler

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlppb"
	"github.com/otlp-lite/otlp-lite/otlpview"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// BenchmarkExportGRPC500x10SinkLogs and BenchmarkExportGRPC500x10SinkMetrics
// are BenchmarkExportGRPC500x10Sink for the other two signals with
// ItemSink visitors: 500 log records, or 500 data points (50 metrics,
// half sums, half histograms of 9 buckets), each with 10 attributes, in
// one gRPC request; the byte sink (discard) against an item sink whose
// visitor does nothing (sink=items-empty: the cost of the views in the
// validation pass) and one that reads each item's scalars (items-read).
// cpu-ns/item is the process's CPU time per log record or data point.
// Run with -count 6 and compare with benchstat -col /sink.
func BenchmarkExportGRPC500x10SinkLogs(b *testing.B) {
	read := func(_ *otlpview.Resource, _ *otlpview.Scope, r *otlpview.LogRecord) error {
		benchSum += uint64(r.TraceID[0]) + uint64(r.SpanID[7]) + uint64(len(r.SeverityText)) + r.TimeUnixNano + uint64(len(r.Body.Str()))
		return nil
	}
	empty := func(*otlpview.Resource, *otlpview.Scope, *otlpview.LogRecord) error { return nil }
	benchSignalSinks(b, "/opentelemetry.proto.collector.logs.v1.LogsService/Export", logs500x10(), 500,
		&otlpdecode.Visitor{LogRecord: empty}, &otlpdecode.Visitor{LogRecord: read})
}

func BenchmarkExportGRPC500x10SinkMetrics(b *testing.B) {
	read := func(_ *otlpview.Resource, _ *otlpview.Scope, m *otlpview.Metric, p *otlpview.DataPoint) error {
		benchSum += uint64(len(m.Name))
		switch {
		case p.Number != nil:
			benchSum += p.Number.TimeUnixNano + math.Float64bits(p.Number.AsDouble)
		case p.Histogram != nil:
			benchSum += p.Histogram.TimeUnixNano + p.Histogram.Count + uint64(len(p.Histogram.BucketCounts))
		}
		return nil
	}
	empty := func(*otlpview.Resource, *otlpview.Scope, *otlpview.Metric, *otlpview.DataPoint) error { return nil }
	benchSignalSinks(b, "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", metrics500x10(), 500,
		&otlpdecode.Visitor{DataPoint: empty}, &otlpdecode.Visitor{DataPoint: read})
}

func benchSignalSinks(b *testing.B, path string, payload []byte, items int, empty, read *otlpdecode.Visitor) {
	for _, bb := range []struct {
		name string
		cfg  Config
	}{
		{"bytes", Config{}},
		{"items-empty", Config{Items: &visitorEngine{v: *empty}}},
		{"items-read", Config{Items: &visitorEngine{v: *read}}},
	} {
		b.Run("sink="+bb.name, func(b *testing.B) {
			cpu := processCPU()
			benchmarkExportItems(b, bb.cfg, path, payload)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*items), "ns/item")
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N*items), "cpu-ns/item")
		})
	}
}

// benchmarkExportItems is benchmarkExportWith for a request of any signal
// (that one counts the items as spans), uncompressed gRPC in one read.
func benchmarkExportItems(b *testing.B, cfg Config, path string, payload []byte) {
	body := frame(payload)
	if cfg.Items == nil {
		cfg.Sink = &discard.Sink{}
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	h := New(cfg)
	rd := bytes.NewReader(body)
	req, _ := http.NewRequest("POST", "http://x"+path, io.NopCloser(&frameReader{rd, 0}))
	req.ProtoMajor = 2
	req.Header.Set("Content-Type", "application/grpc")
	w := &nopResponseWriter{h: http.Header{}}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rd.Reset(body)
		clear(w.h)
		h.ServeHTTP(w, req)
		if w.status != 0 && w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
		if s := w.h.Get("Grpc-Status"); s != "" && s != "0" {
			b.Fatalf("grpc-status %s: %s", s, w.h.Get("Grpc-Message"))
		}
	}
}

// logs500x10 is an ExportLogsServiceRequest of 500 log records, each with
// times, severity, a string body, trace and span ids, flags and 10 string
// attributes.
func logs500x10() []byte {
	var recs []pbtest.PB
	for i := range 500 {
		r := pbtest.PB{}.Fixed64(otlppb.LogRecordTimeUnixNano, 1_700_000_000_000_000_000+uint64(i)).
			Fixed64(otlppb.LogRecordObservedTimeUnixNano, 1_700_000_000_000_000_001+uint64(i)).
			Varint(otlppb.LogRecordSeverityNumber, 9).Str(otlppb.LogRecordSeverityText, "INFO").
			Msg(otlppb.LogRecordBody, pbtest.PB{}.Str(otlppb.AnyValueStringValue, fmt.Sprintf("request %d served in 12ms", i)))
		for a := range 10 {
			r = r.Msg(otlppb.LogRecordAttributes, pbtest.StrAttr(fmt.Sprintf("attr.%d", a), fmt.Sprintf("value-%d-%d", i, a)))
		}
		r = r.Fixed32(otlppb.LogRecordFlags, 1).Msg(otlppb.LogRecordTraceID, pbtest.IDs(16, byte(i)|1)).
			Msg(otlppb.LogRecordSpanID, pbtest.IDs(8, byte(i)|1))
		recs = append(recs, r)
	}
	return pbtest.Request(pbtest.PB{}.Msg(1, pbtest.StrAttr("service.name", "checkout")), pbtest.PB{}.Str(1, "bench"), recs)
}

// metrics500x10 is an ExportMetricsServiceRequest of 50 metrics of 10
// data points each, every point with 10 string attributes: 25 cumulative
// sums of doubles and 25 histograms of 8 bounds.
func metrics500x10() []byte {
	var metrics []pbtest.PB
	for m := range 50 {
		histogram := m%2 == 1
		data := pbtest.PB{}
		for p := range 10 {
			pt := pbtest.PB{}
			for a := range 10 {
				pt = pt.Msg(otlppb.NumberDataPointAttributes, pbtest.StrAttr(fmt.Sprintf("attr.%d", a), fmt.Sprintf("value-%d-%d", p, a)))
			}
			pt = pt.Fixed64(otlppb.NumberDataPointStartTimeUnixNano, 1_700_000_000_000_000_000).
				Fixed64(otlppb.NumberDataPointTimeUnixNano, 1_700_000_000_000_000_000+uint64(p))
			if histogram {
				pt = pbtest.PB{}
				for a := range 10 {
					pt = pt.Msg(otlppb.HistogramDataPointAttributes, pbtest.StrAttr(fmt.Sprintf("attr.%d", a), fmt.Sprintf("value-%d-%d", p, a)))
				}
				var counts, bounds pbtest.PB
				for k := range 9 {
					counts = counts.Append(pbtest.PB{}.Fixed64(1, uint64(k))[1:])
					if k < 8 {
						bounds = bounds.Append(pbtest.PB{}.Fixed64(1, math.Float64bits(float64(k*10)))[1:])
					}
				}
				pt = pt.Fixed64(otlppb.HistogramDataPointStartTimeUnixNano, 1_700_000_000_000_000_000).
					Fixed64(otlppb.HistogramDataPointTimeUnixNano, 1_700_000_000_000_000_000+uint64(p)).
					Fixed64(otlppb.HistogramDataPointCount, 36).Fixed64(otlppb.HistogramDataPointSum, math.Float64bits(1234.5)).
					Msg(otlppb.HistogramDataPointBucketCounts, counts).Msg(otlppb.HistogramDataPointExplicitBounds, bounds)
			} else {
				pt = pt.Fixed64(otlppb.NumberDataPointAsDouble, math.Float64bits(float64(p)*1.5))
			}
			data = data.Msg(otlppb.SumDataPoints, pt)
		}
		metric := pbtest.PB{}.Str(otlppb.MetricName, fmt.Sprintf("bench.metric.%d", m)).Str(otlppb.MetricUnit, "ms")
		if histogram {
			metric = metric.Msg(otlppb.MetricHistogram, data.Varint(otlppb.HistogramAggregationTemporality, 2))
		} else {
			metric = metric.Msg(otlppb.MetricSum, data.Varint(otlppb.SumAggregationTemporality, 2).Varint(otlppb.SumIsMonotonic, 1))
		}
		metrics = append(metrics, metric)
	}
	return pbtest.Request(pbtest.PB{}.Msg(1, pbtest.StrAttr("service.name", "checkout")), pbtest.PB{}.Str(1, "bench"), metrics)
}

// visitorEngine is benchEngine with any Visitor: an ItemSink whose
// batches are pooled, storing nothing.
type visitorEngine struct {
	v       otlpdecode.Visitor
	batches sync.Pool
}

type visitorBatch struct {
	e *visitorEngine
	v otlpdecode.Visitor
}

func (e *visitorEngine) BeginItems(context.Context, storage.Signal) (storage.ItemBatch, error) {
	bb, _ := e.batches.Get().(*visitorBatch)
	if bb == nil {
		bb = &visitorBatch{e: e, v: e.v}
	}
	return bb, nil
}

func (e *visitorEngine) Close() error { return nil }

func (bb *visitorBatch) Visitor() *otlpdecode.Visitor { return &bb.v }
func (bb *visitorBatch) Commit(context.Context) error { bb.e.batches.Put(bb); return nil }
func (bb *visitorBatch) Discard()                     { bb.e.batches.Put(bb) }

// TestSignalBenchPayloads: the benchmarks' payloads are valid, of 500
// items each, every one visited.
func TestSignalBenchPayloads(t *testing.T) {
	logs, metrics := logs500x10(), metrics500x10()
	n := 0
	opts := &otlpdecode.Options{ValidateUTF8: true, Visit: &otlpdecode.Visit{Visitor: &otlpdecode.Visitor{
		LogRecord: func(*otlpview.Resource, *otlpview.Scope, *otlpview.LogRecord) error { n++; return nil },
		DataPoint: func(*otlpview.Resource, *otlpview.Scope, *otlpview.Metric, *otlpview.DataPoint) error {
			n++
			return nil
		},
	}}}
	if res, err := otlpdecode.CheckLogs(logs, opts); err != nil || res.Items != 500 || res.Rejected != 0 || n != 500 {
		t.Fatalf("logs: %+v, %v, %d visited", res, err, n)
	}
	n = 0
	if res, err := otlpdecode.CheckMetrics(metrics, opts); err != nil || res.Items != 500 || res.Rejected != 0 || n != 500 {
		t.Fatalf("metrics: %+v, %v, %d visited", res, err, n)
	}
}
