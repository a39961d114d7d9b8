package interop

import (
	"context"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestIdempotencyKeyGRPCGo: grpc-go, a third-party client, exports with
// the idempotency-key metadata to the otlp-lite binary; the request is
// resent (as after a lost answer) and again after the server is
// SIGKILLed and restarted on its data directory (the window rebuilt from
// the log): every answer is the first one, a partial success with its
// count and message, and the store holds the request once. Another body
// under the key is INVALID_ARGUMENT.
func TestIdempotencyKeyGRPCGo(t *testing.T) {
	dir := t.TempDir()
	good := &tracepb.Span{TraceId: make([]byte, 16), SpanId: make([]byte, 8), Name: "kept", StartTimeUnixNano: 1, EndTimeUnixNano: 2}
	good.TraceId[0], good.SpanId[0] = 1, 1
	bad := &tracepb.Span{TraceId: []byte{1, 2, 3}, SpanId: make([]byte, 8), Name: "rejected"}
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{good, bad}}},
	}}}
	export := func(s *server, r *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ctx = metadata.AppendToOutgoingContext(ctx, "idempotency-key", "grpc-go/batch-1")
		return coltracepb.NewTraceServiceClient(s.dial(t)).Export(ctx, r)
	}
	s := startServer(t, dir)
	first, err := export(s, req)
	if err != nil || first.GetPartialSuccess().GetRejectedSpans() != 1 || first.GetPartialSuccess().GetErrorMessage() == "" {
		t.Fatalf("first export: %v %v", first, err)
	}
	again, err := export(s, req)
	if err != nil || !proto.Equal(first, again) {
		t.Fatalf("resend: %v %v; first %v", again, err, first)
	}
	s.kill()
	s = startServer(t, dir)
	after, err := export(s, req)
	if err != nil || !proto.Equal(first, after) {
		t.Fatalf("resend after SIGKILL: %v %v; first %v", after, err, first)
	}
	other := proto.Clone(req).(*coltracepb.ExportTraceServiceRequest)
	other.ResourceSpans[0].ScopeSpans[0].Spans[0].Name = "changed"
	if _, err := export(s, other); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("another body under the key: %v", err)
	}
	s.stop()
	stored := scanStore(t, dir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return &coltracepb.ExportTraceServiceRequest{} })
	if len(stored) != 1 || itemCount(stored[0]) != 1 || stored[0].ResourceSpans[0].ScopeSpans[0].Spans[0].GetName() != "kept" {
		t.Fatalf("stored %d requests: %v", len(stored), stored)
	}
}
