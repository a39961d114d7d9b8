package interop

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	otellog "go.opentelemetry.io/otel/log"
	otelmetric "go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/otlpjson"
	"github.com/otlp-lite/otlp-lite/storage"
)

// TestGoSDK sends traces, metrics and logs with the OpenTelemetry Go SDK's
// gRPC exporters, uncompressed and gzip-compressed, then stops the server
// and checks the store twice over: every request the server acknowledged is
// stored unchanged (proto.Equal with what the exporter put on the wire), and
// every value the test set through the SDK API is found in its OTLP field.
func TestGoSDK(t *testing.T) {
	// The Go exporters' WithCompressor knows only "gzip" (any other name
	// silently falls back to none); the other codecs are covered by
	// TestCompression and, for deflate, TestPythonSDK.
	for _, compression := range []string{"none", "gzip"} {
		t.Run(compression, func(t *testing.T) {
			testGoSDK(t, compression, false)
		})
	}
	// One port for everything: the OTLP/HTTP listener answers gRPC too.
	t.Run("http-port/gzip", func(t *testing.T) {
		testGoSDK(t, "gzip", true)
	})
}

// base is the fixed start of every timestamp the Go SDK test sets, so that
// stored times can be compared exactly.
var base = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

func ns(d time.Duration) uint64 { return uint64(base.Add(d).UnixNano()) }

// testGoSDK runs the test against the gRPC listener, or with onHTTPPort
// against the -http-addr listener.
func testGoSDK(t *testing.T, compression string, onHTTPPort bool) {
	dataDir := t.TempDir()
	var srv *server
	addr := ""
	if onHTTPPort {
		srv = startServerHTTP(t, dataDir)
		addr = srv.httpAddr
	} else {
		srv = startServer(t, dataDir)
		addr = srv.addr
	}
	run := fmt.Sprintf("go-%s-%d", compression, time.Now().UnixNano())
	res := resource.NewSchemaless(
		attribute.String("service.name", "otlp-lite-interop-go"),
		attribute.String("interop.run", run),
		attribute.Int64("interop.pid", 4242),
	)
	capt := newCapture()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	want := sendGoTraces(ctx, t, addr, compression, res, capt)
	sendGoMetrics(ctx, t, addr, compression, res, capt)
	sendGoLogs(ctx, t, addr, compression, res, capt, want)
	srv.stop()

	sum := capt.summary()
	if len(capt.failures) > 0 || len(capt.partial) > 0 {
		t.Errorf("exports were not all fully successful: %s", sum)
	}
	wantEncoding := compression // grpc-encoding as grpc-go's stats report it
	if compression == "none" {
		wantEncoding = ""
	}
	for c := range capt.compressions {
		if c != wantEncoding {
			t.Errorf("a request was sent with compression %q, want %q: %s", c, compression, sum)
		}
	}
	if len(capt.traces) == 0 || len(capt.metrics) == 0 || len(capt.logs) == 0 {
		t.Fatalf("the SDK did not export every signal: %s", sum)
	}

	storedTraces := scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	storedMetrics := scanStore(t, dataDir, storage.Metrics, func() *colmetricspb.ExportMetricsServiceRequest { return new(colmetricspb.ExportMetricsServiceRequest) })
	storedLogs := scanStore(t, dataDir, storage.Logs, func() *collogspb.ExportLogsServiceRequest { return new(collogspb.ExportLogsServiceRequest) })
	matchMessages(t, "traces", capt.traces, storedTraces)
	matchMessages(t, "metrics", capt.metrics, storedMetrics)
	matchMessages(t, "logs", capt.logs, storedLogs)

	checkGoTraces(t, run, want, storedTraces)
	checkGoMetrics(t, run, storedMetrics)
	checkGoLogs(t, run, want, storedLogs)
	checkExportCLI(t, dataDir, map[storage.Signal][]proto.Message{
		storage.Traces:  asMessages(storedTraces),
		storage.Metrics: asMessages(storedMetrics),
		storage.Logs:    asMessages(storedLogs),
	}, want.traceID)
}

func asMessages[M proto.Message](ms []M) []proto.Message {
	out := make([]proto.Message, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// richAttrs covers every attribute value type of the Go API, with the OTLP
// AnyValue each must arrive as (common.proto: AnyValue, ArrayValue,
// KeyValueList).
var richAttrs = []struct {
	kv   attribute.KeyValue
	want *commonpb.AnyValue
}{
	{attribute.String("a.string", "héllo, 世界"), strV("héllo, 世界")},
	{attribute.String("a.string.empty", ""), strV("")},
	{attribute.Bool("a.bool", true), boolV(true)},
	{attribute.Bool("a.bool.false", false), boolV(false)},
	{attribute.Int64("a.int", -9007199254740993), intV(-9007199254740993)},
	{attribute.Int64("a.int.max", 1<<63-1), intV(1<<63 - 1)},
	{attribute.Float64("a.float", 3.141592653589793), dblV(3.141592653589793)},
	{attribute.Float64("a.float.neg", -0.5e-300), dblV(-0.5e-300)},
	{attribute.StringSlice("a.strings", []string{"x", "", "z"}), arrV(strV("x"), strV(""), strV("z"))},
	{attribute.BoolSlice("a.bools", []bool{true, false, true}), arrV(boolV(true), boolV(false), boolV(true))},
	{attribute.Int64Slice("a.ints", []int64{1, -2, 1 << 40}), arrV(intV(1), intV(-2), intV(1<<40))},
	{attribute.Float64Slice("a.floats", []float64{1.5, -2.25, 0}), arrV(dblV(1.5), dblV(-2.25), dblV(0))},
	{attribute.ByteSlice("a.bytes", []byte{0, 1, 0xfe, 0xff}), bytesV([]byte{0, 1, 0xfe, 0xff})},
	{attribute.Slice("a.mixed", attribute.StringValue("s"), attribute.Int64Value(7), attribute.BoolValue(false)), arrV(strV("s"), intV(7), boolV(false))},
	{attribute.Map("a.map", attribute.Float64("f", 0.25), attribute.String("k", "v")), kvlistV(kv("f", dblV(0.25)), kv("k", strV("v")))},
}

func richKVs() []attribute.KeyValue {
	kvs := make([]attribute.KeyValue, len(richAttrs))
	for i, a := range richAttrs {
		kvs[i] = a.kv
	}
	return kvs
}

func richWant() []*commonpb.KeyValue {
	kvs := make([]*commonpb.KeyValue, len(richAttrs))
	for i, a := range richAttrs {
		kvs[i] = kv(string(a.kv.Key), a.want)
	}
	return kvs
}

// goWant is what the traces part of the Go SDK test sent, for the checks.
type goWant struct {
	traceID trace.TraceID
	rootID  trace.SpanID
	linked  trace.SpanContext
}

var parentSC = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{0x7e, 0xa1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 0x0e, 0x7f},
	SpanID:     trace.SpanID{0x9a, 1, 2, 3, 4, 5, 6, 0x9b},
	TraceFlags: trace.FlagsSampled,
	TraceState: mustTraceState("vendor=opaque,other=1"),
	Remote:     true,
})

var linkedSC = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0x0f},
	SpanID:     trace.SpanID{0xb0, 1, 2, 3, 4, 5, 6, 0xb7},
	TraceFlags: trace.FlagsSampled,
	TraceState: mustTraceState("linked=1"),
	Remote:     true,
})

func mustTraceState(s string) trace.TraceState {
	ts, err := trace.ParseTraceState(s)
	if err != nil {
		panic(err)
	}
	return ts
}

// goSpans names the child spans by kind; the root is a SERVER span.
var goSpans = []struct {
	name   string
	kind   trace.SpanKind
	wantK  tracepb.Span_SpanKind
	status codes.Code
	wantSt tracepb.Status_StatusCode
}{
	{"child-internal", trace.SpanKindInternal, tracepb.Span_SPAN_KIND_INTERNAL, codes.Unset, tracepb.Status_STATUS_CODE_UNSET},
	{"child-client", trace.SpanKindClient, tracepb.Span_SPAN_KIND_CLIENT, codes.Ok, tracepb.Status_STATUS_CODE_OK},
	{"child-producer", trace.SpanKindProducer, tracepb.Span_SPAN_KIND_PRODUCER, codes.Unset, tracepb.Status_STATUS_CODE_UNSET},
	{"child-consumer", trace.SpanKindConsumer, tracepb.Span_SPAN_KIND_CONSUMER, codes.Error, tracepb.Status_STATUS_CODE_ERROR},
}

func sendGoTraces(ctx context.Context, t *testing.T, addr, compression string, res *resource.Resource, capt *capture) goWant {
	t.Helper()
	opts := []otlptracegrpc.Option{
		otlptracegrpc.WithEndpoint(addr),
		otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithDialOption(capt.dialOptions()...),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}),
		otlptracegrpc.WithTimeout(10 * time.Second),
	}
	if compression != "none" {
		opts = append(opts, otlptracegrpc.WithCompressor(compression))
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		t.Fatalf("cannot create otlptracegrpc exporter: %v", err)
	}
	return emitGoTraces(ctx, t, exp, res)
}

// emitGoTraces records the test's spans through the SDK and exports them
// with exp, in batches of two, and returns their ids.
func emitGoTraces(ctx context.Context, t *testing.T, exp sdktrace.SpanExporter, res *resource.Resource) goWant {
	t.Helper()
	// Batches of two spans give several Export requests per run.
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithBatcher(exp, sdktrace.WithMaxExportBatchSize(2), sdktrace.WithBatchTimeout(time.Hour)),
	)
	tracer := tp.Tracer("otlp-lite/interop/go",
		trace.WithInstrumentationVersion("1.2.3"),
		trace.WithSchemaURL("https://opentelemetry.io/schemas/1.26.0"),
		trace.WithInstrumentationAttributes(attribute.String("scope.attr", "yes")),
	)

	// The root continues a remote parent that carries a W3C tracestate, so
	// trace_state, parent_span_id and the is_remote flag bits are exercised.
	rctx, root := tracer.Start(trace.ContextWithRemoteSpanContext(ctx, parentSC), "root",
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(base),
		trace.WithAttributes(richKVs()...),
		trace.WithLinks(trace.Link{SpanContext: linkedSC, Attributes: []attribute.KeyValue{attribute.String("link.attr", "l"), attribute.Int64("link.n", 2)}}),
	)
	root.AddEvent("event.one", trace.WithTimestamp(base.Add(time.Millisecond)), trace.WithAttributes(attribute.String("ev.s", "e"), attribute.Float64("ev.f", 1.25)))
	root.AddEvent("event.bare", trace.WithTimestamp(base.Add(2*time.Millisecond)))
	root.RecordError(errors.New("kaput"), trace.WithTimestamp(base.Add(3*time.Millisecond)))
	for i, c := range goSpans {
		_, s := tracer.Start(rctx, c.name, trace.WithSpanKind(c.kind), trace.WithTimestamp(base.Add(time.Duration(10+i)*time.Millisecond)),
			trace.WithAttributes(attribute.Int64("child.index", int64(i))))
		desc := "" // the API drops descriptions of non-Error statuses
		if c.status == codes.Error {
			desc = "child failed"
		}
		s.SetStatus(c.status, desc)
		s.End(trace.WithTimestamp(base.Add(time.Duration(20+i) * time.Millisecond)))
	}
	root.SetStatus(codes.Error, "root failed")
	root.End(trace.WithTimestamp(base.Add(time.Second)))

	if err := tp.ForceFlush(ctx); err != nil {
		t.Errorf("TracerProvider.ForceFlush: %v", err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Errorf("TracerProvider.Shutdown: %v", err)
	}
	sc := root.SpanContext()
	return goWant{traceID: sc.TraceID(), rootID: sc.SpanID(), linked: linkedSC}
}

// checkResource verifies the resource the Go SDK test set and reports
// whether it belongs to run.
func checkResource(t *testing.T, attrs []*commonpb.KeyValue, run string) bool {
	t.Helper()
	return checkRunResource(t, attrs, run, "otlp-lite-interop-go")
}

// checkRunResource verifies the resource attributes both SDK tests set
// (service.name, interop.run, interop.pid) and reports whether they belong
// to run.
func checkRunResource(t *testing.T, attrs []*commonpb.KeyValue, run, service string) bool {
	t.Helper()
	if attrString(attrs, "interop.run") != run {
		return false
	}
	want := []*commonpb.KeyValue{
		kv("service.name", strV(service)),
		kv("interop.run", strV(run)),
		kv("interop.pid", intV(4242)),
	}
	if d := diffAttrs(want, attrs); d != "" {
		t.Errorf("resource attributes:\n%s", d)
	}
	return true
}

func checkScope(t *testing.T, what string, scope *commonpb.InstrumentationScope, schemaURL string) {
	t.Helper()
	want := &commonpb.InstrumentationScope{
		Name:       "otlp-lite/interop/go",
		Version:    "1.2.3",
		Attributes: []*commonpb.KeyValue{kv("scope.attr", strV("yes"))},
	}
	if d := diffProto(want, scope); d != "" {
		t.Errorf("%s scope (-want +got):\n%s", what, d)
	}
	if schemaURL != "https://opentelemetry.io/schemas/1.26.0" {
		t.Errorf("%s scope schema_url = %q", what, schemaURL)
	}
}

func checkGoTraces(t *testing.T, run string, want goWant, stored []*coltracepb.ExportTraceServiceRequest) {
	t.Helper()
	spans := map[string]*tracepb.Span{}
	for _, req := range stored {
		for _, rs := range req.GetResourceSpans() {
			if !checkResource(t, rs.GetResource().GetAttributes(), run) {
				continue
			}
			for _, ss := range rs.GetScopeSpans() {
				checkScope(t, "span", ss.GetScope(), ss.GetSchemaUrl())
				for _, s := range ss.GetSpans() {
					if _, dup := spans[s.GetName()]; dup {
						t.Errorf("span %q stored twice", s.GetName())
					}
					spans[s.GetName()] = s
				}
			}
		}
	}
	if len(spans) != 1+len(goSpans) {
		t.Errorf("stored %d distinct spans, sent %d", len(spans), 1+len(goSpans))
	}
	traceID, rootID := want.traceID[:], want.rootID[:]

	root := spans["root"]
	if root == nil {
		t.Fatalf("root span not stored")
	}
	wantRoot := &tracepb.Span{
		TraceId:           traceID,
		SpanId:            rootID,
		ParentSpanId:      spanIDBytes(parentSC.SpanID()),
		TraceState:        "vendor=opaque,other=1",
		Flags:             0x301, // sampled | has_is_remote | is_remote (trace.proto SpanFlags)
		Name:              "root",
		Kind:              tracepb.Span_SPAN_KIND_SERVER,
		StartTimeUnixNano: ns(0),
		EndTimeUnixNano:   ns(time.Second),
		Attributes:        richWant(),
		Events: []*tracepb.Span_Event{
			{TimeUnixNano: ns(time.Millisecond), Name: "event.one", Attributes: []*commonpb.KeyValue{kv("ev.s", strV("e")), kv("ev.f", dblV(1.25))}},
			{TimeUnixNano: ns(2 * time.Millisecond), Name: "event.bare"},
			{TimeUnixNano: ns(3 * time.Millisecond), Name: "exception", Attributes: []*commonpb.KeyValue{
				kv("exception.type", strV("*errors.errorString")), kv("exception.message", strV("kaput"))}},
		},
		Links: []*tracepb.Span_Link{{
			TraceId: traceIDBytes(want.linked.TraceID()),
			SpanId:  spanIDBytes(want.linked.SpanID()),
			// otlptracegrpc v1.47 does not copy a link's tracestate into
			// Span.Link.trace_state (tracetransform.links), so "" is
			// what was sent.
			TraceState: "",
			Flags:      0x301,
			Attributes: []*commonpb.KeyValue{kv("link.attr", strV("l")), kv("link.n", intV(2))},
		}},
		Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "root failed"},
	}
	checkSpan(t, wantRoot, root)

	for i, c := range goSpans {
		s := spans[c.name]
		if s == nil {
			t.Errorf("span %q not stored", c.name)
			continue
		}
		w := &tracepb.Span{
			TraceId:           traceID,
			ParentSpanId:      rootID,
			TraceState:        "vendor=opaque,other=1",
			Flags:             0x101, // sampled | has_is_remote, local parent
			Name:              c.name,
			Kind:              c.wantK,
			StartTimeUnixNano: ns(time.Duration(10+i) * time.Millisecond),
			EndTimeUnixNano:   ns(time.Duration(20+i) * time.Millisecond),
			Attributes:        []*commonpb.KeyValue{kv("child.index", intV(int64(i)))},
		}
		w.Status = &tracepb.Status{Code: c.wantSt}
		if c.status == codes.Error {
			w.Status.Message = "child failed"
		}
		checkSpan(t, w, s)
	}
}

func spanIDBytes(id trace.SpanID) []byte { return id[:] }

func traceIDBytes(id trace.TraceID) []byte { return id[:] }

// checkSpan compares the fields the test controls; span ids of children
// (random), flags and dropped counts are covered by the proto.Equal match
// against the captured request.
func checkSpan(t *testing.T, want, got *tracepb.Span) {
	t.Helper()
	name := want.GetName()
	if !bytes.Equal(got.GetTraceId(), want.GetTraceId()) {
		t.Errorf("span %q trace_id = %x, want %x", name, got.GetTraceId(), want.GetTraceId())
	}
	if want.SpanId != nil && !bytes.Equal(got.GetSpanId(), want.GetSpanId()) {
		t.Errorf("span %q span_id = %x, want %x", name, got.GetSpanId(), want.GetSpanId())
	}
	if len(got.GetSpanId()) != 8 {
		t.Errorf("span %q span_id = %x, want 8 bytes", name, got.GetSpanId())
	}
	if !bytes.Equal(got.GetParentSpanId(), want.GetParentSpanId()) {
		t.Errorf("span %q parent_span_id = %x, want %x", name, got.GetParentSpanId(), want.GetParentSpanId())
	}
	if got.GetTraceState() != want.GetTraceState() || got.GetFlags() != want.GetFlags() {
		t.Errorf("span %q trace_state, flags = %q, %#x, want %q, %#x", name, got.GetTraceState(), got.GetFlags(), want.GetTraceState(), want.GetFlags())
	}
	if got.GetKind() != want.GetKind() {
		t.Errorf("span %q kind = %v, want %v", name, got.GetKind(), want.GetKind())
	}
	if got.GetStartTimeUnixNano() != want.GetStartTimeUnixNano() || got.GetEndTimeUnixNano() != want.GetEndTimeUnixNano() {
		t.Errorf("span %q times = [%d, %d], want [%d, %d]", name, got.GetStartTimeUnixNano(), got.GetEndTimeUnixNano(), want.GetStartTimeUnixNano(), want.GetEndTimeUnixNano())
	}
	if d := diffAttrs(want.GetAttributes(), got.GetAttributes()); d != "" {
		t.Errorf("span %q attributes:\n%s", name, d)
	}
	if len(got.GetEvents()) != len(want.GetEvents()) {
		t.Errorf("span %q has %d events, want %d", name, len(got.GetEvents()), len(want.GetEvents()))
	} else {
		for i, we := range want.GetEvents() {
			ge := got.GetEvents()[i]
			if ge.GetName() != we.GetName() || ge.GetTimeUnixNano() != we.GetTimeUnixNano() {
				t.Errorf("span %q event #%d = %q@%d, want %q@%d", name, i, ge.GetName(), ge.GetTimeUnixNano(), we.GetName(), we.GetTimeUnixNano())
			}
			if d := diffAttrs(we.GetAttributes(), ge.GetAttributes()); d != "" {
				t.Errorf("span %q event %q attributes:\n%s", name, we.GetName(), d)
			}
		}
	}
	if len(got.GetLinks()) != len(want.GetLinks()) {
		t.Errorf("span %q has %d links, want %d", name, len(got.GetLinks()), len(want.GetLinks()))
	} else {
		for i, wl := range want.GetLinks() {
			gl := got.GetLinks()[i]
			if !bytes.Equal(gl.GetTraceId(), wl.GetTraceId()) || !bytes.Equal(gl.GetSpanId(), wl.GetSpanId()) || gl.GetTraceState() != wl.GetTraceState() {
				t.Errorf("span %q link #%d = %x/%x %q, want %x/%x %q", name, i, gl.GetTraceId(), gl.GetSpanId(), gl.GetTraceState(), wl.GetTraceId(), wl.GetSpanId(), wl.GetTraceState())
			}
			// W3C sampled bit (0x01) and the "has is_remote"/"is_remote"
			// bits 0x100|0x200 (trace.proto SpanFlags).
			if gl.GetFlags() != wl.GetFlags() {
				t.Errorf("span %q link #%d flags = %#x, want %#x", name, i, gl.GetFlags(), wl.GetFlags())
			}
			if d := diffAttrs(wl.GetAttributes(), gl.GetAttributes()); d != "" {
				t.Errorf("span %q link #%d attributes:\n%s", name, i, d)
			}
		}
	}
	if d := diffProto(want.GetStatus(), got.GetStatus()); d != "" {
		t.Errorf("span %q status (-want +got):\n%s", name, d)
	}
}

// The metrics part: one instrument per OTLP data type.
const (
	mCounter   = "interop.counter"
	mUpDown    = "interop.updown"
	mGauge     = "interop.gauge"
	mHistogram = "interop.histogram"
	mExpHist   = "interop.exphist"
)

func sendGoMetrics(ctx context.Context, t *testing.T, addr, compression string, res *resource.Resource, capt *capture) {
	t.Helper()
	opts := []otlpmetricgrpc.Option{
		otlpmetricgrpc.WithEndpoint(addr),
		otlpmetricgrpc.WithInsecure(),
		otlpmetricgrpc.WithDialOption(capt.dialOptions()...),
		otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false}),
		otlpmetricgrpc.WithTimeout(10 * time.Second),
	}
	if compression != "none" {
		opts = append(opts, otlpmetricgrpc.WithCompressor(compression))
	}
	exp, err := otlpmetricgrpc.New(ctx, opts...)
	if err != nil {
		t.Fatalf("cannot create otlpmetricgrpc exporter: %v", err)
	}
	emitGoMetrics(ctx, t, exp, res)
}

// emitGoMetrics records one instrument of each OTLP metric type and exports
// them once, at the MeterProvider's shutdown, with exp.
func emitGoMetrics(ctx context.Context, t *testing.T, exp sdkmetric.Exporter, res *resource.Resource) {
	t.Helper()
	mp := sdkmetric.NewMeterProvider(
		sdkmetric.WithResource(res),
		// One collection, at Shutdown: the interval never fires.
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(time.Hour))),
		sdkmetric.WithView(sdkmetric.NewView(
			sdkmetric.Instrument{Name: mExpHist},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}},
		)),
	)
	meter := mp.Meter("otlp-lite/interop/go",
		otelmetric.WithInstrumentationVersion("1.2.3"),
		otelmetric.WithSchemaURL("https://opentelemetry.io/schemas/1.26.0"),
		otelmetric.WithInstrumentationAttributes(attribute.String("scope.attr", "yes")),
	)
	attrsX := otelmetric.WithAttributes(attribute.String("k", "x"), attribute.Bool("flag", true))
	attrsY := otelmetric.WithAttributes(attribute.String("k", "y"), attribute.Int64("n", 3))

	counter, err := meter.Float64Counter(mCounter, otelmetric.WithUnit("By"), otelmetric.WithDescription("a counter"))
	if err != nil {
		t.Fatal(err)
	}
	counter.Add(ctx, 1.5, attrsX)
	counter.Add(ctx, 2.5, attrsX)
	counter.Add(ctx, 10, attrsY)

	updown, err := meter.Int64UpDownCounter(mUpDown, otelmetric.WithUnit("{item}"))
	if err != nil {
		t.Fatal(err)
	}
	updown.Add(ctx, 5, attrsX)
	updown.Add(ctx, -7, attrsX)

	gauge, err := meter.Float64Gauge(mGauge, otelmetric.WithUnit("Cel"))
	if err != nil {
		t.Fatal(err)
	}
	gauge.Record(ctx, 3.5, attrsY)
	gauge.Record(ctx, -7.25, attrsY)

	hist, err := meter.Float64Histogram(mHistogram, otelmetric.WithUnit("s"), otelmetric.WithExplicitBucketBoundaries(1, 5, 10))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{0.5, 3, 7, 20} {
		hist.Record(ctx, v, attrsX)
	}

	exph, err := meter.Float64Histogram(mExpHist, otelmetric.WithUnit("ms"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{1, 2, 4, 8, 0} {
		exph.Record(ctx, v, attrsY)
	}

	if err := mp.Shutdown(ctx); err != nil {
		t.Errorf("MeterProvider.Shutdown: %v", err)
	}
}

func checkGoMetrics(t *testing.T, run string, stored []*colmetricspb.ExportMetricsServiceRequest) {
	t.Helper()
	metrics := map[string]*metricspb.Metric{}
	for _, req := range stored {
		for _, rm := range req.GetResourceMetrics() {
			if !checkResource(t, rm.GetResource().GetAttributes(), run) {
				continue
			}
			for _, sm := range rm.GetScopeMetrics() {
				checkScope(t, "metric", sm.GetScope(), sm.GetSchemaUrl())
				for _, m := range sm.GetMetrics() {
					if _, dup := metrics[m.GetName()]; dup {
						t.Errorf("metric %q stored twice", m.GetName())
					}
					metrics[m.GetName()] = m
				}
			}
		}
	}
	xAttrs := []*commonpb.KeyValue{kv("k", strV("x")), kv("flag", boolV(true))}
	yAttrs := []*commonpb.KeyValue{kv("k", strV("y")), kv("n", intV(3))}
	cumulative := metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE

	get := func(name, unit string) *metricspb.Metric {
		m := metrics[name]
		if m == nil {
			t.Errorf("metric %q not stored (stored: %d metrics)", name, len(metrics))
			return nil
		}
		if m.GetUnit() != unit {
			t.Errorf("metric %q unit = %q, want %q", name, m.GetUnit(), unit)
		}
		return m
	}
	if m := get(mCounter, "By"); m != nil {
		if m.GetDescription() != "a counter" {
			t.Errorf("metric %q description = %q", mCounter, m.GetDescription())
		}
		s := m.GetSum()
		if s == nil || !s.GetIsMonotonic() || s.GetAggregationTemporality() != cumulative {
			t.Errorf("metric %q = %v, want a monotonic cumulative sum", mCounter, m.GetData())
		} else {
			checkNumberPoints(t, mCounter, s.GetDataPoints(), map[string]float64{"x": 4, "y": 10}, map[string][]*commonpb.KeyValue{"x": xAttrs, "y": yAttrs})
		}
	}
	if m := get(mUpDown, "{item}"); m != nil {
		s := m.GetSum()
		if s == nil || s.GetIsMonotonic() || s.GetAggregationTemporality() != cumulative {
			t.Errorf("metric %q = %v, want a non-monotonic cumulative sum", mUpDown, m.GetData())
		} else {
			checkNumberPoints(t, mUpDown, s.GetDataPoints(), map[string]float64{"x": -2}, map[string][]*commonpb.KeyValue{"x": xAttrs})
		}
	}
	if m := get(mGauge, "Cel"); m != nil {
		if g := m.GetGauge(); g == nil {
			t.Errorf("metric %q = %v, want a gauge", mGauge, m.GetData())
		} else {
			checkNumberPoints(t, mGauge, g.GetDataPoints(), map[string]float64{"y": -7.25}, map[string][]*commonpb.KeyValue{"y": yAttrs})
		}
	}
	if m := get(mHistogram, "s"); m != nil {
		h := m.GetHistogram()
		if h == nil || h.GetAggregationTemporality() != cumulative || len(h.GetDataPoints()) != 1 {
			t.Errorf("metric %q = %v, want a cumulative histogram with one point", mHistogram, m.GetData())
		} else {
			p := h.GetDataPoints()[0]
			want := &metricspb.HistogramDataPoint{
				Attributes:        p.GetAttributes(),
				StartTimeUnixNano: p.GetStartTimeUnixNano(),
				TimeUnixNano:      p.GetTimeUnixNano(),
				Count:             4,
				Sum:               ptr(30.5),
				BucketCounts:      []uint64{1, 1, 1, 1},
				ExplicitBounds:    []float64{1, 5, 10},
				Min:               ptr(0.5),
				Max:               ptr(20.0),
			}
			if d := diffProto(want, p); d != "" {
				t.Errorf("metric %q point (-want +got):\n%s", mHistogram, d)
			}
			if d := diffAttrs(xAttrs, p.GetAttributes()); d != "" {
				t.Errorf("metric %q attributes:\n%s", mHistogram, d)
			}
			checkPointTimes(t, mHistogram, p.GetStartTimeUnixNano(), p.GetTimeUnixNano())
		}
	}
	if m := get(mExpHist, "ms"); m != nil {
		h := m.GetExponentialHistogram()
		if h == nil || h.GetAggregationTemporality() != cumulative || len(h.GetDataPoints()) != 1 {
			t.Errorf("metric %q = %v, want a cumulative exponential histogram with one point", mExpHist, m.GetData())
		} else {
			p := h.GetDataPoints()[0]
			if p.GetCount() != 5 || p.GetSum() != 15 || p.GetMin() != 0 || p.GetMax() != 8 || p.GetZeroCount() != 1 {
				t.Errorf("metric %q point count/sum/min/max/zero = %d/%v/%v/%v/%d, want 5/15/0/8/1", mExpHist, p.GetCount(), p.GetSum(), p.GetMin(), p.GetMax(), p.GetZeroCount())
			}
			var inBuckets uint64
			for _, c := range p.GetPositive().GetBucketCounts() {
				inBuckets += c
			}
			if inBuckets != 4 || len(p.GetNegative().GetBucketCounts()) != 0 {
				t.Errorf("metric %q positive buckets hold %d values (want 4), negative %v (want none); scale %d", mExpHist, inBuckets, p.GetNegative().GetBucketCounts(), p.GetScale())
			}
			if d := diffAttrs(yAttrs, p.GetAttributes()); d != "" {
				t.Errorf("metric %q attributes:\n%s", mExpHist, d)
			}
			checkPointTimes(t, mExpHist, p.GetStartTimeUnixNano(), p.GetTimeUnixNano())
		}
	}
}

func ptr[T any](v T) *T { return &v }

// checkNumberPoints checks one point per attribute set, keyed by the "k"
// attribute, with its value (int or double, whichever the SDK chose).
func checkNumberPoints(t *testing.T, name string, points []*metricspb.NumberDataPoint, want map[string]float64, attrs map[string][]*commonpb.KeyValue) {
	t.Helper()
	if len(points) != len(want) {
		t.Errorf("metric %q has %d points, want %d", name, len(points), len(want))
	}
	for _, p := range points {
		k := attrString(p.GetAttributes(), "k")
		w, ok := want[k]
		if !ok {
			t.Errorf("metric %q has an unexpected point with k=%q", name, k)
			continue
		}
		var got float64
		switch v := p.GetValue().(type) {
		case *metricspb.NumberDataPoint_AsDouble:
			got = v.AsDouble
		case *metricspb.NumberDataPoint_AsInt:
			got = float64(v.AsInt)
		default:
			t.Errorf("metric %q point k=%q has no value", name, k)
			continue
		}
		if got != w {
			t.Errorf("metric %q point k=%q = %v, want %v", name, k, got, w)
		}
		if d := diffAttrs(attrs[k], p.GetAttributes()); d != "" {
			t.Errorf("metric %q point k=%q attributes:\n%s", name, k, d)
		}
		checkPointTimes(t, name, p.GetStartTimeUnixNano(), p.GetTimeUnixNano())
	}
}

// checkPointTimes: the SDK stamps points with the wall clock, so only their
// order and plausibility are known.
func checkPointTimes(t *testing.T, name string, start, end uint64) {
	t.Helper()
	now := uint64(time.Now().UnixNano())
	if end == 0 || end > now || end < now-uint64(10*time.Minute) || start > end {
		t.Errorf("metric %q point times start=%d time=%d are implausible (now %d)", name, start, end, now)
	}
}

func sendGoLogs(ctx context.Context, t *testing.T, addr, compression string, res *resource.Resource, capt *capture, tw goWant) {
	t.Helper()
	opts := []otlploggrpc.Option{
		otlploggrpc.WithEndpoint(addr),
		otlploggrpc.WithInsecure(),
		otlploggrpc.WithDialOption(capt.dialOptions()...),
		otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}),
		otlploggrpc.WithTimeout(10 * time.Second),
	}
	if compression != "none" {
		opts = append(opts, otlploggrpc.WithCompressor(compression))
	}
	exp, err := otlploggrpc.New(ctx, opts...)
	if err != nil {
		t.Fatalf("cannot create otlploggrpc exporter: %v", err)
	}
	emitGoLogs(ctx, t, exp, res, tw)
}

// emitGoLogs emits the event and the plain log record and exports them with
// exp.
func emitGoLogs(ctx context.Context, t *testing.T, exp sdklog.Exporter, res *resource.Resource, tw goWant) {
	t.Helper()
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(res),
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportInterval(time.Hour))),
	)
	logger := lp.Logger("otlp-lite/interop/go",
		otellog.WithInstrumentationVersion("1.2.3"),
		otellog.WithSchemaURL("https://opentelemetry.io/schemas/1.26.0"),
		otellog.WithInstrumentationAttributes(attribute.String("scope.attr", "yes")),
	)

	// The event: nested body, full severity, and the root span's context.
	var ev otellog.Record
	ev.SetTimestamp(base.Add(5 * time.Millisecond))
	ev.SetObservedTimestamp(base.Add(6 * time.Millisecond))
	ev.SetSeverity(otellog.SeverityWarn2)
	ev.SetSeverityText("WARN2")
	ev.SetEventName("interop.event")
	ev.SetBody(goLogBody)
	ev.AddAttributes(richKVs()...)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tw.traceID, SpanID: tw.rootID, TraceFlags: trace.FlagsSampled})
	logger.Emit(trace.ContextWithSpanContext(ctx, sc), ev)

	// A plain record: string body, no trace context, no event name.
	var plain otellog.Record
	plain.SetTimestamp(base.Add(7 * time.Millisecond))
	plain.SetObservedTimestamp(base.Add(8 * time.Millisecond))
	plain.SetSeverity(otellog.SeverityFatal4)
	plain.SetSeverityText("FATAL4")
	plain.SetBody(attribute.StringValue("plain body"))
	plain.AddAttributes(attribute.String("log.kind", "plain"))
	logger.Emit(ctx, plain)

	if err := lp.ForceFlush(ctx); err != nil {
		t.Errorf("LoggerProvider.ForceFlush: %v", err)
	}
	if err := lp.Shutdown(ctx); err != nil {
		t.Errorf("LoggerProvider.Shutdown: %v", err)
	}
}

// goLogBody is a body nesting maps and slices three levels deep.
var goLogBody = attribute.MapValue(
	attribute.String("msg", "hello"),
	attribute.Map("nested",
		attribute.Slice("list", attribute.StringValue("x"), attribute.BoolValue(true), attribute.MapValue(attribute.Float64("deep", 0.5))),
		attribute.Int64("n", 7),
	),
	attribute.ByteSlice("raw", []byte{0, 1, 2}),
)

var goLogBodyWant = kvlistV(
	kv("msg", strV("hello")),
	kv("nested", kvlistV(
		kv("list", arrV(strV("x"), boolV(true), kvlistV(kv("deep", dblV(0.5))))),
		kv("n", intV(7)),
	)),
	kv("raw", bytesV([]byte{0, 1, 2})),
)

func checkGoLogs(t *testing.T, run string, tw goWant, stored []*collogspb.ExportLogsServiceRequest) {
	t.Helper()
	var recs []*logspb.LogRecord
	for _, req := range stored {
		for _, rl := range req.GetResourceLogs() {
			if !checkResource(t, rl.GetResource().GetAttributes(), run) {
				continue
			}
			for _, sl := range rl.GetScopeLogs() {
				checkScope(t, "log", sl.GetScope(), sl.GetSchemaUrl())
				recs = append(recs, sl.GetLogRecords()...)
			}
		}
	}
	if len(recs) != 2 {
		t.Fatalf("stored %d log records, sent 2", len(recs))
	}
	var ev, plain *logspb.LogRecord
	for _, r := range recs {
		if r.GetEventName() == "interop.event" {
			ev = r
		} else {
			plain = r
		}
	}
	if ev == nil || plain == nil {
		t.Fatalf("stored log records lack the event or the plain record: %v", recs)
	}
	wantEv := &logspb.LogRecord{
		TimeUnixNano:         ns(5 * time.Millisecond),
		ObservedTimeUnixNano: ns(6 * time.Millisecond),
		SeverityNumber:       logspb.SeverityNumber_SEVERITY_NUMBER_WARN2,
		SeverityText:         "WARN2",
		Body:                 goLogBodyWant,
		Attributes:           ev.GetAttributes(), // compared as a set below
		Flags:                0x01,               // W3C sampled, in LOG_RECORD_FLAGS_TRACE_FLAGS_MASK (logs.proto)
		TraceId:              tw.traceID[:],
		SpanId:               tw.rootID[:],
		EventName:            "interop.event",
	}
	if d := diffProto(wantEv, ev); d != "" {
		t.Errorf("event log record (-want +got):\n%s", d)
	}
	if d := diffAttrs(richWant(), ev.GetAttributes()); d != "" {
		t.Errorf("event log record attributes:\n%s", d)
	}
	wantPlain := &logspb.LogRecord{
		TimeUnixNano:         ns(7 * time.Millisecond),
		ObservedTimeUnixNano: ns(8 * time.Millisecond),
		SeverityNumber:       logspb.SeverityNumber_SEVERITY_NUMBER_FATAL4,
		SeverityText:         "FATAL4",
		Body:                 strV("plain body"),
		Attributes:           []*commonpb.KeyValue{kv("log.kind", strV("plain"))},
	}
	if d := diffProto(wantPlain, plain); d != "" {
		t.Errorf("plain log record (-want +got):\n%s", d)
	}
}

// checkExportCLI runs `otlp-lite export -format json` per signal: one JSON
// object per stored record per line, in store order, ids in hex (OTLP/JSON,
// otlp.md "JSON Protobuf Encoding"). Each line, read back with the
// project's otlpjson.Unmarshal, must equal its stored record.
func checkExportCLI(t *testing.T, dataDir string, stored map[storage.Signal][]proto.Message, traceID trace.TraceID) {
	t.Helper()
	for _, c := range []struct {
		signal storage.Signal
		typ    otlpjson.MessageType
		needle string
	}{
		{storage.Traces, otlpjson.TracesData, `"` + hex.EncodeToString(traceID[:]) + `"`},
		{storage.Metrics, otlpjson.MetricsData, `"` + mExpHist + `"`},
		{storage.Logs, otlpjson.LogsData, `"interop.event"`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, serverBin, "export", "-data-dir", dataDir, "-signal", c.signal.String(), "-format", "json")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Errorf("otlp-lite export -signal %s: %v\n%s", c.signal, err, stderr.String())
			continue
		}
		if !strings.Contains(string(out), c.needle) {
			t.Errorf("otlp-lite export -signal %s output lacks %s:\n%.2000s", c.signal, c.needle, out)
		}
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(out) == 0 {
			lines = nil
		}
		want := stored[c.signal]
		if len(lines) != len(want) {
			t.Errorf("otlp-lite export -signal %s printed %d lines, want %d (one per stored record)", c.signal, len(lines), len(want))
			continue
		}
		for i, l := range lines {
			if !json.Valid([]byte(l)) || !strings.HasPrefix(l, "{") {
				t.Errorf("otlp-lite export -signal %s line %d is not a JSON object: %.200s", c.signal, i+1, l)
				continue
			}
			pb, err := otlpjson.Unmarshal(nil, c.typ, []byte(l))
			if err != nil {
				t.Errorf("otlp-lite export -signal %s line %d: otlpjson.Unmarshal: %v", c.signal, i+1, err)
				continue
			}
			got := newRequest(c.signal)
			if err := proto.Unmarshal(pb, got); err != nil {
				t.Errorf("otlp-lite export -signal %s line %d: transcoded protobuf does not parse: %v", c.signal, i+1, err)
				continue
			}
			if d := diffProto(want[i], got); d != "" {
				t.Errorf("otlp-lite export -signal %s line %d differs from stored record %d (-stored +exported):\n%s", c.signal, i+1, i+1, d)
			}
		}
	}
}
