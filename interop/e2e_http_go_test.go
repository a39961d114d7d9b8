package interop

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestGoSDKHTTP is TestGoSDK over OTLP/HTTP: the Go SDK's otlptracehttp,
// otlpmetrichttp and otlploghttp exporters (HTTP/1.1, binary protobuf),
// uncompressed and gzip, against the -http-addr port and against the gRPC
// port, which must answer OTLP/HTTP too (one port for everything). The
// "json" case sends traces with otlptracehttp's OTLP/JSON encoding (the SDK's
// own JSON encoder, not ours); the metrics and logs exporters have no JSON
// option. Every acknowledged request must be stored identical to what the
// exporter sent, and every value set through the API must be found in its
// OTLP field (the checks of TestGoSDK).
func TestGoSDKHTTP(t *testing.T) {
	for _, c := range []struct {
		name        string
		grpcPort    bool // send to the gRPC listener instead of -http-addr
		compression string
		jsonTraces  bool
	}{
		{"http-port/none", false, "none", false},
		{"http-port/gzip", false, "gzip", false},
		{"http-port/json-gzip", false, "gzip", true},
		{"grpc-port/none", true, "none", false},
		{"grpc-port/gzip", true, "gzip", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dataDir := t.TempDir()
			srv := startServerHTTP(t, dataDir)
			addr := srv.httpAddr
			if c.grpcPort {
				addr = srv.addr
			}
			testGoSDKHTTP(t, srv, addr, c.compression, c.jsonTraces)
		})
	}
}

func testGoSDKHTTP(t *testing.T, srv *server, addr, compression string, jsonTraces bool) {
	run := fmt.Sprintf("go-http-%s-%d", compression, time.Now().UnixNano())
	res := resource.NewSchemaless(
		attribute.String("service.name", "otlp-lite-interop-go"),
		attribute.String("interop.run", run),
		attribute.Int64("interop.pid", 4242),
	)
	capt := newHTTPCapture()
	defer capt.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	want := sendGoHTTP(ctx, t, addr, compression, jsonTraces, res, capt)
	srv.stop()

	sum := capt.summary()
	if len(capt.failures) > 0 || len(capt.partial) > 0 {
		t.Errorf("exports were not all fully successful: %s", sum)
	}
	wantEncoding := compression
	if compression == "none" {
		wantEncoding = ""
	}
	for e := range capt.encodings {
		if e != wantEncoding {
			t.Errorf("a request was sent with Content-Encoding %q, want %q: %s", e, wantEncoding, sum)
		}
	}
	for p := range capt.protos {
		// http.Transport speaks HTTP/1.1 to http:// URLs: on the gRPC
		// port this proves the h2c listener answers plain HTTP/1.1.
		if p != "HTTP/1.1" {
			t.Errorf("a response came over %s, want HTTP/1.1: %s", p, sum)
		}
	}
	if jsonTraces && capt.contentTypes["application/json"] == 0 {
		t.Errorf("no request was sent as application/json: %s", sum)
	}
	if len(capt.traces) == 0 || len(capt.metrics) == 0 || len(capt.logs) == 0 {
		t.Fatalf("the SDK did not export every signal: %s", sum)
	}
	t.Logf("%s", sum)

	storedTraces := scanStore(t, srv.dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	storedMetrics := scanStore(t, srv.dataDir, storage.Metrics, func() *colmetricspb.ExportMetricsServiceRequest { return new(colmetricspb.ExportMetricsServiceRequest) })
	storedLogs := scanStore(t, srv.dataDir, storage.Logs, func() *collogspb.ExportLogsServiceRequest { return new(collogspb.ExportLogsServiceRequest) })
	matchMessages(t, "traces", capt.traces, storedTraces)
	matchMessages(t, "metrics", capt.metrics, storedMetrics)
	matchMessages(t, "logs", capt.logs, storedLogs)

	checkGoTraces(t, run, want, storedTraces)
	checkGoMetrics(t, run, storedMetrics)
	checkGoLogs(t, run, want, storedLogs)
}

// sendGoHTTP sends the Go SDK test's traces, metrics and logs to addr with
// the OTLP/HTTP exporters (binary protobuf; traces as OTLP/JSON with
// jsonTraces), through capt.
func sendGoHTTP(ctx context.Context, t *testing.T, addr, compression string, jsonTraces bool, res *resource.Resource, capt *httpCapture) goWant {
	t.Helper()
	traceOpts := []otlptracehttp.Option{
		otlptracehttp.WithEndpoint(addr),
		otlptracehttp.WithInsecure(),
		otlptracehttp.WithHTTPClient(capt.client()),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
	}
	metricOpts := []otlpmetrichttp.Option{
		otlpmetrichttp.WithEndpoint(addr),
		otlpmetrichttp.WithInsecure(),
		otlpmetrichttp.WithHTTPClient(capt.client()),
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}),
	}
	logOpts := []otlploghttp.Option{
		otlploghttp.WithEndpoint(addr),
		otlploghttp.WithInsecure(),
		otlploghttp.WithHTTPClient(capt.client()),
		otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}),
	}
	if compression == "gzip" {
		traceOpts = append(traceOpts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
		metricOpts = append(metricOpts, otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression))
		logOpts = append(logOpts, otlploghttp.WithCompression(otlploghttp.GzipCompression))
	}
	if jsonTraces {
		traceOpts = append(traceOpts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	}
	texp, err := otlptracehttp.New(ctx, traceOpts...)
	if err != nil {
		t.Fatalf("cannot create otlptracehttp exporter: %v", err)
	}
	want := emitGoTraces(ctx, t, texp, res)
	mexp, err := otlpmetrichttp.New(ctx, metricOpts...)
	if err != nil {
		t.Fatalf("cannot create otlpmetrichttp exporter: %v", err)
	}
	emitGoMetrics(ctx, t, mexp, res)
	lexp, err := otlploghttp.New(ctx, logOpts...)
	if err != nil {
		t.Fatalf("cannot create otlploghttp exporter: %v", err)
	}
	emitGoLogs(ctx, t, lexp, res, want)
	return want
}
