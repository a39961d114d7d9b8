package interop

// Golden tests of otlpdecode and otlpview against the official generated
// OTLP types: requests covering every field of the v1.11 data model are
// marshaled with google.golang.org/protobuf, decoded with otlpview's
// decoders, rebuilt from the views, and compared with proto.Equal;
// hand-built wire bytes check the proto3 reading rules (negative enums,
// packed and unpacked repeated scalars, last-wins duplicates, merged
// messages, unknown fields) against protobuf-go's own decoding of the same
// bytes.

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpview"
)

var updateGolden = flag.Bool("update", false, "rewrite the payload files of ../testdata/otlp (TestWriteGoldenPayloads)")

// goldenDir holds real binary payloads shared by the fuzz corpora and the
// benchmarks of the core packages.
const goldenDir = "../testdata/otlp"

func goldenPayloads() map[string]proto.Message {
	return map[string]proto.Message{
		"traces_500x10.pb":      gTraces500x10(),
		"traces_all_fields.pb":  gFullTraces(),
		"metrics_all_kinds.pb":  gFullMetrics(),
		"logs_all_fields.pb":    gFullLogs(),
		"traces_empty.pb":       &coltracepb.ExportTraceServiceRequest{},
		"metrics_no_points.pb":  &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{Metrics: []*metricspb.Metric{{Name: "x"}}}}}}},
		"logs_invalid_ids.pb":   &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{{LogRecords: []*logspb.LogRecord{{TraceId: []byte{1, 2, 3}}, {SpanId: gID(8, 1)}}}}}}},
		"traces_invalid_ids.pb": &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{TraceId: []byte{1, 2, 3}, SpanId: gID(8, 0)}, {TraceId: gID(16, 0), SpanId: gID(8, 0)}}}}}}},
	}
}

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatalf("cannot marshal: %v", err)
	}
	return b
}

// TestWriteGoldenPayloads writes ../testdata/otlp/*.pb with -update and
// otherwise checks that the committed files are what the builders produce.
func TestWriteGoldenPayloads(t *testing.T) {
	for name, m := range goldenPayloads() {
		want := marshal(t, m)
		path := filepath.Join(goldenDir, name)
		if *updateGolden {
			if err := os.MkdirAll(goldenDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestWriteGoldenPayloads -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale; run go test -run TestWriteGoldenPayloads -update", path)
		}
	}
}

// --- flattening: one Resource*/Scope* per item, nil singular messages made
// empty, because views cannot tell an absent message from an empty one ---

func normRes(r *resourcepb.Resource) *resourcepb.Resource {
	if r == nil {
		return &resourcepb.Resource{}
	}
	return r
}

func normScope(s *commonpb.InstrumentationScope) *commonpb.InstrumentationScope {
	if s == nil {
		return &commonpb.InstrumentationScope{}
	}
	return s
}

func normKVs(kvs []*commonpb.KeyValue) {
	for _, kv := range kvs {
		kv.KeyStrindex = 0 // profiling only: read as absent (common.proto)
		if kv.Value == nil {
			kv.Value = &commonpb.AnyValue{}
		}
		normAny(kv.Value)
	}
}

func normAny(v *commonpb.AnyValue) {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_ArrayValue:
		for _, e := range x.ArrayValue.GetValues() {
			normAny(e)
		}
	case *commonpb.AnyValue_KvlistValue:
		normKVs(x.KvlistValue.GetValues())
	case *commonpb.AnyValue_StringValueStrindex:
		// Not for non-profiling signals: read as absent (common.proto).
		v.Value = nil
	}
}

func flattenTraces(req *coltracepb.ExportTraceServiceRequest) *tracepb.TracesData {
	req = proto.Clone(req).(*coltracepb.ExportTraceServiceRequest)
	out := &tracepb.TracesData{}
	for _, rs := range req.ResourceSpans {
		res := normRes(rs.Resource)
		normKVs(res.Attributes)
		for _, ss := range rs.ScopeSpans {
			sc := normScope(ss.Scope)
			normKVs(sc.Attributes)
			for _, sp := range ss.Spans {
				if sp.Status == nil {
					sp.Status = &tracepb.Status{}
				}
				normKVs(sp.Attributes)
				for _, e := range sp.Events {
					normKVs(e.Attributes)
				}
				for _, l := range sp.Links {
					normKVs(l.Attributes)
				}
				out.ResourceSpans = append(out.ResourceSpans, &tracepb.ResourceSpans{
					Resource: res, SchemaUrl: rs.SchemaUrl,
					ScopeSpans: []*tracepb.ScopeSpans{{Scope: sc, SchemaUrl: ss.SchemaUrl, Spans: []*tracepb.Span{sp}}},
				})
			}
		}
	}
	return out
}

func decodeTraces(t *testing.T, src []byte) *tracepb.TracesData {
	t.Helper()
	out := &tracepb.TracesData{}
	var d otlpview.TracesDecoder
	err := d.Decode(src, func(res *otlpview.Resource, scope *otlpview.Scope, span *otlpview.Span) error {
		out.ResourceSpans = append(out.ResourceSpans, &tracepb.ResourceSpans{
			Resource: pbResource(t, res), SchemaUrl: res.SchemaURL,
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: pbScope(t, scope), SchemaUrl: scope.SchemaURL, Spans: []*tracepb.Span{pbSpan(t, span)}}},
		})
		return nil
	})
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return out
}

func flattenMetrics(req *colmetricspb.ExportMetricsServiceRequest) *metricspb.MetricsData {
	req = proto.Clone(req).(*colmetricspb.ExportMetricsServiceRequest)
	out := &metricspb.MetricsData{}
	for _, rm := range req.ResourceMetrics {
		res := normRes(rm.Resource)
		normKVs(res.Attributes)
		for _, sm := range rm.ScopeMetrics {
			sc := normScope(sm.Scope)
			normKVs(sc.Attributes)
			for _, m := range sm.Metrics {
				normKVs(m.Metadata)
				normMetric(m)
				out.ResourceMetrics = append(out.ResourceMetrics, &metricspb.ResourceMetrics{
					Resource: res, SchemaUrl: rm.SchemaUrl,
					ScopeMetrics: []*metricspb.ScopeMetrics{{Scope: sc, SchemaUrl: sm.SchemaUrl, Metrics: []*metricspb.Metric{m}}},
				})
			}
		}
	}
	return out
}

func normExemplars(es []*metricspb.Exemplar) {
	for _, e := range es {
		normKVs(e.FilteredAttributes)
	}
}

func normMetric(m *metricspb.Metric) {
	switch d := m.Data.(type) {
	case *metricspb.Metric_Gauge:
		for _, p := range d.Gauge.DataPoints {
			normKVs(p.Attributes)
			normExemplars(p.Exemplars)
		}
	case *metricspb.Metric_Sum:
		for _, p := range d.Sum.DataPoints {
			normKVs(p.Attributes)
			normExemplars(p.Exemplars)
		}
	case *metricspb.Metric_Histogram:
		for _, p := range d.Histogram.DataPoints {
			normKVs(p.Attributes)
			normExemplars(p.Exemplars)
		}
	case *metricspb.Metric_ExponentialHistogram:
		for _, p := range d.ExponentialHistogram.DataPoints {
			normKVs(p.Attributes)
			normExemplars(p.Exemplars)
			if p.Positive == nil {
				p.Positive = &metricspb.ExponentialHistogramDataPoint_Buckets{}
			}
			if p.Negative == nil {
				p.Negative = &metricspb.ExponentialHistogramDataPoint_Buckets{}
			}
		}
	case *metricspb.Metric_Summary:
		for _, p := range d.Summary.DataPoints {
			normKVs(p.Attributes)
		}
	}
}

func decodeMetrics(t *testing.T, src []byte) *metricspb.MetricsData {
	t.Helper()
	out := &metricspb.MetricsData{}
	var d otlpview.MetricsDecoder
	err := d.Decode(src, func(res *otlpview.Resource, scope *otlpview.Scope, m *otlpview.Metric) error {
		out.ResourceMetrics = append(out.ResourceMetrics, &metricspb.ResourceMetrics{
			Resource: pbResource(t, res), SchemaUrl: res.SchemaURL,
			ScopeMetrics: []*metricspb.ScopeMetrics{{Scope: pbScope(t, scope), SchemaUrl: scope.SchemaURL, Metrics: []*metricspb.Metric{pbMetric(t, m)}}},
		})
		return nil
	})
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return out
}

func flattenLogs(req *collogspb.ExportLogsServiceRequest) *logspb.LogsData {
	req = proto.Clone(req).(*collogspb.ExportLogsServiceRequest)
	out := &logspb.LogsData{}
	for _, rl := range req.ResourceLogs {
		res := normRes(rl.Resource)
		normKVs(res.Attributes)
		for _, sl := range rl.ScopeLogs {
			sc := normScope(sl.Scope)
			normKVs(sc.Attributes)
			for _, r := range sl.LogRecords {
				if r.Body == nil {
					r.Body = &commonpb.AnyValue{}
				}
				normAny(r.Body)
				normKVs(r.Attributes)
				out.ResourceLogs = append(out.ResourceLogs, &logspb.ResourceLogs{
					Resource: res, SchemaUrl: rl.SchemaUrl,
					ScopeLogs: []*logspb.ScopeLogs{{Scope: sc, SchemaUrl: sl.SchemaUrl, LogRecords: []*logspb.LogRecord{r}}},
				})
			}
		}
	}
	return out
}

func decodeLogs(t *testing.T, src []byte) *logspb.LogsData {
	t.Helper()
	out := &logspb.LogsData{}
	var d otlpview.LogsDecoder
	err := d.Decode(src, func(res *otlpview.Resource, scope *otlpview.Scope, rec *otlpview.LogRecord) error {
		out.ResourceLogs = append(out.ResourceLogs, &logspb.ResourceLogs{
			Resource: pbResource(t, res), SchemaUrl: res.SchemaURL,
			ScopeLogs: []*logspb.ScopeLogs{{Scope: pbScope(t, scope), SchemaUrl: scope.SchemaURL, LogRecords: []*logspb.LogRecord{pbLogRecord(t, rec)}}},
		})
		return nil
	})
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return out
}

// dropUnknown clears the unknown fields protobuf-go keeps, which views skip.
func dropUnknown(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Message() == nil:
		case fd.IsList():
			for i := 0; i < v.List().Len(); i++ {
				dropUnknown(v.List().Get(i).Message())
			}
		case fd.IsMap():
		default:
			dropUnknown(v.Message())
		}
		return true
	})
}

// assertSame fails with both messages in JSON when they differ.
func assertSame(t *testing.T, what string, want, got proto.Message) {
	t.Helper()
	dropUnknown(want.ProtoReflect())
	if proto.Equal(want, got) {
		return
	}
	t.Errorf("%s: decoded request differs from the one built\nwant: %s\n got: %s", what,
		protojson.Format(want), protojson.Format(got))
}

func countItems(t *testing.T, what string, res otlpdecode.Result, err error, items int) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if res.Items != items || res.Rejected != 0 || res.FirstRejection != "" {
		t.Errorf("%s = %+v, want %d items, none rejected", what, res, items)
	}
}

func TestGoldenTraces(t *testing.T) {
	for name, req := range map[string]*coltracepb.ExportTraceServiceRequest{"all_fields": gFullTraces(), "500x10": gTraces500x10()} {
		t.Run(name, func(t *testing.T) {
			src := marshal(t, req)
			want := flattenTraces(req)
			assertSame(t, "traces", want, decodeTraces(t, src))
			res, err := otlpdecode.CheckTraces(src, nil)
			countItems(t, "CheckTraces", res, err, len(want.ResourceSpans))
			res, err = otlpdecode.CheckTraces(src, &otlpdecode.Options{ValidateUTF8: true})
			countItems(t, "CheckTraces(ValidateUTF8)", res, err, len(want.ResourceSpans))
		})
	}
}

func TestGoldenMetrics(t *testing.T) {
	req := gFullMetrics()
	src := marshal(t, req)
	assertSame(t, "metrics", flattenMetrics(req), decodeMetrics(t, src))
	points := 0
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				points += len(m.GetGauge().GetDataPoints()) + len(m.GetSum().GetDataPoints()) + len(m.GetHistogram().GetDataPoints()) +
					len(m.GetExponentialHistogram().GetDataPoints()) + len(m.GetSummary().GetDataPoints())
			}
		}
	}
	res, err := otlpdecode.CheckMetrics(src, nil)
	countItems(t, "CheckMetrics", res, err, points)
	res, err = otlpdecode.CheckMetrics(src, &otlpdecode.Options{ValidateUTF8: true})
	countItems(t, "CheckMetrics(ValidateUTF8)", res, err, points)
}

func TestGoldenLogs(t *testing.T) {
	req := gFullLogs()
	src := marshal(t, req)
	want := flattenLogs(req)
	assertSame(t, "logs", want, decodeLogs(t, src))
	res, err := otlpdecode.CheckLogs(src, &otlpdecode.Options{ValidateUTF8: true})
	countItems(t, "CheckLogs", res, err, len(want.ResourceLogs))
}

// --- hand-built wire bytes, decoded by protobuf-go and by otlpview ---

func tag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	return protowire.AppendTag(b, num, typ)
}

func fVarint(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(tag(b, num, protowire.VarintType), v)
}

func fBytes(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(tag(b, num, protowire.BytesType), v)
}

func fFixed64(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendFixed64(tag(b, num, protowire.Fixed64Type), v)
}

func fFixed32(b []byte, num protowire.Number, v uint32) []byte {
	return protowire.AppendFixed32(tag(b, num, protowire.Fixed32Type), v)
}

// fGroup appends a group field holding one varint field, a wire form no
// OTLP producer emits but every protobuf decoder must skip.
func fGroup(b []byte, num protowire.Number) []byte {
	b = tag(b, num, protowire.StartGroupType)
	b = fVarint(b, 1, 5)
	return tag(b, num, protowire.EndGroupType)
}

// wrapTraces nests span payloads in ScopeSpans and ResourceSpans built
// from raw resource and scope payloads.
func wrapItems(resource, scope []byte, items ...[]byte) []byte {
	var ss []byte
	if scope != nil {
		ss = fBytes(ss, 1, scope)
	}
	for _, it := range items {
		ss = fBytes(ss, 2, it)
	}
	var rs []byte
	rs = fBytes(rs, 2, ss)
	if resource != nil {
		// The resource after the scopes: allowed on the wire.
		rs = fBytes(rs, 1, resource)
	}
	return fBytes(nil, 1, rs)
}

func validSpanFields(b []byte) []byte {
	b = fBytes(b, 1, gID(16, 1))
	return fBytes(b, 2, gID(8, 2))
}

func TestGoldenWireRulesTraces(t *testing.T) {
	neg := func(v int64) uint64 { return uint64(v) }
	kv := fBytes(fBytes(nil, 1, []byte("k")), 2, fVarint(nil, 3, neg(-7)))
	cases := map[string][]byte{
		"negative enums":      fBytes(fVarint(validSpanFields(nil), 6, neg(-1)), 15, fVarint(nil, 3, neg(-2))),
		"int32 above 32 bits": fVarint(validSpanFields(nil), 6, 1<<32|3),
		"duplicate scalars, last wins": fBytes(fBytes(fFixed64(fFixed64(validSpanFields(
			fBytes(fBytes(nil, 1, gID(16, 9)), 5, []byte("first"))), 7, 1), 7, 2), 5, []byte("second")), 10, []byte{}),
		"uint32 truncation":            fVarint(validSpanFields(nil), 10, 1<<33|5),
		"unknown fields and groups":    fGroup(fBytes(fVarint(validSpanFields(nil), 99, 1), 100, []byte("x")), 101),
		"wrong wire types are unknown": fVarint(fFixed32(fVarint(validSpanFields(nil), 5, 1), 6, 2), 7, 3),
		"status merged":                fBytes(fBytes(validSpanFields(nil), 15, fBytes(nil, 2, []byte("m"))), 15, fVarint(nil, 3, 2)),
		"attributes interleaved":       fBytes(fBytes(fBytes(fBytes(nil, 9, kv), 5, []byte("n")), 9, kv), 1, gID(16, 3)),
		"flags and dropped counts":     fVarint(fVarint(fVarint(fFixed32(validSpanFields(nil), 16, 0xffffffff), 12, 3), 14, 4), 10, 5),
		"bool any non-zero":            nil, // covered by metrics (is_monotonic)
	}
	for name, span := range cases {
		if span == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			res := fBytes(fVarint(fBytes(nil, 1, kv), 2, 9), 1, kv) // dropped count between attributes
			src := wrapItems(res, fBytes(nil, 1, []byte("scope")), span)
			// The resource twice: protobuf merges the occurrences.
			src = append(src, wrapItems(append(res, res...), nil, span)...)
			var want coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(src, &want); err != nil {
				t.Fatalf("protobuf-go rejects the test input: %v", err)
			}
			assertSame(t, name, flattenTraces(&want), decodeTraces(t, src))
		})
	}
}

func TestGoldenWireRulesMetrics(t *testing.T) {
	u := func(v int64) uint64 { return uint64(v) }
	sint := func(v int64) uint64 { return protowire.EncodeZigZag(v) }
	packedFixed := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = protowire.AppendFixed64(b, v)
		}
		return b
	}
	// Histogram point: bucket_counts half packed, half unpacked; bounds
	// unpacked; sum/min/max present; count twice.
	hp := fBytes(nil, 6, packedFixed(1, 2))
	hp = fFixed64(hp, 6, 3)
	hp = fFixed64(hp, 7, math.Float64bits(1.5))
	hp = fBytes(hp, 7, packedFixed(math.Float64bits(2.5)))
	hp = fFixed64(fFixed64(hp, 4, 1), 4, 6)
	hp = fFixed64(hp, 5, math.Float64bits(0))
	hp = fFixed64(hp, 11, math.Float64bits(-1))
	hp = fVarint(hp, 10, 1)
	// Exponential histogram point: counts unpacked and packed, buckets
	// message twice (merged), negative scale and offsets.
	var packedVarints []byte
	packedVarints = protowire.AppendVarint(packedVarints, 300)
	packedVarints = protowire.AppendVarint(packedVarints, 1<<50)
	eh := fVarint(nil, 6, sint(-4))
	eh = fBytes(eh, 8, fVarint(fVarint(nil, 1, sint(-3)), 2, 7))
	eh = fBytes(eh, 8, fBytes(nil, 2, packedVarints))
	eh = fBytes(eh, 9, fVarint(nil, 1, sint(-1)))
	eh = fBytes(eh, 9, fVarint(nil, 1, 1<<32|sint(-2)))
	eh = fFixed64(eh, 14, math.Float64bits(1e-6))
	// Number points: int then double (last wins), negative int.
	np := fFixed64(fFixed64(nil, 6, u(-5)), 4, math.Float64bits(2))
	np2 := fFixed64(nil, 6, u(-5))
	exemplar := fFixed64(fFixed64(fBytes(nil, 5, gID(16, 1)), 3, math.Float64bits(1)), 6, u(-3))
	np2 = fBytes(np2, 5, exemplar)
	gauge := fBytes(fBytes(nil, 1, np), 1, np2)
	sum := fVarint(fVarint(fBytes(nil, 1, np), 2, u(-1)), 3, 2) // negative temporality, bool 2
	hist := fVarint(fBytes(nil, 1, hp), 2, 1)
	ehist := fVarint(fBytes(nil, 1, eh), 2, 2)
	qv := fFixed64(fFixed64(nil, 1, math.Float64bits(0.5)), 2, math.Float64bits(3))
	summary := fBytes(nil, 1, fBytes(fFixed64(nil, 5, math.Float64bits(4)), 6, qv))
	metrics := map[string][]byte{
		"gauge":                    fBytes(fBytes(nil, 1, []byte("g")), 5, gauge),
		"gauge twice (merged)":     fBytes(fBytes(fBytes(nil, 1, []byte("g")), 5, gauge), 5, fBytes(nil, 1, np2)),
		"gauge then sum (last)":    fBytes(fBytes(nil, 5, gauge), 7, sum),
		"sum negative temporality": fBytes(nil, 7, sum),
		"histogram packed mixes":   fBytes(nil, 9, hist),
		"exponential histogram":    fBytes(nil, 10, ehist),
		"summary":                  fBytes(fBytes(nil, 12, fBytes(nil, 1, []byte("m"))), 11, summary),
	}
	for name, m := range metrics {
		t.Run(name, func(t *testing.T) {
			src := wrapItems(nil, nil, m)
			var want colmetricspb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(src, &want); err != nil {
				t.Fatalf("protobuf-go rejects the test input: %v", err)
			}
			assertSame(t, name, flattenMetrics(&want), decodeMetrics(t, src))
		})
	}
}

func TestGoldenWireRulesLogs(t *testing.T) {
	u := func(v int64) uint64 { return uint64(v) }
	recs := map[string][]byte{
		"negative severity":      fVarint(nil, 2, u(-3)),
		"body merged":            fBytes(fBytes(nil, 5, fBytes(nil, 1, []byte("a"))), 5, []byte{}),
		"body oneof last wins":   fBytes(fBytes(nil, 5, fBytes(nil, 1, []byte("a"))), 5, fVarint(nil, 3, u(-1))),
		"body bool 2 is true":    fBytes(nil, 5, fVarint(nil, 2, 2)),
		"body strindex is empty": fBytes(nil, 5, fVarint(fBytes(nil, 1, []byte("a")), 8, 4)),
		"key_strindex ignored":   fBytes(nil, 6, fVarint(fBytes(nil, 1, []byte("k")), 3, 1)),
		"duplicate ids":          fBytes(fBytes(fBytes(nil, 9, []byte{1}), 9, gID(16, 4)), 10, gID(8, 1)),
	}
	for name, r := range recs {
		t.Run(name, func(t *testing.T) {
			src := wrapItems(nil, nil, r)
			var want collogspb.ExportLogsServiceRequest
			if err := proto.Unmarshal(src, &want); err != nil {
				t.Fatalf("protobuf-go rejects the test input: %v", err)
			}
			assertSame(t, name, flattenLogs(&want), decodeLogs(t, src))
		})
	}
}

// TestGoldenAppendValid removes the invalid spans of a request built with
// the official types and checks with protobuf-go that exactly the valid
// spans remain, unchanged.
func TestGoldenAppendValid(t *testing.T) {
	req := gFullTraces()
	spans := req.ResourceSpans[0].ScopeSpans[1].Spans
	spans[0].TraceId = spans[0].TraceId[:3]
	spans[2].Links[1].SpanId = nil
	src := marshal(t, req)
	res, err := otlpdecode.CheckTraces(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected != 2 || res.FirstRejection != "resource_spans[0].scope_spans[1].spans[0]: trace_id is 3 bytes, want 16" {
		t.Fatalf("CheckTraces = %+v", res)
	}
	out, err := otlpdecode.AppendValidTraces(nil, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(out, &got); err != nil {
		t.Fatalf("protobuf-go cannot read AppendValidTraces' output: %v", err)
	}
	req.ResourceSpans[0].ScopeSpans[1].Spans = spans[1:2]
	if !proto.Equal(req, &got) {
		t.Errorf("AppendValidTraces kept the wrong spans:\nwant %s\n got %s", protojson.Format(req), protojson.Format(&got))
	}
}
