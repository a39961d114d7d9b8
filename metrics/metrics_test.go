package metrics

import (
	"bytes"
	"strings"
	"testing"
)

func TestWritePrometheus(t *testing.T) {
	r := NewRegistry()
	c := r.Counter("otelcol_receiver_accepted_spans_total", "Spans accepted.", "receiver", "transport")
	c.With("otlp", "grpc").Add(5)
	c.With("otlp", "http").Inc()
	g := r.Gauge("otlplite_bytes_in_flight", "Bytes.")
	g.With().Set(42)
	g.With().Add(-2)
	h := r.Histogram("otlplite_storage_write_seconds", "Latency.", []float64{0.1, 1}, "signal")
	h.With("traces").Observe(0.05)
	h.With("traces").Observe(0.5)
	h.With("traces").Observe(5)
	r.GaugeFunc("otlplite_up", "Up.", func() float64 { return 1 })
	r.Counter("escaped_total", "x", "v").With("a\"b\\c\nd").Inc()
	var buf bytes.Buffer
	r.WritePrometheus(&buf)
	want := `# HELP otelcol_receiver_accepted_spans_total Spans accepted.
# TYPE otelcol_receiver_accepted_spans_total counter
otelcol_receiver_accepted_spans_total{receiver="otlp",transport="grpc"} 5
otelcol_receiver_accepted_spans_total{receiver="otlp",transport="http"} 1
# HELP otlplite_bytes_in_flight Bytes.
# TYPE otlplite_bytes_in_flight gauge
otlplite_bytes_in_flight 40
# HELP otlplite_storage_write_seconds Latency.
# TYPE otlplite_storage_write_seconds histogram
otlplite_storage_write_seconds_bucket{signal="traces",le="0.1"} 1
otlplite_storage_write_seconds_bucket{signal="traces",le="1"} 2
otlplite_storage_write_seconds_bucket{signal="traces",le="+Inf"} 3
otlplite_storage_write_seconds_sum{signal="traces"} 5.55
otlplite_storage_write_seconds_count{signal="traces"} 3
# HELP otlplite_up Up.
# TYPE otlplite_up gauge
otlplite_up 1
# HELP escaped_total x
# TYPE escaped_total counter
escaped_total{v="a\"b\\c\nd"} 1
`
	if got := buf.String(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestSameSeriesIsShared(t *testing.T) {
	r := NewRegistry()
	a := r.Counter("x_total", "x", "l").With("v")
	b := r.Counter("x_total", "x", "l").With("v")
	a.Inc()
	b.Inc()
	if a.Value() != 2 {
		t.Fatal("series not shared")
	}
	defer func() {
		if recover() == nil || !strings.Contains("", "") {
			t.Fatal("want a panic for a shape mismatch")
		}
	}()
	r.Gauge("x_total", "x")
}

func BenchmarkCounterInc(b *testing.B) {
	c := NewRegistry().Counter("x_total", "x", "l").With("v")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Inc()
		}
	})
}
