package interop

import (
	"os"
	"path/filepath"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestPayloadFilesThroughServer sends the repository's OTLP payload files
// (../testdata/otlp, which set every field of the v1.11 data model: all
// AnyValue kinds, all five metric types with exemplars, every span and log
// field) byte for byte through grpc-go, plain and gzip, and requires each to
// be acknowledged in full and stored equal to the file's message.
func TestPayloadFilesThroughServer(t *testing.T) {
	payloads := []struct {
		file   string
		method string
		signal storage.Signal
	}{
		{"traces_all_fields.pb", "/opentelemetry.proto.collector.trace.v1.TraceService/Export", storage.Traces},
		{"traces_500x10.pb", "/opentelemetry.proto.collector.trace.v1.TraceService/Export", storage.Traces},
		{"metrics_all_kinds.pb", "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", storage.Metrics},
		{"logs_all_fields.pb", "/opentelemetry.proto.collector.logs.v1.LogsService/Export", storage.Logs},
	}
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	conn := srv.dial(t)
	want := map[storage.Signal][]proto.Message{}
	for _, p := range payloads {
		body, err := os.ReadFile(filepath.Join("..", "testdata", "otlp", p.file))
		if err != nil {
			t.Fatalf("cannot read payload: %v", err)
		}
		msg := newRequest(p.signal)
		if err := proto.Unmarshal(body, msg); err != nil {
			t.Fatalf("cannot parse %s: %v", p.file, err)
		}
		for _, opts := range [][]grpc.CallOption{{grpc.ForceCodec(rawCodec{})}, {grpc.ForceCodec(rawCodec{}), grpc.UseCompressor("gzip")}} {
			resp := newResponse(p.signal)
			if err := conn.Invoke(callCtx(t), p.method, body, resp, opts...); err != nil {
				t.Errorf("%s (%d options): %v", p.file, len(opts), err)
				continue
			}
			if d := partialSuccess(resp); d != nil {
				t.Errorf("%s answered with partial_success %v, want unset", p.file, d)
			}
			want[p.signal] = append(want[p.signal], msg)
		}
	}
	srv.stop()
	for _, sig := range storage.Signals {
		stored := scanStore(t, dataDir, sig, func() proto.Message { return newRequest(sig) })
		matchMessages(t, sig.String()+" payload files", want[sig], stored)
	}
}

func newRequest(s storage.Signal) proto.Message {
	switch s {
	case storage.Traces:
		return new(coltracepb.ExportTraceServiceRequest)
	case storage.Metrics:
		return new(colmetricspb.ExportMetricsServiceRequest)
	}
	return new(collogspb.ExportLogsServiceRequest)
}

func newResponse(s storage.Signal) proto.Message {
	switch s {
	case storage.Traces:
		return new(coltracepb.ExportTraceServiceResponse)
	case storage.Metrics:
		return new(colmetricspb.ExportMetricsServiceResponse)
	}
	return new(collogspb.ExportLogsServiceResponse)
}

// partialSuccess returns the response's partial_success message, or nil.
func partialSuccess(resp proto.Message) proto.Message {
	switch r := resp.(type) {
	case *coltracepb.ExportTraceServiceResponse:
		if r.PartialSuccess != nil {
			return r.PartialSuccess
		}
	case *colmetricspb.ExportMetricsServiceResponse:
		if r.PartialSuccess != nil {
			return r.PartialSuccess
		}
	case *collogspb.ExportLogsServiceResponse:
		if r.PartialSuccess != nil {
			return r.PartialSuccess
		}
	}
	return nil
}
