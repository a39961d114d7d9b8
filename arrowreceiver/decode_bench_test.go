//go:build otelarrow

package arrowreceiver

import (
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
	p := ingest.New(ingest.Config{Sink: &discard.Sink{}})
	b.ReportAllocs()
	b.ResetTimer()
	var buf []byte
	spans := 0
	for b.Loop() {
		d := newDecoder(p, DefaultMemoryLimit, DefaultMaxBatchRows)
		for _, bar := range bars {
			out, n, err := d.decode(bar, otlp.Traces, buf[:0])
			if err != nil {
				b.Fatal(err)
			}
			buf, spans = out, spans+n
		}
		d.close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans), "ns/span")
}
