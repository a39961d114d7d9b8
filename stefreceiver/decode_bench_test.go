package stefreceiver

import (
	"bytes"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"
)

// BenchmarkDecodeMetrics decodes a STEF stream of 10,000 sum points
// (the library's writer, zstd) to OTLP protobuf; ns/op is per point.
func BenchmarkDecodeMetrics(b *testing.B) {
	var buf pkg.MemChunkWriter
	w, err := otelstef.NewMetricsWriter(&buf, pkg.WriterOptions{Compression: pkg.CompressionZstd})
	if err != nil {
		b.Fatal(err)
	}
	const n = 10000
	for i := 0; i < n; i += 1000 {
		writePoints(b, w, 1000, i)
		w.Flush()
	}
	src := buf.Bytes()
	var out []byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += n {
		out, _, err = DecodeMetrics(out[:0], bytes.NewReader(src), 64<<20)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(src))/n, "stef-B/point")
	b.ReportMetric(float64(len(out))/n, "otlp-B/point")
}
