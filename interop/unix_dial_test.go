package interop

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the server accepts gzip, as the Collector's does
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// unixCollector is grpc-go's server with the OTLP collector services of
// go.opentelemetry.io/proto/otlp, keeping every request and the
// :authority it came with.
type unixCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	colmetricspb.UnimplementedMetricsServiceServer
	collogspb.UnimplementedLogsServiceServer

	mu          sync.Mutex
	traces      []*coltracepb.ExportTraceServiceRequest
	metrics     []*colmetricspb.ExportMetricsServiceRequest
	logs        []*collogspb.ExportLogsServiceRequest
	authorities map[string]int
}

func (c *unixCollector) seen(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, a := range md.Get(":authority") {
		c.authorities[a]++
	}
}

func (c *unixCollector) Export(ctx context.Context, r *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen(ctx)
	c.traces = append(c.traces, r)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type unixMetrics struct{ *unixCollector }

func (c unixMetrics) Export(ctx context.Context, r *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen(ctx)
	c.metrics = append(c.metrics, r)
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}

type unixLogs struct{ *unixCollector }

func (c unixLogs) Export(ctx context.Context, r *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen(ctx)
	c.logs = append(c.logs, r)
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// TestOtlpclientToGrpcGoOverUnixSocket: grpc-go's server with the OTLP
// collector services listens on a Unix socket; otlpclient's unary
// exporter sends traces, metrics and logs to it as unix:PATH and as
// unix:///PATH, with and without gzip, and grpc-go gets every request
// equal field by field (proto.Equal), each with the :authority
// "localhost".
func TestOtlpclientToGrpcGoOverUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "otlp.sock")
	if len(path) > 107 {
		t.Skipf("t.TempDir() gives a socket path of %d bytes, more than a Unix socket address holds (set TMPDIR to a shorter directory)", len(path))
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	col := &unixCollector{authorities: map[string]int{}}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, col)
	colmetricspb.RegisterMetricsServiceServer(srv, unixMetrics{col})
	collogspb.RegisterLogsServiceServer(srv, unixLogs{col})
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)

	res := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", strV("unix-dial")), kv("host.pid", intV(42))}}
	scope := &commonpb.InstrumentationScope{Name: "unix", Version: "1.0", Attributes: []*commonpb.KeyValue{kv("s", boolV(true))}}
	var sentTraces []*coltracepb.ExportTraceServiceRequest
	var sentMetrics []*colmetricspb.ExportMetricsServiceRequest
	var sentLogs []*collogspb.ExportLogsServiceRequest
	ctx := context.Background()
	for i, endpoint := range []string{"unix:" + path, "unix://" + path} {
		for j, codec := range []compression.Codec{compression.Identity, compression.Gzip} {
			n := byte(i*2 + j + 1)
			tr := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
				Resource: res, SchemaUrl: "https://opentelemetry.io/schemas/1.26.0",
				ScopeSpans: []*tracepb.ScopeSpans{{Scope: scope, Spans: []*tracepb.Span{{
					TraceId: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, n}, SpanId: []byte{1, 2, 3, 4, 5, 6, 7, n},
					TraceState: "k=v", ParentSpanId: []byte{8, 7, 6, 5, 4, 3, 2, 1}, Flags: 1, Name: "span over a socket",
					Kind: tracepb.Span_SPAN_KIND_SERVER, StartTimeUnixNano: 1_700_000_000_000_000_000, EndTimeUnixNano: 1_700_000_000_500_000_000,
					Attributes:             []*commonpb.KeyValue{kv("d", dblV(1.5)), kv("b", bytesV([]byte{0, 255})), kv("a", arrV(strV("x"), intV(1))), kv("m", kvlistV(kv("k", strV("v"))))},
					DroppedAttributesCount: 1,
					Events:                 []*tracepb.Span_Event{{TimeUnixNano: 1_700_000_000_100_000_000, Name: "ev", Attributes: []*commonpb.KeyValue{kv("e", intV(7))}}},
					Links:                  []*tracepb.Span_Link{{TraceId: make([]byte, 16), SpanId: []byte{9, 9, 9, 9, 9, 9, 9, 9}, TraceState: "l=1", Flags: 256}},
					Status:                 &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "boom"},
				}}}},
			}}}
			me := &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{
				Resource: res, ScopeMetrics: []*metricspb.ScopeMetrics{{Scope: scope, Metrics: []*metricspb.Metric{
					{Name: "requests", Description: "d", Unit: "1", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
						AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, IsMonotonic: true,
						DataPoints: []*metricspb.NumberDataPoint{{TimeUnixNano: 1_700_000_000_000_000_000, Value: &metricspb.NumberDataPoint_AsInt{AsInt: int64(n)},
							Attributes: []*commonpb.KeyValue{kv("route", strV("/x"))}}}}}},
					{Name: "latency", Unit: "s", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
						AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
						DataPoints: []*metricspb.HistogramDataPoint{{TimeUnixNano: 1, Count: 3, Sum: proto.Float64(0.75),
							BucketCounts: []uint64{1, 2}, ExplicitBounds: []float64{0.5}}}}}},
				}}},
			}}}
			lo := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{
				Resource: res, ScopeLogs: []*logspb.ScopeLogs{{Scope: scope, LogRecords: []*logspb.LogRecord{{
					TimeUnixNano: 1_700_000_000_000_000_000, ObservedTimeUnixNano: 1_700_000_000_000_000_001,
					SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_WARN, SeverityText: "WARN", Body: strV("log over a socket"),
					Attributes: []*commonpb.KeyValue{kv("n", intV(int64(n)))}, Flags: 1,
					TraceId: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, n}, SpanId: []byte{1, 2, 3, 4, 5, 6, 7, n}, EventName: "e",
				}}}},
			}}}
			for _, s := range []struct {
				sig otlpclient.Signal
				msg proto.Message
			}{{otlpclient.Traces, tr}, {otlpclient.Metrics, me}, {otlpclient.Logs, lo}} {
				body, err := proto.Marshal(s.msg)
				if err != nil {
					t.Fatal(err)
				}
				u := otlpclient.NewUnaryExporter(otlpclient.Config{Endpoint: endpoint, Signal: s.sig, Compression: codec})
				if err := u.Export(ctx, body); err != nil {
					t.Fatalf("%s %v to %s: %v", s.sig, codec, endpoint, err)
				}
			}
			sentTraces, sentMetrics, sentLogs = append(sentTraces, tr), append(sentMetrics, me), append(sentLogs, lo)
		}
	}

	col.mu.Lock()
	defer col.mu.Unlock()
	matchMessages(t, "traces", sentTraces, col.traces)
	matchMessages(t, "metrics", sentMetrics, col.metrics)
	matchMessages(t, "logs", sentLogs, col.logs)
	if len(col.authorities) != 1 || col.authorities["localhost"] != 12 {
		t.Fatalf(":authority of the requests: %v, want localhost ×12", col.authorities)
	}
}
