package otlpjson

import (
	"slices"
	"testing"
)

func TestSchemaList(t *testing.T) {
	list := Schema()
	if len(list) != int(numMessages)-1 {
		t.Fatalf("Schema lists %d messages, the table has %d", len(list), numMessages-1)
	}
	byName := make(map[string]*SchemaMessage)
	for i := range list {
		m := &list[i]
		if byName[m.FullName] != nil {
			t.Errorf("%s listed twice", m.FullName)
		}
		byName[m.FullName] = m
	}
	for _, m := range list {
		for _, f := range m.Fields {
			if (f.Kind == "message") != (byName[f.Message] != nil) {
				t.Errorf("%s.%s: kind %s, message type %q", m.FullName, f.Name, f.Kind, f.Message)
			}
		}
	}

	span := byName["opentelemetry.proto.trace.v1.Span"]
	if span == nil {
		t.Fatal("Span not listed")
	}
	var nums []uint32
	for _, f := range span.Fields {
		nums = append(nums, f.Number)
	}
	if want := []uint32{1, 2, 3, 4, 16, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}; !slices.Equal(nums, want) {
		t.Errorf("Span field order %v, want declaration order %v", nums, want)
	}
	if f := span.Fields[0]; f.Name != "trace_id" || f.JSONName != "traceId" || f.Kind != "bytes" || !f.HexID {
		t.Errorf("Span field 1 = %+v", f)
	}
	if f := span.Fields[6]; f.Kind != "enum" || f.EnumValues[2] != "SPAN_KIND_SERVER" {
		t.Errorf("Span field 6 = %+v", f)
	}
	if f := span.Fields[9]; !f.Repeated || f.Message != "opentelemetry.proto.common.v1.KeyValue" {
		t.Errorf("Span field 9 = %+v", f)
	}
	if m := byName["google.rpc.Status"]; m == nil || m.Fields[2].Message != "google.protobuf.Any" {
		t.Errorf("google.rpc.Status = %+v", m)
	}

	// The result is a copy: changing it does not change the table.
	span.Fields[6].EnumValues[2] = "X"
	if enumSpanKind.names[2] != "SPAN_KIND_SERVER" {
		t.Error("Schema shares enum names with the table")
	}
}
