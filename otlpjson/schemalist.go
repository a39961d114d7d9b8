package otlpjson

// SchemaMessage describes one message type of the table that drives Marshal
// and Unmarshal (schematable.go).
type SchemaMessage struct {
	// FullName is the protobuf full name, like "opentelemetry.proto.trace.v1.Span".
	FullName string
	// Fields lists the fields that are transcoded, in .proto declaration
	// order (the key order Unmarshal expects first). Other fields are
	// dropped in both directions.
	Fields []SchemaField
}

// SchemaField describes one field of a SchemaMessage.
type SchemaField struct {
	Number   uint32
	Name     string // proto field name (snake_case), accepted on input
	JSONName string // lowerCamelCase, written on output and accepted on input
	// Kind is the protobuf type, spelled as protoreflect.Kind.String
	// spells it: "string", "bytes", "bool", "int32", "sint32", "int64",
	// "uint32", "uint64", "fixed32", "fixed64", "sfixed64", "double",
	// "enum" or "message".
	Kind string
	// HexID marks a bytes field holding a trace or span id, whose JSON
	// form is hex rather than base64 (an OTLP exception).
	HexID    bool
	Repeated bool
	// Optional marks a proto3 `optional` field and Oneof a member of the
	// message's only oneof; both have explicit presence.
	Optional bool
	Oneof    bool
	// Message is the FullName of the field's type when Kind is "message".
	Message string
	// EnumValues names the values of the field's enum type when Kind is
	// "enum": value i is EnumValues[i].
	EnumValues []string
}

var kindNames = [...]string{
	kString: "string", kBytes: "bytes", kHexID: "bytes", kProfileID: "bytes", kBool: "bool",
	kInt32: "int32", kSint32: "sint32", kInt64: "int64", kUint32: "uint32",
	kUint64: "uint64", kFixed32: "fixed32", kFixed64: "fixed64",
	kSfixed64: "sfixed64", kDouble: "double", kEnum: "enum", kMessage: "message",
}

// Schema lists every message type Marshal and Unmarshal know, so that tests
// can compare the hand-copied table with the OTLP protobuf descriptors. The
// Export*ServiceRequest messages are not listed: they are transcoded as
// TracesData, MetricsData and LogsData (see ExportTraceServiceRequest), and
// ExportProfilesServiceRequest likewise as ProfilesData. The result is a
// fresh copy on every call.
func Schema() []SchemaMessage {
	out := make([]SchemaMessage, 0, numMessages-1)
	for id := mNone + 1; id < numMessages; id++ {
		m := &schema[id]
		sm := SchemaMessage{FullName: m.fullName(), Fields: make([]SchemaField, 0, len(m.fields))}
		for j := range m.fields {
			fi := j
			if m.order != nil {
				fi = m.fieldIndex(m.order[j])
			}
			f := &m.fields[fi]
			sf := SchemaField{
				Number:   f.num,
				Name:     f.alias,
				JSONName: f.name,
				Kind:     kindNames[f.kind],
				HexID:    f.kind == kHexID,
				Repeated: f.repeated(),
				Optional: f.flags&fOptional != 0,
				Oneof:    f.oneof(),
			}
			if f.kind == kMessage {
				sf.Message = schema[f.msg].fullName()
			}
			if f.enum != nil {
				sf.EnumValues = append([]string(nil), f.enum.names...)
			}
			sm.Fields = append(sm.Fields, sf)
		}
		out = append(out, sm)
	}
	return out
}

// fullName returns the protobuf full name of m.
func (m *message) fullName() string {
	if m.pkg == "" {
		return m.name
	}
	return m.pkg + "." + m.name
}
