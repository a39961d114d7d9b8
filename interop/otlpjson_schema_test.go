package interop

// otlpjson's schema table is copied by hand from the OTLP .proto files; a
// field it lacks is dropped silently in both directions. This test walks the
// descriptors of the generated OTLP types, from every method of the collector
// services, and compares each message with otlpjson.Schema().

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlpjson"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colprofilespb "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	profilespb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func TestOTLPJSONSchema(t *testing.T) {
	table := make(map[protoreflect.FullName]*otlpjson.SchemaMessage)
	for _, m := range otlpjson.Schema() {
		table[protoreflect.FullName(m.FullName)] = &m
	}
	c := schemaCheck{
		t:       t,
		table:   table,
		alias:   make(map[protoreflect.FullName]protoreflect.FullName),
		matched: make(map[protoreflect.FullName]bool),
		seen:    make(map[protoreflect.FullName]bool),
	}

	// The Export*ServiceRequest messages have no entry of their own: otlpjson
	// transcodes them as the *Data message with the same fields.
	for _, a := range []struct {
		typ       otlpjson.MessageType
		req, data protoreflect.MessageDescriptor
	}{
		{otlpjson.ExportTraceServiceRequest, (&coltracepb.ExportTraceServiceRequest{}).ProtoReflect().Descriptor(), (&tracepb.TracesData{}).ProtoReflect().Descriptor()},
		{otlpjson.ExportMetricsServiceRequest, (&colmetricspb.ExportMetricsServiceRequest{}).ProtoReflect().Descriptor(), (&metricspb.MetricsData{}).ProtoReflect().Descriptor()},
		{otlpjson.ExportLogsServiceRequest, (&collogspb.ExportLogsServiceRequest{}).ProtoReflect().Descriptor(), (&logspb.LogsData{}).ProtoReflect().Descriptor()},
		// The profiles signal (Alpha, v1development): generated from
		// opentelemetry-proto v1.11.0 in the modules
		// go.opentelemetry.io/proto/otlp/{,collector/}profiles/v1development v0.4.0.
		{otlpjson.ExportProfilesServiceRequest, (&colprofilespb.ExportProfilesServiceRequest{}).ProtoReflect().Descriptor(), (&profilespb.ProfilesData{}).ProtoReflect().Descriptor()},
	} {
		if got := a.typ.String(); got != string(a.data.Name()) {
			t.Fatalf("otlpjson transcodes %s as %s, not %s", a.req.FullName(), got, a.data.Name())
		}
		c.alias[a.req.FullName()] = a.data.FullName()
		// The *Data messages are not reachable from the services; they are
		// in the table and transcoded on their own (otlp-lite export).
		c.walk(a.data)
	}

	for _, fd := range []protoreflect.FileDescriptor{
		coltracepb.File_opentelemetry_proto_collector_trace_v1_trace_service_proto,
		colmetricspb.File_opentelemetry_proto_collector_metrics_v1_metrics_service_proto,
		collogspb.File_opentelemetry_proto_collector_logs_v1_logs_service_proto,
		colprofilespb.File_opentelemetry_proto_collector_profiles_v1development_profiles_service_proto,
	} {
		services := fd.Services()
		if services.Len() == 0 {
			t.Errorf("%s declares no service", fd.Path())
		}
		for i := range services.Len() {
			methods := services.Get(i).Methods()
			for j := range methods.Len() {
				c.walk(methods.Get(j).Input())
				c.walk(methods.Get(j).Output())
			}
		}
	}
	// The OTLP/HTTP error body (otlpjson.Status) and its details.
	c.walk(statuspb.File_google_rpc_status_proto.Messages().ByName("Status"))

	for _, name := range slices.Sorted(maps.Keys(table)) {
		if !c.matched[name] {
			t.Errorf("otlpjson table has message %s, which no OTLP descriptor reaches", name)
		}
	}
}

// schemaCheck compares message descriptors with otlpjson's table.
type schemaCheck struct {
	t       *testing.T
	table   map[protoreflect.FullName]*otlpjson.SchemaMessage
	alias   map[protoreflect.FullName]protoreflect.FullName // descriptor name -> table name
	matched map[protoreflect.FullName]bool                  // table names compared
	seen    map[protoreflect.FullName]bool                  // descriptors walked
}

// tableName returns the name of md's entry in the table.
func (c *schemaCheck) tableName(md protoreflect.MessageDescriptor) protoreflect.FullName {
	if n, ok := c.alias[md.FullName()]; ok {
		return n
	}
	return md.FullName()
}

// walk compares md and every message reachable from it with the table.
func (c *schemaCheck) walk(md protoreflect.MessageDescriptor) {
	if c.seen[md.FullName()] {
		return
	}
	c.seen[md.FullName()] = true
	c.compare(md)
	fields := md.Fields()
	for i := range fields.Len() {
		if sub := fields.Get(i).Message(); sub != nil {
			c.walk(sub)
		}
	}
}

// compare reports every difference between md and its table entry.
func (c *schemaCheck) compare(md protoreflect.MessageDescriptor) {
	t := c.t
	name := c.tableName(md)
	tm := c.table[name]
	if tm == nil {
		t.Errorf("otlpjson table lacks message %s (%d fields): all of it is dropped", md.FullName(), md.Fields().Len())
		return
	}
	c.matched[name] = true

	oneofs := 0
	for i := range md.Oneofs().Len() {
		if !md.Oneofs().Get(i).IsSynthetic() {
			oneofs++
		}
	}
	if oneofs > 1 {
		t.Errorf("%s has %d oneofs; otlpjson supports one per message", md.FullName(), oneofs)
	}

	byName := make(map[string]*otlpjson.SchemaField)
	var tableOrder []uint32
	for i := range tm.Fields {
		byName[tm.Fields[i].Name] = &tm.Fields[i]
		tableOrder = append(tableOrder, tm.Fields[i].Number)
	}
	var descOrder []uint32
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		descOrder = append(descOrder, uint32(fd.Number()))
		want := fieldFromDescriptor(fd, c.tableName)
		tf := byName[string(fd.Name())]
		if tf == nil {
			t.Errorf("otlpjson table lacks %s.%s (%s)", md.FullName(), fd.Name(), describeField(want))
			continue
		}
		delete(byName, string(fd.Name()))
		if d := diffField(want, *tf); d != "" {
			t.Errorf("otlpjson table has %s.%s %s; descriptor: %s", md.FullName(), fd.Name(), d, describeField(want))
		}
	}
	for _, tf := range tm.Fields {
		if byName[tf.Name] != nil {
			t.Errorf("otlpjson table has %s.%s (%s), which the descriptor lacks", md.FullName(), tf.Name, describeField(tf))
		}
	}
	if len(tableOrder) == len(descOrder) && !slices.Equal(tableOrder, descOrder) {
		t.Errorf("otlpjson table declares %s fields in the order %v; descriptor: %v", md.FullName(), tableOrder, descOrder)
	}
}

// fieldFromDescriptor returns what the table should say about fd.
func fieldFromDescriptor(fd protoreflect.FieldDescriptor, tableName func(protoreflect.MessageDescriptor) protoreflect.FullName) otlpjson.SchemaField {
	f := otlpjson.SchemaField{
		Number:   uint32(fd.Number()),
		Name:     string(fd.Name()),
		JSONName: fd.JSONName(),
		Kind:     fd.Kind().String(),
		Repeated: fd.Cardinality() == protoreflect.Repeated,
		Optional: fd.HasOptionalKeyword(),
		Oneof:    fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic(),
	}
	// OTLP/JSON writes trace and span ids as hex (specification.md, "JSON
	// Protobuf Encoding"): trace_id, span_id, parent_span_id.
	f.HexID = fd.Kind() == protoreflect.BytesKind &&
		(strings.HasSuffix(f.Name, "trace_id") || strings.HasSuffix(f.Name, "span_id"))
	if m := fd.Message(); m != nil {
		f.Message = string(tableName(m))
	}
	if e := fd.Enum(); e != nil {
		values := e.Values()
		for i := range values.Len() {
			v := values.Get(i)
			if int(v.Number()) != len(f.EnumValues) {
				// otlpjson's enums are dense; show the gap in the message.
				f.EnumValues = append(f.EnumValues, fmt.Sprintf("%s=%d", v.Name(), v.Number()))
				continue
			}
			f.EnumValues = append(f.EnumValues, string(v.Name()))
		}
	}
	return f
}

// diffField describes how the table's field got differs from want, or returns "".
func diffField(want, got otlpjson.SchemaField) string {
	var d []string
	if got.Number != want.Number {
		d = append(d, fmt.Sprintf("number %d", got.Number))
	}
	if got.JSONName != want.JSONName {
		d = append(d, fmt.Sprintf("JSON name %q", got.JSONName))
	}
	if got.Kind != want.Kind || got.HexID != want.HexID || got.Message != want.Message {
		d = append(d, "kind "+kindOf(got))
	}
	if got.Repeated != want.Repeated || got.Optional != want.Optional || got.Oneof != want.Oneof {
		d = append(d, "cardinality "+cardinalityOf(got))
	}
	if !slices.Equal(got.EnumValues, want.EnumValues) {
		d = append(d, fmt.Sprintf("enum values %v (descriptor: %v)", got.EnumValues, want.EnumValues))
	}
	return strings.Join(d, ", ")
}

func describeField(f otlpjson.SchemaField) string {
	return fmt.Sprintf("number %d, kind %s, %s", f.Number, kindOf(f), cardinalityOf(f))
}

func kindOf(f otlpjson.SchemaField) string {
	switch {
	case f.Message != "":
		return f.Kind + " " + f.Message
	case f.HexID:
		return f.Kind + " (hex id)"
	}
	return f.Kind
}

func cardinalityOf(f otlpjson.SchemaField) string {
	switch {
	case f.Repeated:
		return "repeated"
	case f.Optional:
		return "optional"
	case f.Oneof:
		return "oneof"
	}
	return "singular"
}
