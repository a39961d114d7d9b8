package interop

import (
	"context"
	"strings"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// testSpan returns a valid span named name with a fixed 16-byte trace id
// and an 8-byte span id derived from seq.
func testSpan(name string, seq byte, attrs ...*commonpb.KeyValue) *tracepb.Span {
	return &tracepb.Span{
		TraceId:           []byte{0x11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0x22},
		SpanId:            []byte{0x33, 1, 2, 3, 4, 5, 6, seq},
		Name:              name,
		Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
		StartTimeUnixNano: ns(0),
		EndTimeUnixNano:   ns(time.Millisecond),
		Attributes:        attrs,
	}
}

func traceRequest(spans ...*tracepb.Span) *coltracepb.ExportTraceServiceRequest {
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", strV("interop-raw"))}},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "interop/raw"}, Spans: spans}},
	}}}
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestPartialSuccess: OTLP's partial success (otlp.md "Partial Success"):
// a request with one span whose trace_id is not 16 bytes is answered OK
// with rejected_spans=1 and an error message, and the request's valid spans
// are stored; a fully valid request is answered with no partial_success at
// all ("the server MUST leave the partial_success field unset" on full
// success).
func TestPartialSuccess(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	client := coltracepb.NewTraceServiceClient(srv.dial(t))

	bad := testSpan("bad-trace-id", 2)
	bad.TraceId = []byte{1, 2, 3}
	resp, err := client.Export(callCtx(t), traceRequest(testSpan("valid-1", 1), bad, testSpan("valid-2", 3)))
	if err != nil {
		t.Fatalf("Export with one bad span: %v, want OK with partial_success", err)
	}
	ps := resp.GetPartialSuccess()
	if ps.GetRejectedSpans() != 1 || ps.GetErrorMessage() == "" {
		t.Errorf("partial_success = %v, want rejected_spans=1 and an error_message", ps)
	} else {
		t.Logf("server's rejection message: %q", ps.GetErrorMessage())
	}

	full := traceRequest(testSpan("valid-3", 4, kv("k", strV("v"))))
	resp, err = client.Export(callCtx(t), full)
	if err != nil {
		t.Fatalf("valid Export: %v", err)
	}
	if resp.PartialSuccess != nil {
		t.Errorf("full success answered with partial_success = %v, want unset", resp.PartialSuccess)
	}

	// An empty request is valid and fully successful.
	resp, err = client.Export(callCtx(t), &coltracepb.ExportTraceServiceRequest{})
	if err != nil || resp.PartialSuccess != nil {
		t.Errorf("empty Export = %v, %v; want OK without partial_success", resp, err)
	}
	srv.stop()

	stored := scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	names := map[string]*tracepb.Span{}
	for _, req := range stored {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					names[s.GetName()] = s
				}
			}
		}
	}
	for i, name := range []string{"valid-1", "valid-2", "valid-3"} {
		got := names[name]
		if got == nil {
			t.Errorf("span %q was acknowledged but not stored (stored: %v)", name, keys(names))
			continue
		}
		want := testSpan(name, []byte{1, 3, 4}[i])
		if name == "valid-3" {
			want.Attributes = []*commonpb.KeyValue{kv("k", strV("v"))}
		}
		if d := diffProto(want, got); d != "" {
			t.Errorf("stored span %q (-sent +stored):\n%s", name, d)
		}
	}
	if _, ok := names["bad-trace-id"]; ok {
		t.Errorf("the rejected span was stored")
	}
	for _, req := range stored {
		if proto.Equal(req, full) {
			return
		}
	}
	t.Errorf("the fully valid request is not stored unchanged")
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestUnimplemented: a method or service the server does not have is
// answered with gRPC status UNIMPLEMENTED (grpc PROTOCOL-HTTP2.md, and what
// clients use to detect an unsupported signal).
func TestUnimplemented(t *testing.T) {
	srv := startServer(t, t.TempDir())
	conn := srv.dial(t)
	for _, method := range []string{
		"/opentelemetry.proto.collector.trace.v1.TraceService/NoSuchMethod",
		"/opentelemetry.proto.collector.logs.v1.LogsService/Query",
		"/no.such.v1.Service/Export",
		"/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Query",
	} {
		err := conn.Invoke(callCtx(t), method, traceRequest(testSpan("x", 1)), new(coltracepb.ExportTraceServiceResponse))
		if status.Code(err) != codes.Unimplemented {
			t.Errorf("%s: %v, want code Unimplemented", method, err)
		}
	}
	// The server must still work after the refusals.
	if _, err := coltracepb.NewTraceServiceClient(conn).Export(callCtx(t), traceRequest(testSpan("after", 1))); err != nil {
		t.Errorf("Export after Unimplemented calls: %v", err)
	}
	srv.stop()
}

// TestMaxRecvMsgSize: a request larger than -grpc-max-recv-msg-size is
// refused with RESOURCE_EXHAUSTED (what grpc-go and the collector answer),
// whether it is large on the wire or only once decompressed, and a request
// under the limit still passes.
func TestMaxRecvMsgSize(t *testing.T) {
	const limit = 1 << 20
	dataDir := t.TempDir()
	srv := startServer(t, dataDir, "-grpc-max-recv-msg-size", "1048576")
	client := coltracepb.NewTraceServiceClient(srv.dial(t))

	small := traceRequest(testSpan("small", 1, kv("pad", strV(strings.Repeat("s", limit/2)))))
	if _, err := client.Export(callCtx(t), small); err != nil {
		t.Errorf("Export of %d bytes under a %d-byte limit: %v", proto.Size(small), limit, err)
	}
	// Random-looking padding does not compress, so this one is large on the
	// wire as well.
	pad := make([]byte, 2*limit)
	for i := range pad {
		pad[i] = byte(i*7919 + i>>8)
	}
	big := traceRequest(testSpan("big", 2, kv("pad", bytesV(pad))))
	if _, err := client.Export(callCtx(t), big); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("Export of %d bytes over a %d-byte limit: %v, want code ResourceExhausted", proto.Size(big), limit, err)
	}
	// A gzip bomb: tiny on the wire, over the limit once decompressed.
	bomb := traceRequest(testSpan("bomb", 3, kv("pad", strV(strings.Repeat("\x00", 2*limit)))))
	if _, err := client.Export(callCtx(t), bomb, grpc.UseCompressor(gzip.Name)); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("gzip Export decompressing to %d bytes over a %d-byte limit: %v, want code ResourceExhausted", proto.Size(bomb), limit, err)
	}
	// The connection and server survive the refusals.
	if _, err := client.Export(callCtx(t), traceRequest(testSpan("after", 4))); err != nil {
		t.Errorf("Export after the refusals: %v", err)
	}
	srv.stop()

	stored := scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	var names []string
	for _, req := range stored {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					names = append(names, s.GetName())
				}
			}
		}
	}
	if strings.Join(names, ",") != "small,after" {
		t.Errorf("stored spans %q, want [small after]", names)
	}
}
