package stefreceiver

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
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

// writeRealistic writes a stream shaped like an SDK's metrics (the
// OpenTelemetry demo's): resources of 12 attributes, each with 30 sum
// metrics of 5 points of 3 attributes, one frame per resource (as the
// stefexporter flushes per request); with odd, a point in 7 also carries
// an exemplar, an array attribute or a key-value list (the slow paths).
func writeRealistic(tb testing.TB, w *otelstef.MetricsWriter, resources int, odd bool) (points int) {
	for res := range resources {
		for m := range 30 {
			for p := range 5 {
				r := &w.Record
				ra := r.Resource().Attributes()
				ra.EnsureLen(12)
				for i := range 12 {
					ra.SetKey(i, fmt.Sprintf("resource.key.%d", i))
					ra.Value(i).SetString(fmt.Sprintf("value-%d-%d", res%4, i))
				}
				r.Scope().SetName("go.opentelemetry.io/contrib/instrumentation/runtime")
				r.Scope().SetVersion("0.62.0")
				r.Metric().SetName(fmt.Sprintf("process.runtime.metric.%d", m))
				r.Metric().SetUnit("By")
				r.Metric().SetType(otelstef.MetricTypeSum)
				r.Metric().SetAggregationTemporality(otelstef.AggregationTemporalityCumulative)
				r.Metric().SetMonotonic(m%2 == 0)
				a := r.Attributes()
				a.EnsureLen(3)
				a.SetKey(0, "http.route")
				a.Value(0).SetString(fmt.Sprintf("/api/%d", p))
				a.SetKey(1, "http.request.method")
				a.Value(1).SetString("GET")
				a.SetKey(2, "http.response.status_code")
				a.Value(2).SetInt64(200 + int64(p))
				if odd && (m*5+p)%7 == 0 {
					a.EnsureLen(5)
					a.SetKey(3, "list")
					arr := a.Value(3)
					arr.SetType(otelstef.AnyValueTypeArray)
					arr.Array().EnsureLen(2)
					arr.Array().At(0).SetString("x")
					arr.Array().At(1).SetFloat64(1.5)
					a.SetKey(4, "flag")
					a.Value(4).SetBool(true)
					r.Point().Exemplars().EnsureLen(1)
					r.Point().Exemplars().At(0).SetTimestamp(7)
					r.Point().Exemplars().At(0).Value().SetFloat64(2.5)
				} else {
					r.Point().Exemplars().EnsureLen(0)
				}
				r.Point().SetStartTimestamp(1700000000000000000)
				r.Point().SetTimestamp(uint64(1700000010000000000 + p))
				if p%2 == 0 {
					r.Point().Value().SetInt64(int64(res*1000 + m*5 + p))
				} else {
					r.Point().Value().SetFloat64(float64(m) + 0.25)
				}
				if err := w.Write(); err != nil {
					tb.Fatal(err)
				}
				points++
			}
		}
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
	}
	return points
}

// BenchmarkDecodeMetricsSDK decodes an SDK-shaped stream (writeRealistic,
// 40 resources, 6,000 points, zstd) to OTLP protobuf; ns/op is per point.
func BenchmarkDecodeMetricsSDK(b *testing.B) {
	var buf pkg.MemChunkWriter
	w, err := otelstef.NewMetricsWriter(&buf, pkg.WriterOptions{Compression: pkg.CompressionZstd})
	if err != nil {
		b.Fatal(err)
	}
	n := writeRealistic(b, w, 40, false)
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
	b.ReportMetric(float64(len(src))/float64(n), "stef-B/point")
	b.ReportMetric(float64(len(out))/float64(n), "otlp-B/point")
}

// The decoder's shortcuts (fastPaths) write exactly the bytes of the
// general path: on an SDK-shaped stream with exemplars, array attributes
// and booleans mixed in, and on the fuzz seeds (real streams).
func TestFastPathsWriteTheSameBytes(t *testing.T) {
	var buf pkg.MemChunkWriter
	w, err := otelstef.NewMetricsWriter(&buf, pkg.WriterOptions{Compression: pkg.CompressionZstd})
	if err != nil {
		t.Fatal(err)
	}
	n := writeRealistic(t, w, 6, true)
	fast, slow := decodeBothWays(t, DecodeMetrics, buf.Bytes())
	if !bytes.Equal(fast, slow) {
		t.Fatalf("fast paths wrote %d bytes, the general path %d, not the same", len(fast), len(slow))
	}
	res, err := otlpdecode.CheckMetrics(fast, &otlpdecode.Options{})
	if err != nil || res.Items != n || res.Rejected != 0 {
		t.Fatalf("%d points of %d (%d rejected: %s), %v", res.Items, n, res.Rejected, res.FirstRejection, err)
	}
	for _, dir := range []string{"FuzzDecodeMetrics", "FuzzDecodeSpans"} {
		decode := DecodeMetrics
		if dir == "FuzzDecodeSpans" {
			decode = DecodeSpans
		}
		seeds, _ := filepath.Glob(filepath.Join("testdata", "fuzz", dir, "*"))
		for _, s := range seeds {
			data := fuzzSeed(t, s)
			fast, slow := decodeBothWays(t, decode, data)
			if !bytes.Equal(fast, slow) {
				t.Errorf("%s: fast paths wrote other bytes than the general path", s)
			}
		}
	}
}

func decodeBothWays(t *testing.T, decode func([]byte, io.Reader, int) ([]byte, uint64, error), data []byte) (fast, slow []byte) {
	t.Helper()
	fast, _, _ = decode(nil, bytes.NewReader(data), 64<<20)
	fastPaths = false
	defer func() { fastPaths = true }()
	slow, _, _ = decode(nil, bytes.NewReader(data), 64<<20)
	return fast, slow
}

// fuzzSeed reads the []byte of a "go test fuzz v1" corpus file.
func fuzzSeed(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, lit, ok := strings.Cut(string(b), "[]byte(")
	if !ok {
		t.Fatalf("%s: not a []byte seed", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(lit), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}
