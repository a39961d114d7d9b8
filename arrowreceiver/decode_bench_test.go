//go:build otelarrow

package arrowreceiver

import (
	"context"
	"testing"

	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// BenchmarkDecodeTraces decodes a stream of producer batches (1,000 spans
// each) to OTLP: ns per span, and the profile of what a batch costs.
func BenchmarkDecodeTraces(b *testing.B) {
	prod := arrow_record.NewProducer()
	defer prod.Close()
	var bars []*arrowpb.BatchArrowRecords
	for i := range 16 {
		bar, err := prod.BatchArrowRecordsFromTraces(makeTraces(i, 1000, 0))
		if err != nil {
			b.Fatal(err)
		}
		bars = append(bars, bar)
	}
	benchDecode(b, bars, otlp.Traces, "ns/span")
}

// BenchmarkDecodeLogs decodes a stream of producer batches (1,000 log
// records each) to OTLP: ns per log record.
func BenchmarkDecodeLogs(b *testing.B) {
	prod := arrow_record.NewProducer()
	defer prod.Close()
	var bars []*arrowpb.BatchArrowRecords
	for i := range 16 {
		bar, err := prod.BatchArrowRecordsFromLogs(makeLogs(i, 1000))
		if err != nil {
			b.Fatal(err)
		}
		bars = append(bars, bar)
	}
	benchDecode(b, bars, otlp.Logs, "ns/log")
}

// BenchmarkDecodeMetrics decodes a stream of producer batches (3,000
// points each: gauges, sums, histograms) to OTLP: ns per point.
func BenchmarkDecodeMetrics(b *testing.B) {
	prod := arrow_record.NewProducer()
	defer prod.Close()
	var bars []*arrowpb.BatchArrowRecords
	for i := range 16 {
		bar, err := prod.BatchArrowRecordsFromMetrics(makeMetrics(i, 1000))
		if err != nil {
			b.Fatal(err)
		}
		bars = append(bars, bar)
	}
	benchDecode(b, bars, otlp.Metrics, "ns/point")
}

// BenchmarkDecodeRandomTraces decodes random traces (every field, events,
// links, attributes of every type: randomTraces), 16 batches of up to
// 400 spans: ns per span.
func BenchmarkDecodeRandomTraces(b *testing.B) {
	benchDecode(b, randomStream(b, 1, 16, 400), otlp.Traces, "ns/span")
}

func benchDecode(b *testing.B, bars []*arrowpb.BatchArrowRecords, sig otlp.Signal, unit string) {
	p := ingest.New(ingest.Config{Sink: &discard.Sink{}})
	b.ReportAllocs()
	b.ResetTimer()
	var buf []byte
	items := 0
	for b.Loop() {
		d := newDecoder(context.Background(), p, DefaultMemoryLimit, DefaultMaxBatchRows)
		for _, bar := range bars {
			out, n, err := d.decode(bar, sig, buf[:0])
			if err != nil {
				b.Fatal(err)
			}
			buf, items = out, items+n
		}
		d.close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(items), unit)
}
