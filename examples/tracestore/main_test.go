package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// startExample runs the example on a free port with its store in a
// temporary directory, and stops it (checking that it stopped cleanly) when
// the test ends.
func startExample(t testing.TB) string {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, ln, dir) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return ln.Addr().String()
}

// TestSDKSpansReadBack sends spans with the OpenTelemetry Go SDK, over
// OTLP/gRPC and OTLP/HTTP, and finds every one again through the trace API
// with every field the SDK exported: names, ids, parent, trace state,
// flags, kind, times, attributes of every type, events, links, status,
// resource and scope.
func TestSDKSpansReadBack(t *testing.T) {
	addr := startExample(t)
	ctx := context.Background()
	grpcExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	httpExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder() // what the SDK ended, to compare with
	for i, exp := range []sdktrace.SpanExporter{grpcExp, httpExp} {
		res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0",
			attribute.String("service.name", "checkout"), attribute.Int("exporter", i))
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp), sdktrace.WithSpanProcessor(rec))
		tracer := tp.Tracer("shop/cart", trace.WithInstrumentationVersion("1.2.3"),
			trace.WithSchemaURL("https://opentelemetry.io/schemas/1.25.0"),
			trace.WithInstrumentationAttributes(attribute.Bool("scope.attr", true)))
		makeSpans(tracer, byte(i))
		if err := tp.Shutdown(ctx); err != nil { // flushes the batcher: every span acknowledged
			t.Fatalf("export: %v", err)
		}
	}

	want := map[trace.TraceID]map[trace.SpanID]*tracepb.ResourceSpans{}
	for _, sd := range rec.Ended() {
		sc := sd.SpanContext()
		if want[sc.TraceID()] == nil {
			want[sc.TraceID()] = map[trace.SpanID]*tracepb.ResourceSpans{}
		}
		want[sc.TraceID()][sc.SpanID()] = resourceSpans(sd)
	}
	if len(want) != 4 || len(rec.Ended()) != 10 {
		t.Fatalf("the SDK ended %d spans of %d traces, want 10 of 4", len(rec.Ended()), len(want))
	}
	for id, spans := range want {
		got := getTrace(t, addr, id.String())
		if len(got.ResourceSpans) != len(spans) {
			t.Errorf("trace %s: %d spans, want %d", id, len(got.ResourceSpans), len(spans))
		}
		for _, rs := range got.ResourceSpans {
			sid := trace.SpanID(rs.ScopeSpans[0].Spans[0].SpanId)
			if diff := cmp.Diff(spans[sid], rs, protocmp.Transform()); diff != "" {
				t.Errorf("trace %s span %s read back (-sent +got):\n%s", id, sid, diff)
			}
		}
	}

	for path, code := range map[string]int{
		"/api/traces/0102030405060708090a0b0c0d0e0f10": http.StatusNotFound,
		"/api/traces/0102": http.StatusBadRequest,
		"/api/traces/not-hex-not-hex-not-hex-not-hex!": http.StatusBadRequest,
	} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("GET %s: %s, want %d", path, resp.Status, code)
		}
	}
}

// TestAllFieldsReadBack stores the repo's request with every field of
// trace.proto set (entity refs, dropped counts, a link's trace state,
// schema URLs...) and reads each span back as sent; a request of another
// signal is refused as not retryable, not acknowledged and dropped.
func TestAllFieldsReadBack(t *testing.T) {
	addr := startExample(t)
	post := func(signal, file string) int {
		body, err := os.ReadFile("../../testdata/otlp/" + file)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post("http://"+addr+"/v1/"+signal, "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("metrics", "metrics_all_kinds.pb"); code != http.StatusBadRequest {
		t.Errorf("metrics: HTTP %d, want %d", code, http.StatusBadRequest)
	}
	if code := post("traces", "traces_all_fields.pb"); code != http.StatusOK {
		t.Fatalf("traces: HTTP %d", code)
	}
	body, _ := os.ReadFile("../../testdata/otlp/traces_all_fields.pb")
	var sent tracepb.TracesData // ExportTraceServiceRequest has the same fields
	if err := proto.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rs := range sent.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				n++
				want := &tracepb.ResourceSpans{Resource: rs.Resource, SchemaUrl: rs.SchemaUrl,
					ScopeSpans: []*tracepb.ScopeSpans{{Scope: ss.Scope, SchemaUrl: ss.SchemaUrl, Spans: []*tracepb.Span{sp}}}}
				found := false
				for _, got := range getTrace(t, addr, hex.EncodeToString(sp.TraceId)).ResourceSpans {
					if bytes.Equal(got.ScopeSpans[0].Spans[0].SpanId, sp.SpanId) {
						found = true
						if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
							t.Errorf("span %x read back (-sent +got):\n%s", sp.SpanId, diff)
						}
					}
				}
				if !found {
					t.Errorf("span %x not found in its trace", sp.SpanId)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no span in traces_all_fields.pb")
	}
}

// makeSpans makes two traces of five spans between them, with every kind
// of field set: a server span continuing a remote parent (trace state, the
// is-remote flag), a client child with events, a link and an error status,
// and a producer, consumer and internal span in a second trace.
func makeSpans(tracer trace.Tracer, seed byte) {
	at := func(ms int) time.Time { return time.Unix(1_700_000_000, int64(ms)*1e6+int64(seed)) }
	ts, _ := trace.ParseTraceState("vendor=abc,other=1")
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, seed, 3}, SpanID: trace.SpanID{4, seed}, TraceFlags: trace.FlagsSampled,
		TraceState: ts, Remote: true,
	})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	ctx, server := tracer.Start(ctx, "GET /cart", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(at(0)),
		trace.WithAttributes(
			attribute.String("http.method", "GET"), attribute.Int64("http.status_code", 200),
			attribute.Float64("ratio", 0.25), attribute.Bool("cached", false), attribute.String("empty", ""),
			attribute.StringSlice("tags", []string{"a", "b"}), attribute.Int64Slice("ints", []int64{1, -2}),
			attribute.Float64Slice("floats", []float64{1.5}), attribute.BoolSlice("bools", []bool{true, false}),
			attribute.ByteSlice("raw", []byte{0, 0xff}),
			attribute.Map("nested", attribute.String("k", "v"), attribute.Slice("list", attribute.IntValue(7), attribute.StringValue("x"))),
		))
	_, other := tracer.Start(context.Background(), "other root", trace.WithTimestamp(at(1)))
	_, client := tracer.Start(ctx, "charge card", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(at(2)),
		trace.WithLinks(trace.Link{SpanContext: other.SpanContext(), Attributes: []attribute.KeyValue{attribute.String("why", "retry of")}}))
	client.AddEvent("request sent", trace.WithTimestamp(at(3)), trace.WithAttributes(attribute.Int("bytes", 512)))
	client.AddEvent("no attributes", trace.WithTimestamp(at(4)))
	client.SetStatus(codes.Error, "card declined")
	client.End(trace.WithTimestamp(at(5)))
	server.SetStatus(codes.Ok, "")
	server.End(trace.WithTimestamp(at(6)))

	ctx2, producer := tracer.Start(trace.ContextWithSpan(context.Background(), other), "enqueue", trace.WithSpanKind(trace.SpanKindProducer), trace.WithTimestamp(at(7)))
	_, consumer := tracer.Start(ctx2, "dequeue", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithTimestamp(at(8)))
	consumer.End(trace.WithTimestamp(at(9)))
	producer.End(trace.WithTimestamp(at(10)))
	other.End(trace.WithTimestamp(at(11)))
}

// getTrace asks the example for a trace and decodes its OTLP/JSON answer.
func getTrace(t *testing.T, addr, id string) *tracepb.TracesData {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/traces/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET trace %s: %s %q %v", id, resp.Status, body, err)
	}
	pb, err := otlpjson.Unmarshal(nil, otlpjson.TracesData, body)
	if err != nil {
		t.Fatalf("trace %s: %v in %s", id, err, body)
	}
	var td tracepb.TracesData
	if err := proto.Unmarshal(pb, &td); err != nil {
		t.Fatal(err)
	}
	return &td
}

// resourceSpans is what the SDK's OTLP exporters send for sd, written from
// the OTLP specification's mapping, independently of the exporters' code.
func resourceSpans(sd sdktrace.ReadOnlySpan) *tracepb.ResourceSpans {
	sc, parent, scope := sd.SpanContext(), sd.Parent(), sd.InstrumentationScope()
	span := &tracepb.Span{
		TraceId: tid(sc.TraceID()), SpanId: sid(sc.SpanID()), TraceState: sc.TraceState().String(),
		Flags: flags(sc.TraceFlags(), parent), Name: sd.Name(), Kind: tracepb.Span_SpanKind(sd.SpanKind()),
		StartTimeUnixNano: uint64(sd.StartTime().UnixNano()), EndTimeUnixNano: uint64(sd.EndTime().UnixNano()),
		Attributes: keyValues(sd.Attributes()),
		Status:     &tracepb.Status{Message: sd.Status().Description, Code: map[codes.Code]tracepb.Status_StatusCode{codes.Ok: 1, codes.Error: 2}[sd.Status().Code]},
	}
	if parent.SpanID().IsValid() {
		span.ParentSpanId = sid(parent.SpanID())
	}
	for _, e := range sd.Events() {
		span.Events = append(span.Events, &tracepb.Span_Event{Name: e.Name, TimeUnixNano: uint64(e.Time.UnixNano()), Attributes: keyValues(e.Attributes)})
	}
	for _, l := range sd.Links() { // the SDK's exporters do not send a link's trace state
		span.Links = append(span.Links, &tracepb.Span_Link{TraceId: tid(l.SpanContext.TraceID()), SpanId: sid(l.SpanContext.SpanID()),
			Attributes: keyValues(l.Attributes), Flags: flags(l.SpanContext.TraceFlags(), l.SpanContext)})
	}
	return &tracepb.ResourceSpans{
		Resource:  &resourcepb.Resource{Attributes: keyValues(sd.Resource().Attributes())},
		SchemaUrl: sd.Resource().SchemaURL(),
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope:     &commonpb.InstrumentationScope{Name: scope.Name, Version: scope.Version, Attributes: keyValues(scope.Attributes.ToSlice())},
			SchemaUrl: scope.SchemaURL,
			Spans:     []*tracepb.Span{span},
		}},
	}
}

func tid(v trace.TraceID) []byte { return v[:] }

func sid(v trace.SpanID) []byte { return v[:] }

// flags are trace.proto's SpanFlags: the W3C trace flags, and whether the
// parent (or the linked span) is remote.
func flags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if parent.IsRemote() {
		f |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return f
}

func keyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

func anyValue(v attribute.Value) *commonpb.AnyValue {
	array := func(vs ...attribute.Value) *commonpb.AnyValue {
		a := &commonpb.ArrayValue{}
		for _, v := range vs {
			a.Values = append(a.Values, anyValue(v))
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: a}}
	}
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.AsString()}}
	case attribute.BYTESLICE:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}}
	case attribute.MAP:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: keyValues(v.AsMap())}}}
	case attribute.SLICE:
		return array(v.AsSlice()...)
	case attribute.STRINGSLICE:
		return array(mapSlice(v.AsStringSlice(), attribute.StringValue)...)
	case attribute.INT64SLICE:
		return array(mapSlice(v.AsInt64Slice(), attribute.Int64Value)...)
	case attribute.FLOAT64SLICE:
		return array(mapSlice(v.AsFloat64Slice(), attribute.Float64Value)...)
	case attribute.BOOLSLICE:
		return array(mapSlice(v.AsBoolSlice(), attribute.BoolValue)...)
	}
	panic("attribute type not covered: " + v.Type().String())
}

func mapSlice[T any](s []T, f func(T) attribute.Value) []attribute.Value {
	out := make([]attribute.Value, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}
