package interop

// TestOTLPPBFieldNumbers and TestOTLPPBRPCFieldNumbers hold otlppb's
// named field numbers to the descriptors of the official generated OTLP,
// google.rpc and google.protobuf types.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

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
	var msgs []otlppbMessage
	for _, fd := range files {
		for i := range fd.Messages().Len() {
			msgs = append(msgs, otlppbMessage{desc: fd.Messages().Get(i)})
		}
	}
	want, where := otlppbFields(t, msgs)
	got, strs := otlppbConstants(t, "../otlppb/schema.go")
	if len(strs) > 0 {
		t.Fatalf("../otlppb/schema.go: string constants %v: it names field numbers only", strs)
	}
	checkOTLPPBConstants(t, got, want, where, "the OTLP v1.11 messages")
	if len(got) < 150 {
		t.Fatalf("read only %d constants from ../otlppb/schema.go", len(got))
	}
}

// TestOTLPPBRPCFieldNumbers holds the constants of ../otlppb/rpc.go to the
// descriptors of google.rpc.Status, google.protobuf.Any and Duration,
// google.rpc.RetryInfo and BadRequest (with its FieldViolation), both
// ways as TestOTLPPBFieldNumbers does, and its type names and URLs to
// those protobuf-go gives the detail types.
func TestOTLPPBRPCFieldNumbers(t *testing.T) {
	msgs := []otlppbMessage{
		// RPCStatus: OTLP's trace Status already has StatusCode and
		// StatusMessage.
		{"RPCStatus", (&statuspb.Status{}).ProtoReflect().Descriptor()},
		{"", (&anypb.Any{}).ProtoReflect().Descriptor()},
		{"", (&durationpb.Duration{}).ProtoReflect().Descriptor()},
		{"", (&errdetails.RetryInfo{}).ProtoReflect().Descriptor()},
		{"", (&errdetails.BadRequest{}).ProtoReflect().Descriptor()},
	}
	want, where := otlppbFields(t, msgs)
	got, strs := otlppbConstants(t, "../otlppb/rpc.go")
	checkOTLPPBConstants(t, got, want, where, "google.rpc.Status and its details")
	if len(got) != 13 {
		t.Fatalf("read %d constants from ../otlppb/rpc.go, want the 13 fields of its six messages", len(got))
	}

	retryInfo, err := anypb.New(&errdetails.RetryInfo{})
	if err != nil {
		t.Fatal(err)
	}
	badRequest, err := anypb.New(&errdetails.BadRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][2]string{ // constant -> its value, what protobuf-go says
		"RetryInfoName":     {otlppb.RetryInfoName, string(retryInfo.MessageName())},
		"BadRequestName":    {otlppb.BadRequestName, string(badRequest.MessageName())},
		"RetryInfoTypeURL":  {otlppb.RetryInfoTypeURL, retryInfo.GetTypeUrl()},
		"BadRequestTypeURL": {otlppb.BadRequestTypeURL, badRequest.GetTypeUrl()},
		"TypeURLPrefix":     {otlppb.TypeURLPrefix, strings.TrimSuffix(retryInfo.GetTypeUrl(), string(retryInfo.MessageName()))},
	}
	for name, v := range names {
		if v[0] != v[1] {
			t.Errorf("otlppb.%s = %q, want %q", name, v[0], v[1])
		}
	}
	for _, name := range strs {
		if _, ok := names[name]; !ok {
			t.Errorf("otlppb.%s: a string constant of ../otlppb/rpc.go this test does not check", name)
		}
	}
}

// otlppbMessage is a message whose fields otlppb names: as, when set, is
// the name otlppb gives it in place of its own (its nested messages are
// prefixed with it).
type otlppbMessage struct {
	as   string
	desc protoreflect.MessageDescriptor
}

// otlppbFields maps otlppb's name of every field of msgs and of their
// nested messages to the field's number and full name.
func otlppbFields(t *testing.T, msgs []otlppbMessage) (want map[string]int, where map[string]string) {
	want = map[string]int{}     // otlppb name -> field number
	where = map[string]string{} // otlppb name -> full field name
	var walk func(name string, m protoreflect.MessageDescriptor)
	walk = func(name string, m protoreflect.MessageDescriptor) {
		for j := range m.Fields().Len() {
			f := m.Fields().Get(j)
			key := otlppbName(name, f)
			if other, dup := where[key]; dup {
				t.Fatalf("%s and %s both map to the name %s", other, f.FullName(), key)
			}
			want[key], where[key] = int(f.Number()), string(f.FullName())
		}
		for i := range m.Messages().Len() {
			walk(name+string(m.Messages().Get(i).Name()), m.Messages().Get(i))
		}
	}
	for _, m := range msgs {
		name := m.as
		if name == "" {
			name = string(m.desc.Name())
		}
		walk(name, m.desc)
	}
	return want, where
}

// otlppbConstants reads the integer constants of the Go file at path, one
// per line with a number literal, and lists its string constants.
func otlppbConstants(t *testing.T, path string) (ints map[string]int, strs []string) {
	ints = map[string]int{}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
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
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				strs = append(strs, vs.Names[0].Name)
				continue
			}
			if bin, ok := vs.Values[0].(*ast.BinaryExpr); ok && bin.Op == token.ADD {
				strs = append(strs, vs.Names[0].Name) // a concatenation of string constants
				continue
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.INT {
				t.Fatalf("%s: %s is not a number literal", fset.Position(vs.Pos()), vs.Names[0].Name)
			}
			n, err := strconv.Atoi(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			ints[vs.Names[0].Name] = n
		}
	}
	return ints, strs
}

// checkOTLPPBConstants fails for every constant of got that names no field
// of want or has another number, and for every field of want without its
// constant.
func checkOTLPPBConstants(t *testing.T, got, want map[string]int, where map[string]string, what string) {
	t.Helper()
	for name, n := range got {
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("otlppb.%s = %d names no field of %s", name, n, what)
		case n != w:
			t.Errorf("otlppb.%s = %d, but %s is field %d", name, n, where[name], w)
		}
	}
	for name, w := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("otlppb has no %s (%s = %d)", name, where[name], w)
		}
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
