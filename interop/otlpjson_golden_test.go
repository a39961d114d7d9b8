package interop

// Golden comparisons of package otlpjson against protojson and the official
// generated OTLP types: messages setting every field of the OTLP v1.11 data
// model are encoded by both, and otlpjson's decoding of protojson output must
// equal the original message.

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	colllogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	collmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// ojCase is one message in the golden set.
type ojCase struct {
	name string
	t    otlpjson.MessageType
	msg  proto.Message
}

func ojCases(t *testing.T) []ojCase {
	retry, err := anypb.New(&errdetails.RetryInfo{RetryDelay: durationpb.New(1500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	retryNeg, err := anypb.New(&errdetails.RetryInfo{RetryDelay: &durationpb.Duration{Seconds: -3, Nanos: -1000}})
	if err != nil {
		t.Fatal(err)
	}
	retryEmpty, err := anypb.New(&errdetails.RetryInfo{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []ojCase{
		{"traces full", otlpjson.TracesData, ojFullTraces()},
		{"metrics full", otlpjson.MetricsData, ojFullMetrics()},
		{"logs full", otlpjson.LogsData, ojFullLogs()},
		{"traces empty", otlpjson.TracesData, &tracepb.TracesData{}},
		{"trace request", otlpjson.ExportTraceServiceRequest, &colltracepb.ExportTraceServiceRequest{ResourceSpans: ojFullTraces().ResourceSpans}},
		{"trace response", otlpjson.ExportTraceServiceResponse, &colltracepb.ExportTraceServiceResponse{
			PartialSuccess: &colltracepb.ExportTracePartialSuccess{RejectedSpans: 42, ErrorMessage: "too old"}}},
		{"trace response empty", otlpjson.ExportTraceServiceResponse, &colltracepb.ExportTraceServiceResponse{
			PartialSuccess: &colltracepb.ExportTracePartialSuccess{}}},
		{"metrics response", otlpjson.ExportMetricsServiceResponse, &collmetricspb.ExportMetricsServiceResponse{
			PartialSuccess: &collmetricspb.ExportMetricsPartialSuccess{RejectedDataPoints: math.MaxInt64, ErrorMessage: "e"}}},
		{"logs response", otlpjson.ExportLogsServiceResponse, &colllogspb.ExportLogsServiceResponse{
			PartialSuccess: &colllogspb.ExportLogsPartialSuccess{RejectedLogRecords: -1, ErrorMessage: "ü"}}},
		{"status", otlpjson.Status, &statuspb.Status{Code: 14, Message: "unavailable, retry", Details: []*anypb.Any{retry, retryNeg, retryEmpty}}},
		{"status empty", otlpjson.Status, &statuspb.Status{}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 30 {
		cases = append(cases,
			ojCase{"traces random", otlpjson.TracesData, ojRandTraces(rng)},
			ojCase{"metrics random", otlpjson.MetricsData, ojRandMetrics(rng)},
			ojCase{"logs random", otlpjson.LogsData, ojRandLogs(rng)},
		)
	}
	return append(cases, ojProfilesCases()...)
}

// TestOTLPJSONGoldenMarshal compares otlpjson.Marshal with protojson, after
// translating protojson's base64 trace/span ids to the hex OTLP/JSON requires.
func TestOTLPJSONGoldenMarshal(t *testing.T) {
	for _, tc := range ojCases(t) {
		pb, err := proto.MarshalOptions{Deterministic: true}.Marshal(tc.msg)
		if err != nil {
			t.Fatalf("%s: proto.Marshal: %v", tc.name, err)
		}
		got, err := otlpjson.Marshal(nil, tc.t, pb)
		if err != nil {
			t.Fatalf("%s: otlpjson.Marshal: %v", tc.name, err)
		}
		want, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(tc.msg)
		if err != nil {
			t.Fatalf("%s: protojson.Marshal: %v", tc.name, err)
		}
		gotV := ojParse(t, got)
		wantV := ojHexIDs(t, ojParse(t, want), false)
		if diff := cmp.Diff(wantV, gotV); diff != "" {
			t.Fatalf("%s: otlpjson.Marshal differs from protojson (-protojson +otlpjson):\n%s\notlpjson: %s", tc.name, diff, got)
		}
		if !json.Valid(got) {
			t.Fatalf("%s: invalid JSON: %s", tc.name, got)
		}
	}
}

// TestOTLPJSONGoldenUnmarshal decodes protojson output in both key styles
// (lowerCamelCase with enum numbers, snake_case with enum names; ids as
// upper-case hex) and checks the result equals the original message.
func TestOTLPJSONGoldenUnmarshal(t *testing.T) {
	styles := []struct {
		name string
		opts protojson.MarshalOptions
	}{
		{"camel", protojson.MarshalOptions{UseEnumNumbers: true}},
		{"snake", protojson.MarshalOptions{UseProtoNames: true, Multiline: true}},
	}
	for _, tc := range ojCases(t) {
		for _, style := range styles {
			pj, err := style.opts.Marshal(tc.msg)
			if err != nil {
				t.Fatalf("%s: protojson.Marshal: %v", tc.name, err)
			}
			in, err := json.Marshal(ojHexIDs(t, ojParse(t, pj), true))
			if err != nil {
				t.Fatal(err)
			}
			pb, err := otlpjson.Unmarshal(nil, tc.t, in)
			if err != nil {
				t.Fatalf("%s/%s: otlpjson.Unmarshal: %v\ninput: %s", tc.name, style.name, err, in)
			}
			got := tc.msg.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(pb, got); err != nil {
				t.Fatalf("%s/%s: proto.Unmarshal of otlpjson output: %v", tc.name, style.name, err)
			}
			if !proto.Equal(got, tc.msg) {
				t.Fatalf("%s/%s: otlpjson.Unmarshal result differs:\ngot:  %v\nwant: %v", tc.name, style.name, got, tc.msg)
			}

			// The canonical form is a fixed point.
			js1, err := otlpjson.Marshal(nil, tc.t, pb)
			if err != nil {
				t.Fatal(err)
			}
			pb2, err := otlpjson.Unmarshal(nil, tc.t, js1)
			if err != nil {
				t.Fatal(err)
			}
			js2, err := otlpjson.Marshal(nil, tc.t, pb2)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(js1, js2) {
				t.Fatalf("%s: encode/decode/encode not stable:\n%s\n%s", tc.name, js1, js2)
			}
		}
	}
}

func ojParse(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

// ojHexIDs rewrites the base64 trace/span ids protojson writes into hex,
// upper-case if upper is set, and so the 16-byte profile ids (as pdata
// writes them; otlpjson's kProfileID).
func ojHexIDs(t *testing.T, v any, upper bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id":
				b, err := base64.StdEncoding.DecodeString(x.(string))
				if err != nil {
					t.Fatalf("id %q is not base64: %v", x, err)
				}
				h := hex.EncodeToString(b)
				if upper {
					h = strings.ToUpper(h)
				}
				v[k] = h
			case "profileId", "profile_id":
				if b, err := base64.StdEncoding.DecodeString(x.(string)); err == nil && len(b) == 16 {
					v[k] = hex.EncodeToString(b)
				}
			default:
				v[k] = ojHexIDs(t, x, upper)
			}
		}
	case []any:
		for i := range v {
			v[i] = ojHexIDs(t, v[i], upper)
		}
	}
	return v
}

func ojStr(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

func ojKV(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

// ojEveryValue returns attributes with every AnyValue member, nested.
func ojEveryValue() []*commonpb.KeyValue {
	return []*commonpb.KeyValue{
		ojKV("str", ojStr("héllo \"quoted\"\n\t\x01 😀 </script>")),
		ojKV("empty", ojStr("")),
		ojKV("bool", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}),
		ojKV("false", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{}}),
		ojKV("int", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: math.MinInt64}}),
		ojKV("zero", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{}}),
		ojKV("double", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 3.14159}}),
		ojKV("nan", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: math.NaN()}}),
		ojKV("inf", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: math.Inf(-1)}}),
		ojKV("tiny", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 5e-324}}),
		ojKV("bytes", &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1, 0xfe, 0xff}}}),
		ojKV("strindex", &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValueStrindex{StringValueStrindex: -7}}),
		ojKV("array", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{
			ojStr("a"), {}, {Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{}}},
		}}}}),
		ojKV("kvlist", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{
			ojKV("nested", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{}}}),
			{Key: "novalue"},
		}}}}),
		{KeyStrindex: 3, Value: ojStr("by index")},
		ojKV("empty value", &commonpb.AnyValue{}),
	}
}

func ojResource() *resourcepb.Resource {
	return &resourcepb.Resource{
		Attributes:             append([]*commonpb.KeyValue{ojKV("service.name", ojStr("checkout"))}, ojEveryValue()...),
		DroppedAttributesCount: 2,
		EntityRefs: []*commonpb.EntityRef{
			{SchemaUrl: "https://opentelemetry.io/schemas/1.30.0", Type: "service", IdKeys: []string{"service.name", "service.namespace"}, DescriptionKeys: []string{"service.version", ""}},
			{},
		},
	}
}

func ojScope() *commonpb.InstrumentationScope {
	return &commonpb.InstrumentationScope{Name: "io.opentelemetry.lib", Version: "1.2.3", Attributes: ojEveryValue()[:3], DroppedAttributesCount: 1}
}

var (
	ojTraceID = []byte{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c}
	ojSpanID  = []byte{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74}
	ojSpanID2 = []byte{0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}
)

func ojFullTraces() *tracepb.TracesData {
	return &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{
		{
			Resource: ojResource(),
			ScopeSpans: []*tracepb.ScopeSpans{{
				Scope: ojScope(),
				Spans: []*tracepb.Span{
					{
						TraceId: ojTraceID, SpanId: ojSpanID, TraceState: "rojo=00f067aa0ba902b7", ParentSpanId: ojSpanID2,
						Flags: 0x301, Name: "GET /api", Kind: tracepb.Span_SPAN_KIND_SERVER,
						StartTimeUnixNano: 1544712660000000000, EndTimeUnixNano: math.MaxUint64,
						Attributes: ojEveryValue(), DroppedAttributesCount: 1,
						Events: []*tracepb.Span_Event{
							{TimeUnixNano: 1544712660500000000, Name: "exception", Attributes: ojEveryValue()[:2], DroppedAttributesCount: 4},
							{},
						},
						DroppedEventsCount: 5,
						Links: []*tracepb.Span_Link{
							{TraceId: ojTraceID, SpanId: ojSpanID2, TraceState: "a=b", Attributes: ojEveryValue()[2:4], DroppedAttributesCount: 6, Flags: 0x100},
							{},
						},
						DroppedLinksCount: 7,
						Status:            &tracepb.Status{Message: "boom", Code: tracepb.Status_STATUS_CODE_ERROR},
					},
					{Status: &tracepb.Status{}},
					{Kind: tracepb.Span_SpanKind(99)},
				},
				SchemaUrl: "https://opentelemetry.io/schemas/1.4.0",
			}, {}},
			SchemaUrl: "https://opentelemetry.io/schemas/1.5.0",
		},
		{},
	}}
}

func ojExemplars() []*metricspb.Exemplar {
	return []*metricspb.Exemplar{
		{FilteredAttributes: ojEveryValue()[:2], TimeUnixNano: 7, Value: &metricspb.Exemplar_AsDouble{AsDouble: -0.5}, SpanId: ojSpanID, TraceId: ojTraceID},
		{Value: &metricspb.Exemplar_AsInt{AsInt: math.MinInt64}},
		{Value: &metricspb.Exemplar_AsDouble{}},
		{},
	}
}

func ojF(f float64) *float64 { return &f }

func ojFullMetrics() *metricspb.MetricsData {
	attrs := ojEveryValue()[:3]
	return &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource: ojResource(),
		ScopeMetrics: []*metricspb.ScopeMetrics{{
			Scope: ojScope(),
			Metrics: []*metricspb.Metric{
				{Name: "gauge", Description: "a gauge", Unit: "1", Metadata: ojEveryValue()[:1], Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: []*metricspb.NumberDataPoint{
					{Attributes: attrs, StartTimeUnixNano: 1, TimeUnixNano: 2, Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: 1e21}, Exemplars: ojExemplars(), Flags: 1},
					{Value: &metricspb.NumberDataPoint_AsInt{AsInt: 0}},
					{Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: math.Copysign(0, -1)}},
					{},
				}}}},
				{Name: "sum", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
					DataPoints:             []*metricspb.NumberDataPoint{{Value: &metricspb.NumberDataPoint_AsInt{AsInt: -42}, TimeUnixNano: math.MaxUint64}},
					AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE,
					IsMonotonic:            true,
				}}},
				{Name: "histogram", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
					DataPoints: []*metricspb.HistogramDataPoint{
						{
							Attributes: attrs, StartTimeUnixNano: 3, TimeUnixNano: 4, Count: 10, Sum: ojF(0),
							BucketCounts: []uint64{1, 2, 0, math.MaxUint64}, ExplicitBounds: []float64{0.5, 1e-7, math.Inf(1), math.NaN()},
							Exemplars: ojExemplars()[:1], Flags: 1, Min: ojF(math.Inf(-1)), Max: ojF(1e300),
						},
						{Sum: ojF(math.Copysign(0, -1))},
						{},
					},
					AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
				}}},
				{Name: "exphist", Data: &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{
					DataPoints: []*metricspb.ExponentialHistogramDataPoint{
						{
							Attributes: attrs, StartTimeUnixNano: 5, TimeUnixNano: 6, Count: 11, Sum: ojF(12.5), Scale: -3, ZeroCount: 2,
							Positive: &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: -5, BucketCounts: []uint64{0, 1, 1 << 40}},
							Negative: &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: 2147483647},
							Flags:    1, Exemplars: ojExemplars()[1:], Min: ojF(0), Max: ojF(99), ZeroThreshold: 1e-9,
						},
						{Positive: &metricspb.ExponentialHistogramDataPoint_Buckets{}, Scale: 20},
					},
					AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE,
				}}},
				{Name: "summary", Data: &metricspb.Metric_Summary{Summary: &metricspb.Summary{DataPoints: []*metricspb.SummaryDataPoint{
					{
						Attributes: attrs, StartTimeUnixNano: 7, TimeUnixNano: 8, Count: 3, Sum: 6.5,
						QuantileValues: []*metricspb.SummaryDataPoint_ValueAtQuantile{{Quantile: 0.5, Value: 2}, {Quantile: 1, Value: math.MaxFloat64}, {}},
						Flags:          1,
					},
					{},
				}}}},
				{Name: "empty gauge", Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{}}},
				{Name: "no data"},
			},
			SchemaUrl: "https://opentelemetry.io/schemas/1.4.0",
		}},
		SchemaUrl: "https://opentelemetry.io/schemas/1.5.0",
	}}}
}

func ojFullLogs() *logspb.LogsData {
	return &logspb.LogsData{ResourceLogs: []*logspb.ResourceLogs{{
		Resource: ojResource(),
		ScopeLogs: []*logspb.ScopeLogs{{
			Scope: ojScope(),
			LogRecords: []*logspb.LogRecord{
				{
					TimeUnixNano: 1544712660300000000, ObservedTimeUnixNano: 1544712660300000001,
					SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_FATAL4, SeverityText: "FATAL",
					Body:       &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: ojEveryValue()}}},
					Attributes: ojEveryValue(), DroppedAttributesCount: 3, Flags: 1,
					TraceId: ojTraceID, SpanId: ojSpanID, EventName: "device.app.lifecycle",
				},
				{Body: &commonpb.AnyValue{}},
				{SeverityNumber: logspb.SeverityNumber(1000)},
			},
			SchemaUrl: "https://opentelemetry.io/schemas/1.4.0",
		}},
		SchemaUrl: "https://opentelemetry.io/schemas/1.5.0",
	}}}
}

// Random messages: every field is set with probability 1/2, to values drawn
// from edge cases, so that the golden comparison also covers field
// combinations the hand-written messages miss.

func ojRandU64(r *rand.Rand) uint64 {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return math.MaxUint64
	case 2:
		return r.Uint64N(1000)
	}
	return r.Uint64()
}

func ojRandF64(r *rand.Rand) float64 {
	vals := []float64{0, math.Copysign(0, -1), 1, -1.5, math.NaN(), math.Inf(1), math.Inf(-1), 1e21, 1e-7, 123456.789, math.MaxFloat64, math.SmallestNonzeroFloat64}
	if r.IntN(3) == 0 {
		return math.Float64frombits(r.Uint64())
	}
	return vals[r.IntN(len(vals))]
}

func ojRandStr(r *rand.Rand) string {
	vals := []string{"", "a", "héllo", "\"\\/\b\f\n\r\t\x00\x1f", "😀 \u2028 <>&", strings.Repeat("x", 200)}
	return vals[r.IntN(len(vals))]
}

func ojRandBytes(r *rand.Rand, n int) []byte {
	if r.IntN(3) == 0 {
		return nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func ojRandAny(r *rand.Rand, depth int) *commonpb.AnyValue {
	n := 9
	if depth > 3 {
		n = 5
	}
	switch r.IntN(n) {
	case 0:
		return &commonpb.AnyValue{}
	case 1:
		return ojStr(ojRandStr(r))
	case 2:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: r.IntN(2) == 0}}
	case 3:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(ojRandU64(r))}}
	case 4:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: ojRandF64(r)}}
	case 5:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: ojRandBytes(r, r.IntN(10))}}
	case 6:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValueStrindex{StringValueStrindex: int32(r.Uint32())}}
	case 7:
		var vs []*commonpb.AnyValue
		for range r.IntN(3) {
			vs = append(vs, ojRandAny(r, depth+1))
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: ojRandAttrs(r, depth+1)}}}
}

func ojRandAttrs(r *rand.Rand, depth int) []*commonpb.KeyValue {
	var kvs []*commonpb.KeyValue
	for range r.IntN(3) {
		kv := &commonpb.KeyValue{Key: ojRandStr(r)}
		if r.IntN(2) == 0 {
			kv.Value = ojRandAny(r, depth)
		}
		if r.IntN(4) == 0 {
			kv.KeyStrindex = int32(r.Uint32())
		}
		kvs = append(kvs, kv)
	}
	return kvs
}

func ojRandResource(r *rand.Rand) *resourcepb.Resource {
	if r.IntN(2) == 0 {
		return nil
	}
	res := &resourcepb.Resource{Attributes: ojRandAttrs(r, 0), DroppedAttributesCount: uint32(ojRandU64(r))}
	if r.IntN(2) == 0 {
		res.EntityRefs = []*commonpb.EntityRef{{SchemaUrl: ojRandStr(r), Type: ojRandStr(r), IdKeys: []string{ojRandStr(r)}, DescriptionKeys: []string{ojRandStr(r), ojRandStr(r)}}}
	}
	return res
}

func ojRandScope(r *rand.Rand) *commonpb.InstrumentationScope {
	if r.IntN(2) == 0 {
		return nil
	}
	return &commonpb.InstrumentationScope{Name: ojRandStr(r), Version: ojRandStr(r), Attributes: ojRandAttrs(r, 0), DroppedAttributesCount: uint32(ojRandU64(r))}
}

func ojRandTraces(r *rand.Rand) *tracepb.TracesData {
	var spans []*tracepb.Span
	for range r.IntN(4) {
		s := &tracepb.Span{
			TraceId: ojRandBytes(r, 16), SpanId: ojRandBytes(r, 8), TraceState: ojRandStr(r), ParentSpanId: ojRandBytes(r, 8),
			Flags: uint32(ojRandU64(r)), Name: ojRandStr(r), Kind: tracepb.Span_SpanKind(r.IntN(7)),
			StartTimeUnixNano: ojRandU64(r), EndTimeUnixNano: ojRandU64(r), Attributes: ojRandAttrs(r, 0),
			DroppedAttributesCount: uint32(ojRandU64(r)), DroppedEventsCount: uint32(ojRandU64(r)), DroppedLinksCount: uint32(ojRandU64(r)),
		}
		for range r.IntN(3) {
			s.Events = append(s.Events, &tracepb.Span_Event{TimeUnixNano: ojRandU64(r), Name: ojRandStr(r), Attributes: ojRandAttrs(r, 0), DroppedAttributesCount: uint32(r.IntN(3))})
		}
		for range r.IntN(3) {
			s.Links = append(s.Links, &tracepb.Span_Link{TraceId: ojRandBytes(r, 16), SpanId: ojRandBytes(r, 8), TraceState: ojRandStr(r), Attributes: ojRandAttrs(r, 0), DroppedAttributesCount: uint32(r.IntN(3)), Flags: uint32(ojRandU64(r))})
		}
		if r.IntN(2) == 0 {
			s.Status = &tracepb.Status{Message: ojRandStr(r), Code: tracepb.Status_StatusCode(r.IntN(4))}
		}
		spans = append(spans, s)
	}
	return &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   ojRandResource(r),
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: ojRandScope(r), Spans: spans, SchemaUrl: ojRandStr(r)}},
		SchemaUrl:  ojRandStr(r),
	}}}
}

func ojRandOptF(r *rand.Rand) *float64 {
	if r.IntN(2) == 0 {
		return nil
	}
	return ojF(ojRandF64(r))
}

func ojRandExemplars(r *rand.Rand) []*metricspb.Exemplar {
	var es []*metricspb.Exemplar
	for range r.IntN(3) {
		e := &metricspb.Exemplar{FilteredAttributes: ojRandAttrs(r, 0), TimeUnixNano: ojRandU64(r), SpanId: ojRandBytes(r, 8), TraceId: ojRandBytes(r, 16)}
		switch r.IntN(3) {
		case 0:
			e.Value = &metricspb.Exemplar_AsDouble{AsDouble: ojRandF64(r)}
		case 1:
			e.Value = &metricspb.Exemplar_AsInt{AsInt: int64(ojRandU64(r))}
		}
		es = append(es, e)
	}
	return es
}

func ojRandNumberPoints(r *rand.Rand) []*metricspb.NumberDataPoint {
	var dps []*metricspb.NumberDataPoint
	for range r.IntN(3) {
		dp := &metricspb.NumberDataPoint{Attributes: ojRandAttrs(r, 0), StartTimeUnixNano: ojRandU64(r), TimeUnixNano: ojRandU64(r), Exemplars: ojRandExemplars(r), Flags: uint32(r.IntN(2))}
		switch r.IntN(3) {
		case 0:
			dp.Value = &metricspb.NumberDataPoint_AsDouble{AsDouble: ojRandF64(r)}
		case 1:
			dp.Value = &metricspb.NumberDataPoint_AsInt{AsInt: int64(ojRandU64(r))}
		}
		dps = append(dps, dp)
	}
	return dps
}

func ojRandMetrics(r *rand.Rand) *metricspb.MetricsData {
	temporality := func() metricspb.AggregationTemporality { return metricspb.AggregationTemporality(r.IntN(4)) }
	var ms []*metricspb.Metric
	for range r.IntN(6) {
		m := &metricspb.Metric{Name: ojRandStr(r), Description: ojRandStr(r), Unit: ojRandStr(r), Metadata: ojRandAttrs(r, 0)}
		switch r.IntN(6) {
		case 0:
			m.Data = &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: ojRandNumberPoints(r)}}
		case 1:
			m.Data = &metricspb.Metric_Sum{Sum: &metricspb.Sum{DataPoints: ojRandNumberPoints(r), AggregationTemporality: temporality(), IsMonotonic: r.IntN(2) == 0}}
		case 2:
			var dps []*metricspb.HistogramDataPoint
			for range r.IntN(3) {
				dp := &metricspb.HistogramDataPoint{
					Attributes: ojRandAttrs(r, 0), StartTimeUnixNano: ojRandU64(r), TimeUnixNano: ojRandU64(r), Count: ojRandU64(r),
					Sum: ojRandOptF(r), Exemplars: ojRandExemplars(r), Flags: uint32(r.IntN(2)), Min: ojRandOptF(r), Max: ojRandOptF(r),
				}
				for range r.IntN(4) {
					dp.BucketCounts = append(dp.BucketCounts, ojRandU64(r))
					dp.ExplicitBounds = append(dp.ExplicitBounds, ojRandF64(r))
				}
				dps = append(dps, dp)
			}
			m.Data = &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{DataPoints: dps, AggregationTemporality: temporality()}}
		case 3:
			var dps []*metricspb.ExponentialHistogramDataPoint
			buckets := func() *metricspb.ExponentialHistogramDataPoint_Buckets {
				if r.IntN(2) == 0 {
					return nil
				}
				b := &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: int32(r.Uint32())}
				for range r.IntN(4) {
					b.BucketCounts = append(b.BucketCounts, ojRandU64(r))
				}
				return b
			}
			for range r.IntN(3) {
				dps = append(dps, &metricspb.ExponentialHistogramDataPoint{
					Attributes: ojRandAttrs(r, 0), StartTimeUnixNano: ojRandU64(r), TimeUnixNano: ojRandU64(r), Count: ojRandU64(r),
					Sum: ojRandOptF(r), Scale: int32(r.Uint32()), ZeroCount: ojRandU64(r), Positive: buckets(), Negative: buckets(),
					Flags: uint32(r.IntN(2)), Exemplars: ojRandExemplars(r), Min: ojRandOptF(r), Max: ojRandOptF(r), ZeroThreshold: ojRandF64(r),
				})
			}
			m.Data = &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{DataPoints: dps, AggregationTemporality: temporality()}}
		case 4:
			var dps []*metricspb.SummaryDataPoint
			for range r.IntN(3) {
				dp := &metricspb.SummaryDataPoint{Attributes: ojRandAttrs(r, 0), StartTimeUnixNano: ojRandU64(r), TimeUnixNano: ojRandU64(r), Count: ojRandU64(r), Sum: ojRandF64(r), Flags: uint32(r.IntN(2))}
				for range r.IntN(3) {
					dp.QuantileValues = append(dp.QuantileValues, &metricspb.SummaryDataPoint_ValueAtQuantile{Quantile: ojRandF64(r), Value: ojRandF64(r)})
				}
				dps = append(dps, dp)
			}
			m.Data = &metricspb.Metric_Summary{Summary: &metricspb.Summary{DataPoints: dps}}
		}
		ms = append(ms, m)
	}
	return &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource:     ojRandResource(r),
		ScopeMetrics: []*metricspb.ScopeMetrics{{Scope: ojRandScope(r), Metrics: ms, SchemaUrl: ojRandStr(r)}},
		SchemaUrl:    ojRandStr(r),
	}}}
}

func ojRandLogs(r *rand.Rand) *logspb.LogsData {
	var lrs []*logspb.LogRecord
	for range r.IntN(4) {
		lr := &logspb.LogRecord{
			TimeUnixNano: ojRandU64(r), ObservedTimeUnixNano: ojRandU64(r), SeverityNumber: logspb.SeverityNumber(r.IntN(26)),
			SeverityText: ojRandStr(r), Attributes: ojRandAttrs(r, 0), DroppedAttributesCount: uint32(ojRandU64(r)),
			Flags: uint32(ojRandU64(r)), TraceId: ojRandBytes(r, 16), SpanId: ojRandBytes(r, 8), EventName: ojRandStr(r),
		}
		if r.IntN(3) != 0 {
			lr.Body = ojRandAny(r, 0)
		}
		lrs = append(lrs, lr)
	}
	return &logspb.LogsData{ResourceLogs: []*logspb.ResourceLogs{{
		Resource:  ojRandResource(r),
		ScopeLogs: []*logspb.ScopeLogs{{Scope: ojRandScope(r), LogRecords: lrs, SchemaUrl: ojRandStr(r)}},
		SchemaUrl: ojRandStr(r),
	}}}
}
