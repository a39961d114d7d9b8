package interop

// Helpers of golden_test.go: builders of OTLP requests covering every field
// of the v1.11 data model with the official generated types, and
// converters from otlpview's views back to those types, so that a decoded
// request can be compared with what was built using proto.Equal.

import (
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/otlp-lite/otlp-lite/otlpview"
)

func gStr(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

func gInt(i int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
}

func gKV(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

// gEveryValue returns attributes holding every AnyValue form, nested
// arrays and kvlists included, and an empty AnyValue.
func gEveryValue(prefix string) []*commonpb.KeyValue {
	return []*commonpb.KeyValue{
		gKV(prefix+"str", gStr("välue ✓")),
		gKV(prefix+"empty-str", gStr("")),
		gKV(prefix+"bool", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}),
		gKV(prefix+"false", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: false}}),
		gKV(prefix+"int", gInt(-42)),
		gKV(prefix+"maxint", gInt(1<<63-1)),
		gKV(prefix+"double", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: -3.25}}),
		gKV(prefix+"bytes", &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1, 0xff}}}),
		gKV(prefix+"null", &commonpb.AnyValue{}),
		gKV(prefix+"array", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{
			Values: []*commonpb.AnyValue{
				gStr("a"), gInt(7), {},
				{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{gInt(1), gInt(2)}}}},
				{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{gKV("in", gStr("array"))}}}},
			},
		}}}),
		gKV(prefix+"kvlist", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{
			Values: []*commonpb.KeyValue{
				gKV("k1", gStr("v1")),
				gKV("nested", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{
					Values: []*commonpb.KeyValue{gKV("deep", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{
						Values: []*commonpb.AnyValue{{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 1.5}}},
					}}})},
				}}}),
				gKV("empty-list", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{}}}),
				gKV("empty-array", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{}}}),
			},
		}}}),
	}
}

func gResource(n int) *resourcepb.Resource {
	return &resourcepb.Resource{
		Attributes: append([]*commonpb.KeyValue{
			gKV("service.name", gStr("svc")), gKV("host.name", gStr("h1")), gKV("res.n", gInt(int64(n))),
		}, gEveryValue("res.")...),
		DroppedAttributesCount: 3,
		EntityRefs: []*commonpb.EntityRef{
			{SchemaUrl: "https://opentelemetry.io/schemas/1.30.0", Type: "service", IdKeys: []string{"service.name"}, DescriptionKeys: []string{"host.name", "res.n"}},
			{Type: "host", IdKeys: []string{"host.name"}},
		},
	}
}

func gScope(n int) *commonpb.InstrumentationScope {
	return &commonpb.InstrumentationScope{
		Name:                   "scope.lib",
		Version:                "v1.2.3",
		Attributes:             []*commonpb.KeyValue{gKV("scope.n", gInt(int64(n)))},
		DroppedAttributesCount: 1,
	}
}

func gID(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

// gFullTraces builds a request that sets every field of every trace
// message, across two resources and scopes.
func gFullTraces() *coltracepb.ExportTraceServiceRequest {
	req := &coltracepb.ExportTraceServiceRequest{}
	for r := 0; r < 2; r++ {
		rs := &tracepb.ResourceSpans{Resource: gResource(r), SchemaUrl: "https://opentelemetry.io/schemas/1.21.0"}
		for s := 0; s < 2; s++ {
			ss := &tracepb.ScopeSpans{Scope: gScope(s), SchemaUrl: "https://example.com/scope-schema"}
			for i := 0; i < 3; i++ {
				seed := byte(r*100 + s*10 + i)
				ss.Spans = append(ss.Spans, &tracepb.Span{
					TraceId:                gID(16, seed),
					SpanId:                 gID(8, seed+1),
					TraceState:             "vendor=a,other=b",
					ParentSpanId:           gID(8, seed+2),
					Flags:                  0x301,
					Name:                   "span ✓",
					Kind:                   tracepb.Span_SpanKind(i%5 + 1),
					StartTimeUnixNano:      1_700_000_000_000_000_000 + uint64(i),
					EndTimeUnixNano:        1_700_000_000_500_000_000 + uint64(i),
					Attributes:             gEveryValue("span."),
					DroppedAttributesCount: 4,
					Events: []*tracepb.Span_Event{
						{TimeUnixNano: 1_700_000_000_100_000_000, Name: "ev1", Attributes: gEveryValue("ev."), DroppedAttributesCount: 2},
						{Name: "ev2"},
					},
					DroppedEventsCount: 5,
					Links: []*tracepb.Span_Link{
						{TraceId: gID(16, 200), SpanId: gID(8, 220), TraceState: "k=v", Attributes: []*commonpb.KeyValue{gKV("link.a", gInt(1))}, DroppedAttributesCount: 6, Flags: 0x101},
						{TraceId: gID(16, 201), SpanId: gID(8, 221)},
					},
					DroppedLinksCount: 7,
					Status:            &tracepb.Status{Message: "boom", Code: tracepb.Status_StatusCode(i % 3)},
				})
			}
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		req.ResourceSpans = append(req.ResourceSpans, rs)
	}
	return req
}

// gTraces500x10 builds the benchmark payload: one resource, one scope, 500
// spans with 10 attributes each (the shape the receiver's budget is
// stated for).
func gTraces500x10() *coltracepb.ExportTraceServiceRequest {
	ss := &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: "bench", Version: "1.0"}}
	for i := 0; i < 500; i++ {
		sp := &tracepb.Span{
			TraceId:           gID(16, byte(i)),
			SpanId:            gID(8, byte(i+3)),
			ParentSpanId:      gID(8, byte(i+5)),
			Name:              "GET /api/v1/items/{id}",
			Kind:              tracepb.Span_SPAN_KIND_SERVER,
			StartTimeUnixNano: 1_700_000_000_000_000_000 + uint64(i)*1000,
			EndTimeUnixNano:   1_700_000_000_000_900_000 + uint64(i)*1000,
			Status:            &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK},
		}
		sp.Attributes = []*commonpb.KeyValue{
			gKV("http.request.method", gStr("GET")),
			gKV("http.route", gStr("/api/v1/items/{id}")),
			gKV("http.response.status_code", gInt(200)),
			gKV("url.path", gStr("/api/v1/items/12345")),
			gKV("url.scheme", gStr("https")),
			gKV("server.address", gStr("api.example.com")),
			gKV("server.port", gInt(443)),
			gKV("user_agent.original", gStr("Mozilla/5.0 (X11; Linux x86_64)")),
			gKV("network.protocol.version", gStr("1.1")),
			gKV("client.address", gStr("10.1.2.3")),
		}
		ss.Spans = append(ss.Spans, sp)
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{gKV("service.name", gStr("bench"))}},
		ScopeSpans: []*tracepb.ScopeSpans{ss},
	}}}
}

func gExemplars() []*metricspb.Exemplar {
	return []*metricspb.Exemplar{
		{FilteredAttributes: []*commonpb.KeyValue{gKV("ex.k", gStr("v"))}, TimeUnixNano: 11, Value: &metricspb.Exemplar_AsDouble{AsDouble: 2.5}, SpanId: gID(8, 1), TraceId: gID(16, 2)},
		{TimeUnixNano: 12, Value: &metricspb.Exemplar_AsInt{AsInt: -9}},
		{TimeUnixNano: 13},
	}
}

// gFullMetrics builds a request with the five metric kinds, every field
// of every data point set, and optional fields both present and absent.
func gFullMetrics() *colmetricspb.ExportMetricsServiceRequest {
	attrs := func(n int) []*commonpb.KeyValue {
		return []*commonpb.KeyValue{gKV("dp.n", gInt(int64(n))), gKV("dp.s", gStr("x"))}
	}
	metrics := []*metricspb.Metric{
		{Name: "g", Description: "a gauge", Unit: "1", Metadata: []*commonpb.KeyValue{gKV("meta", gStr("m"))},
			Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: []*metricspb.NumberDataPoint{
				{Attributes: attrs(0), StartTimeUnixNano: 1, TimeUnixNano: 2, Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: 1.25}, Exemplars: gExemplars(), Flags: 1},
				{Attributes: attrs(1), StartTimeUnixNano: 3, TimeUnixNano: 4, Value: &metricspb.NumberDataPoint_AsInt{AsInt: -5}},
				{TimeUnixNano: 5},
			}}}},
		{Name: "s", Unit: "By",
			Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
				AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE,
				IsMonotonic:            true,
				DataPoints: []*metricspb.NumberDataPoint{
					{Attributes: attrs(2), StartTimeUnixNano: 6, TimeUnixNano: 7, Value: &metricspb.NumberDataPoint_AsInt{AsInt: 1 << 40}, Exemplars: gExemplars()},
				},
			}}},
		{Name: "h", Description: "histogram",
			Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
				AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
				DataPoints: []*metricspb.HistogramDataPoint{
					{Attributes: attrs(3), StartTimeUnixNano: 8, TimeUnixNano: 9, Count: 10, Sum: ptrF(55.5),
						BucketCounts: []uint64{1, 2, 3, 4}, ExplicitBounds: []float64{-1, 0, 2.5},
						Exemplars: gExemplars(), Flags: 1, Min: ptrF(-3), Max: ptrF(99)},
					{TimeUnixNano: 10, Count: 0, BucketCounts: []uint64{0}, Sum: ptrF(0)},
					{TimeUnixNano: 11},
				},
			}}},
		{Name: "eh",
			Data: &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{
				AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE,
				DataPoints: []*metricspb.ExponentialHistogramDataPoint{
					{Attributes: attrs(4), StartTimeUnixNano: 12, TimeUnixNano: 13, Count: 20, Sum: ptrF(7.5),
						Scale: -3, ZeroCount: 2,
						Positive:      &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: -2, BucketCounts: []uint64{1, 0, 300, 1 << 40}},
						Negative:      &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: 5, BucketCounts: []uint64{4}},
						Flags:         1,
						Exemplars:     gExemplars(),
						Min:           ptrF(-1e9),
						Max:           ptrF(1e9),
						ZeroThreshold: 1e-9},
					{TimeUnixNano: 14, Scale: 20,
						Positive: &metricspb.ExponentialHistogramDataPoint_Buckets{},
						Negative: &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: -1}},
				},
			}}},
		{Name: "sm", Unit: "s",
			Data: &metricspb.Metric_Summary{Summary: &metricspb.Summary{DataPoints: []*metricspb.SummaryDataPoint{
				{Attributes: attrs(5), StartTimeUnixNano: 15, TimeUnixNano: 16, Count: 100, Sum: 12.5,
					QuantileValues: []*metricspb.SummaryDataPoint_ValueAtQuantile{{Quantile: 0, Value: 0.1}, {Quantile: 0.5, Value: 1}, {Quantile: 1, Value: 9}},
					Flags:          1},
				{TimeUnixNano: 17},
			}}}},
		{Name: "no-data", Description: "a metric without data"},
	}
	return &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource:  gResource(0),
		SchemaUrl: "https://opentelemetry.io/schemas/1.21.0",
		ScopeMetrics: []*metricspb.ScopeMetrics{
			{Scope: gScope(0), Metrics: metrics, SchemaUrl: "https://example.com/s"},
			{Scope: gScope(1), Metrics: metrics[:1]},
		},
	}}}
}

func ptrF(f float64) *float64 { return &f }

// gFullLogs builds a request with every LogRecord field and bodies of
// every AnyValue form.
func gFullLogs() *collogspb.ExportLogsServiceRequest {
	var recs []*logspb.LogRecord
	for i, kv := range gEveryValue("body.") {
		recs = append(recs, &logspb.LogRecord{
			TimeUnixNano:           1_700_000_000_000_000_000 + uint64(i),
			ObservedTimeUnixNano:   1_700_000_001_000_000_000 + uint64(i),
			SeverityNumber:         logspb.SeverityNumber(i%24 + 1),
			SeverityText:           "WARN",
			Body:                   kv.Value,
			Attributes:             gEveryValue("log."),
			DroppedAttributesCount: 8,
			Flags:                  1,
			TraceId:                gID(16, byte(i)),
			SpanId:                 gID(8, byte(i)),
			EventName:              "app.event",
		})
	}
	// A record with only a body and no ids: they are optional in logs.
	recs = append(recs, &logspb.LogRecord{Body: gStr("plain")})
	return &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{
		{Resource: gResource(0), SchemaUrl: "https://opentelemetry.io/schemas/1.21.0",
			ScopeLogs: []*logspb.ScopeLogs{{Scope: gScope(0), LogRecords: recs, SchemaUrl: "https://example.com/s"}}},
		{Resource: gResource(1), ScopeLogs: []*logspb.ScopeLogs{{Scope: gScope(1), LogRecords: recs[:2]}}},
	}}
}

// --- converters from views back to the generated types ---

func pbAnyValue(t *testing.T, v *otlpview.AnyValue) *commonpb.AnyValue {
	t.Helper()
	switch v.Kind() {
	case otlpview.KindString:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.Str()}}
	case otlpview.KindBool:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.Bool()}}
	case otlpview.KindInt:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.Int()}}
	case otlpview.KindDouble:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.Double()}}
	case otlpview.KindBytes:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: append([]byte{}, v.Bytes()...)}}
	case otlpview.KindArray:
		arr := &commonpb.ArrayValue{}
		it := v.Array().Iter()
		for it.Next() {
			arr.Values = append(arr.Values, pbAnyValue(t, it.Value()))
		}
		if err := it.Err(); err != nil {
			t.Fatalf("array iteration: %v", err)
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: arr}}
	case otlpview.KindKVList:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: pbKVs(t, v.KVList())}}}
	}
	return &commonpb.AnyValue{}
}

func pbKVs(t *testing.T, kvs otlpview.KeyValues) []*commonpb.KeyValue {
	t.Helper()
	var out []*commonpb.KeyValue
	it := kvs.Iter()
	for it.Next() {
		kv := it.KeyValue()
		out = append(out, &commonpb.KeyValue{Key: kv.Key, Value: pbAnyValue(t, &kv.Value)})
	}
	if err := it.Err(); err != nil {
		t.Fatalf("attribute iteration: %v", err)
	}
	if got := kvs.Len(); got != len(out) {
		t.Fatalf("KeyValues.Len() = %d, iteration saw %d", got, len(out))
	}
	return out
}

func pbStrings(t *testing.T, ss otlpview.Strings) []string {
	t.Helper()
	var out []string
	it := ss.Iter()
	for it.Next() {
		out = append(out, it.String())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func pbResource(t *testing.T, r *otlpview.Resource) *resourcepb.Resource {
	t.Helper()
	out := &resourcepb.Resource{Attributes: pbKVs(t, r.Attributes), DroppedAttributesCount: r.DroppedAttributesCount}
	it := r.EntityRefs.Iter()
	for it.Next() {
		e := it.EntityRef()
		out.EntityRefs = append(out.EntityRefs, &commonpb.EntityRef{
			SchemaUrl: e.SchemaURL, Type: e.Type,
			IdKeys: pbStrings(t, e.IDKeys), DescriptionKeys: pbStrings(t, e.DescriptionKeys),
		})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func pbScope(t *testing.T, s *otlpview.Scope) *commonpb.InstrumentationScope {
	t.Helper()
	return &commonpb.InstrumentationScope{
		Name: s.Name, Version: s.Version, Attributes: pbKVs(t, s.Attributes), DroppedAttributesCount: s.DroppedAttributesCount,
	}
}

func cloneBytes(b []byte) []byte { return append([]byte(nil), b...) }

func pbSpan(t *testing.T, s *otlpview.Span) *tracepb.Span {
	t.Helper()
	out := &tracepb.Span{
		TraceId: cloneBytes(s.TraceID), SpanId: cloneBytes(s.SpanID), TraceState: s.TraceState,
		ParentSpanId: cloneBytes(s.ParentSpanID), Flags: s.Flags, Name: s.Name,
		Kind:              tracepb.Span_SpanKind(s.Kind),
		StartTimeUnixNano: s.StartTimeUnixNano, EndTimeUnixNano: s.EndTimeUnixNano,
		Attributes: pbKVs(t, s.Attributes), DroppedAttributesCount: s.DroppedAttributesCount,
		DroppedEventsCount: s.DroppedEventsCount, DroppedLinksCount: s.DroppedLinksCount,
		Status: &tracepb.Status{Message: s.Status.Message, Code: tracepb.Status_StatusCode(s.Status.Code)},
	}
	ev := s.Events.Iter()
	for ev.Next() {
		e := ev.Event()
		out.Events = append(out.Events, &tracepb.Span_Event{TimeUnixNano: e.TimeUnixNano, Name: e.Name, Attributes: pbKVs(t, e.Attributes), DroppedAttributesCount: e.DroppedAttributesCount})
	}
	if err := ev.Err(); err != nil {
		t.Fatal(err)
	}
	li := s.Links.Iter()
	for li.Next() {
		l := li.Link()
		out.Links = append(out.Links, &tracepb.Span_Link{TraceId: cloneBytes(l.TraceID), SpanId: cloneBytes(l.SpanID), TraceState: l.TraceState, Attributes: pbKVs(t, l.Attributes), DroppedAttributesCount: l.DroppedAttributesCount, Flags: l.Flags})
	}
	if err := li.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func pbExemplars(t *testing.T, es otlpview.Exemplars) []*metricspb.Exemplar {
	t.Helper()
	var out []*metricspb.Exemplar
	it := es.Iter()
	for it.Next() {
		e := it.Exemplar()
		x := &metricspb.Exemplar{FilteredAttributes: pbKVs(t, e.FilteredAttributes), TimeUnixNano: e.TimeUnixNano, SpanId: cloneBytes(e.SpanID), TraceId: cloneBytes(e.TraceID)}
		switch e.ValueType {
		case otlpview.NumberTypeDouble:
			x.Value = &metricspb.Exemplar_AsDouble{AsDouble: e.AsDouble}
		case otlpview.NumberTypeInt:
			x.Value = &metricspb.Exemplar_AsInt{AsInt: e.AsInt}
		}
		out = append(out, x)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func optF(ok bool, v float64) *float64 {
	if !ok {
		return nil
	}
	return &v
}

func pbMetric(t *testing.T, m *otlpview.Metric) *metricspb.Metric {
	t.Helper()
	out := &metricspb.Metric{Name: m.Name, Description: m.Description, Unit: m.Unit, Metadata: pbKVs(t, m.Metadata)}
	var numbers []*metricspb.NumberDataPoint
	nit := m.NumberDataPoints()
	for nit.Next() {
		p := nit.Point()
		x := &metricspb.NumberDataPoint{Attributes: pbKVs(t, p.Attributes), StartTimeUnixNano: p.StartTimeUnixNano, TimeUnixNano: p.TimeUnixNano, Exemplars: pbExemplars(t, p.Exemplars), Flags: p.Flags}
		switch p.ValueType {
		case otlpview.NumberTypeDouble:
			x.Value = &metricspb.NumberDataPoint_AsDouble{AsDouble: p.AsDouble}
		case otlpview.NumberTypeInt:
			x.Value = &metricspb.NumberDataPoint_AsInt{AsInt: p.AsInt}
		}
		numbers = append(numbers, x)
	}
	if err := nit.Err(); err != nil {
		t.Fatal(err)
	}
	temporality := metricspb.AggregationTemporality(m.AggregationTemporality)
	switch m.Type {
	case otlpview.MetricTypeGauge:
		out.Data = &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: numbers}}
	case otlpview.MetricTypeSum:
		out.Data = &metricspb.Metric_Sum{Sum: &metricspb.Sum{DataPoints: numbers, AggregationTemporality: temporality, IsMonotonic: m.IsMonotonic}}
	case otlpview.MetricTypeHistogram:
		h := &metricspb.Histogram{AggregationTemporality: temporality}
		it := m.HistogramDataPoints()
		for it.Next() {
			p := it.Point()
			h.DataPoints = append(h.DataPoints, &metricspb.HistogramDataPoint{
				Attributes: pbKVs(t, p.Attributes), StartTimeUnixNano: p.StartTimeUnixNano, TimeUnixNano: p.TimeUnixNano,
				Count: p.Count, Sum: optF(p.HasSum, p.Sum),
				BucketCounts: append([]uint64(nil), p.BucketCounts...), ExplicitBounds: append([]float64(nil), p.ExplicitBounds...),
				Exemplars: pbExemplars(t, p.Exemplars), Flags: p.Flags, Min: optF(p.HasMin, p.Min), Max: optF(p.HasMax, p.Max),
			})
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		out.Data = &metricspb.Metric_Histogram{Histogram: h}
	case otlpview.MetricTypeExponentialHistogram:
		h := &metricspb.ExponentialHistogram{AggregationTemporality: temporality}
		it := m.ExponentialHistogramDataPoints()
		for it.Next() {
			p := it.Point()
			h.DataPoints = append(h.DataPoints, &metricspb.ExponentialHistogramDataPoint{
				Attributes: pbKVs(t, p.Attributes), StartTimeUnixNano: p.StartTimeUnixNano, TimeUnixNano: p.TimeUnixNano,
				Count: p.Count, Sum: optF(p.HasSum, p.Sum), Scale: p.Scale, ZeroCount: p.ZeroCount,
				Positive:  &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: p.Positive.Offset, BucketCounts: append([]uint64(nil), p.Positive.BucketCounts...)},
				Negative:  &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: p.Negative.Offset, BucketCounts: append([]uint64(nil), p.Negative.BucketCounts...)},
				Flags:     p.Flags,
				Exemplars: pbExemplars(t, p.Exemplars),
				Min:       optF(p.HasMin, p.Min), Max: optF(p.HasMax, p.Max), ZeroThreshold: p.ZeroThreshold,
			})
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		out.Data = &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: h}
	case otlpview.MetricTypeSummary:
		s := &metricspb.Summary{}
		it := m.SummaryDataPoints()
		for it.Next() {
			p := it.Point()
			x := &metricspb.SummaryDataPoint{Attributes: pbKVs(t, p.Attributes), StartTimeUnixNano: p.StartTimeUnixNano, TimeUnixNano: p.TimeUnixNano, Count: p.Count, Sum: p.Sum, Flags: p.Flags}
			qi := p.QuantileValues.Iter()
			for qi.Next() {
				q := qi.Quantile()
				x.QuantileValues = append(x.QuantileValues, &metricspb.SummaryDataPoint_ValueAtQuantile{Quantile: q.Quantile, Value: q.Value})
			}
			if err := qi.Err(); err != nil {
				t.Fatal(err)
			}
			s.DataPoints = append(s.DataPoints, x)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		out.Data = &metricspb.Metric_Summary{Summary: s}
	}
	return out
}

func pbLogRecord(t *testing.T, r *otlpview.LogRecord) *logspb.LogRecord {
	t.Helper()
	return &logspb.LogRecord{
		TimeUnixNano: r.TimeUnixNano, ObservedTimeUnixNano: r.ObservedTimeUnixNano,
		SeverityNumber: logspb.SeverityNumber(r.SeverityNumber), SeverityText: r.SeverityText,
		Body: pbAnyValue(t, &r.Body), Attributes: pbKVs(t, r.Attributes), DroppedAttributesCount: r.DroppedAttributesCount,
		Flags: r.Flags, TraceId: cloneBytes(r.TraceID), SpanId: cloneBytes(r.SpanID), EventName: r.EventName,
	}
}
