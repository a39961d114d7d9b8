package interop

// TestOTLPPBFieldNumbers holds otlppb's named field numbers to the
// descriptors of the official generated OTLP types.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colprofilespb "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	profilespb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// otlppbName is otlppb's name for field f of the message whose name,
// nested messages prefixed by their parents, is msg: Span.Event's
// time_unix_nano is SpanEventTimeUnixNano, Span's trace_id SpanTraceID
// (the initialisms ID and URL in Go's style).
func otlppbName(msg string, f protoreflect.FieldDescriptor) string {
	var b strings.Builder
	b.WriteString(msg)
	for _, word := range strings.Split(string(f.Name()), "_") {
		switch word {
		case "id":
			b.WriteString("ID")
		case "url":
			b.WriteString("URL")
		default:
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}

// TestOTLPPBFieldNumbers reads the constants of ../otlppb/schema.go and
// checks them against every field of every message of the OTLP files the
// receiver walks, both ways: each constant names a field of the official
// descriptors with that field's number, and each field has its constant.
// A wrong number, a misspelt name or a field left out fails.
func TestOTLPPBFieldNumbers(t *testing.T) {
	files := []protoreflect.FileDescriptor{
		commonpb.File_opentelemetry_proto_common_v1_common_proto,
		resourcepb.File_opentelemetry_proto_resource_v1_resource_proto,
		tracepb.File_opentelemetry_proto_trace_v1_trace_proto,
		metricspb.File_opentelemetry_proto_metrics_v1_metrics_proto,
		logspb.File_opentelemetry_proto_logs_v1_logs_proto,
		profilespb.File_opentelemetry_proto_profiles_v1development_profiles_proto,
		coltracepb.File_opentelemetry_proto_collector_trace_v1_trace_service_proto,
		colmetricspb.File_opentelemetry_proto_collector_metrics_v1_metrics_service_proto,
		collogspb.File_opentelemetry_proto_collector_logs_v1_logs_service_proto,
		colprofilespb.File_opentelemetry_proto_collector_profiles_v1development_profiles_service_proto,
	}
	want := map[string]int{}     // otlppb name -> field number
	where := map[string]string{} // otlppb name -> full field name
	var walk func(prefix string, msgs protoreflect.MessageDescriptors)
	walk = func(prefix string, msgs protoreflect.MessageDescriptors) {
		for i := range msgs.Len() {
			m := msgs.Get(i)
			name := prefix + string(m.Name())
			for j := range m.Fields().Len() {
				f := m.Fields().Get(j)
				key := otlppbName(name, f)
				if other, dup := where[key]; dup {
					t.Fatalf("%s and %s both map to the name %s", other, f.FullName(), key)
				}
				want[key], where[key] = int(f.Number()), string(f.FullName())
			}
			walk(name, m.Messages())
		}
	}
	for _, fd := range files {
		walk("", fd.Messages())
	}

	got := map[string]int{}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "../otlppb/schema.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if len(vs.Names) != 1 || len(vs.Values) != 1 {
				t.Fatalf("%s: one constant per line, with its number", fset.Position(vs.Pos()))
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.INT {
				t.Fatalf("%s: %s is not a number literal", fset.Position(vs.Pos()), vs.Names[0].Name)
			}
			n, err := strconv.Atoi(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			got[vs.Names[0].Name] = n
		}
	}

	for name, n := range got {
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("otlppb.%s = %d names no field of the OTLP v1.11 messages", name, n)
		case n != w:
			t.Errorf("otlppb.%s = %d, but %s is field %d", name, n, where[name], w)
		}
	}
	for name, w := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("otlppb has no %s (%s = %d)", name, where[name], w)
		}
	}
	if len(got) < 150 {
		t.Fatalf("read only %d constants from ../otlppb/schema.go", len(got))
	}
}

// TestOTLPPBPointRoles holds otlppb.PointRoleOf, the table the walks of
// data points switch on, to the descriptors of the four data point
// messages: every declared field has the role its name says, and every
// other number has none.
func TestOTLPPBPointRoles(t *testing.T) {
	roles := map[string]otlppb.PointRole{
		"attributes": otlppb.PointAttributes, "start_time_unix_nano": otlppb.PointStartTimeUnixNano,
		"time_unix_nano": otlppb.PointTimeUnixNano, "count": otlppb.PointCount, "sum": otlppb.PointSum,
		"as_double": otlppb.PointAsDouble, "as_int": otlppb.PointAsInt, "exemplars": otlppb.PointExemplars,
		"flags": otlppb.PointFlags, "min": otlppb.PointMin, "max": otlppb.PointMax,
		"bucket_counts": otlppb.PointBucketCounts, "explicit_bounds": otlppb.PointExplicitBounds,
		"scale": otlppb.PointScale, "zero_count": otlppb.PointZeroCount, "positive": otlppb.PointPositive,
		"negative": otlppb.PointNegative, "zero_threshold": otlppb.PointZeroThreshold,
		"quantile_values": otlppb.PointQuantileValues,
	}
	for _, k := range []struct {
		kind otlppb.PointKind
		msg  protoreflect.MessageDescriptor
	}{
		{otlppb.MetricGauge, (&metricspb.NumberDataPoint{}).ProtoReflect().Descriptor()},
		{otlppb.MetricSum, (&metricspb.NumberDataPoint{}).ProtoReflect().Descriptor()},
		{otlppb.MetricHistogram, (&metricspb.HistogramDataPoint{}).ProtoReflect().Descriptor()},
		{otlppb.MetricExponentialHistogram, (&metricspb.ExponentialHistogramDataPoint{}).ProtoReflect().Descriptor()},
		{otlppb.MetricSummary, (&metricspb.SummaryDataPoint{}).ProtoReflect().Descriptor()},
	} {
		for num := range uint32(64) {
			f := k.msg.Fields().ByNumber(protoreflect.FieldNumber(num))
			want := otlppb.PointUnknown
			if f != nil {
				var ok bool
				if want, ok = roles[string(f.Name())]; !ok {
					t.Fatalf("%s has no role in the test's table", f.FullName())
				}
			}
			if got := otlppb.PointRoleOf(k.kind, num); got != want {
				t.Errorf("PointRoleOf(%d, %d) = %d, want %d (%s)", k.kind, num, got, want, k.msg.FullName())
			}
		}
	}
}
