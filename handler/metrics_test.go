package handler

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"
)

func TestMetricsCountOutcomes(t *testing.T) {
	h := New(Config{Sink: &memSink{}, Logger: quietLogger()})
	c := startHandler(t, h)
	c.Invoke(context.Background(), traceExport, traceRequest(goodID, goodID, []byte{1}))
	c.Invoke(context.Background(), traceExport, []byte{0xff})
	resp, _ := http.Post(c.BaseURL+"/v1/traces", "application/x-protobuf", bytes.NewReader(traceRequest(goodID)))
	resp.Body.Close()
	var buf bytes.Buffer
	h.Metrics().WritePrometheus(&buf)
	out := buf.String()
	for _, want := range []string{
		`otelcol_receiver_accepted_spans_total{receiver="otlp",transport="grpc"} 2`,
		`otelcol_receiver_failed_spans_total{receiver="otlp",transport="grpc"} 1`,
		`otelcol_receiver_accepted_spans_total{receiver="otlp",transport="http"} 1`,
		`otlplite_requests_total{transport="grpc",signal="traces",code="OK"} 1`,
		`otlplite_requests_total{transport="grpc",signal="traces",code="INVALID_ARGUMENT"} 1`,
		`otlplite_storage_write_seconds_count{signal="traces"} 2`,
		`otlplite_storage_write_seconds_bucket{signal="traces",le="0.0005"} `,
		`otlplite_storage_write_seconds_bucket{signal="traces",le="10"} 2`,
		`otlplite_storage_write_seconds_bucket{signal="traces",le="+Inf"} 2`,
		`otlplite_admission_bytes_in_flight 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	// The handler keeps its own set: nothing lands in the library's
	// global default set.
	for _, name := range metrics.GetDefaultSet().ListMetricNames() {
		if strings.HasPrefix(name, "otlplite_") || strings.HasPrefix(name, "otelcol_") {
			t.Errorf("%s registered in the default set", name)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}
