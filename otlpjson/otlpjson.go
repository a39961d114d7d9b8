// Package otlpjson transcodes OTLP messages between the protobuf binary
// encoding and the OTLP/JSON encoding used by OTLP/HTTP with
// Content-Type: application/json.
//
// The JSON form follows opentelemetry-proto docs/specification.md, section
// "JSON Protobuf Encoding": the proto3 JSON mapping
// (https://protobuf.dev/programming-guides/json/) except that trace and span
// ids are hex strings instead of base64, enum values are integers, and keys
// are lowerCamelCase (snake_case proto field names are accepted on input).
//
// Both directions stream: Marshal walks the protobuf bytes and appends JSON,
// Unmarshal tokenizes the JSON and appends protobuf, without building an
// intermediate object tree. A single schema table (schematable.go) describes
// every message reachable from TracesData, MetricsData, LogsData and
// ProfilesData in OTLP v1.11, the Export*ServiceResponse messages and
// google.rpc.Status.
package otlpjson

import (
	"strconv"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// MessageType selects the top-level protobuf message being transcoded.
type MessageType int

const (
	// TracesData is opentelemetry.proto.trace.v1.TracesData.
	TracesData MessageType = iota + 1
	// MetricsData is opentelemetry.proto.metrics.v1.MetricsData.
	MetricsData
	// LogsData is opentelemetry.proto.logs.v1.LogsData.
	LogsData
	// ExportTraceServiceResponse is opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse.
	ExportTraceServiceResponse
	// ExportMetricsServiceResponse is opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse.
	ExportMetricsServiceResponse
	// ExportLogsServiceResponse is opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse.
	ExportLogsServiceResponse
	// Status is google.rpc.Status, the OTLP/HTTP error response body
	// (specification.md "Failures"). Of its google.protobuf.Any details,
	// google.rpc.RetryInfo and google.rpc.BadRequest are transcoded
	// (wellknown.go); details of other types are dropped.
	Status
	// ProfilesData is opentelemetry.proto.profiles.v1development.ProfilesData
	// (the profiles signal is Alpha in OTLP v1.11).
	ProfilesData
	// ExportProfilesServiceResponse is
	// opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceResponse.
	ExportProfilesServiceResponse
)

// The Export*ServiceRequest messages have the same fields, and therefore the
// same wire and JSON forms, as the corresponding *Data messages.
const (
	ExportTraceServiceRequest   = TracesData
	ExportMetricsServiceRequest = MetricsData
	ExportLogsServiceRequest    = LogsData
	// ExportProfilesServiceRequest also carries the shared dictionary
	// (field 2), as ProfilesData does.
	ExportProfilesServiceRequest = ProfilesData
)

// signalTypes maps each OTLP signal to its data message (which is also the
// JSON form of its export request) and its export response: the one place
// a signal meets its JSON messages.
var signalTypes = [otlp.MaxSignal + 1]struct{ data, response MessageType }{
	otlp.Traces:   {TracesData, ExportTraceServiceResponse},
	otlp.Metrics:  {MetricsData, ExportMetricsServiceResponse},
	otlp.Logs:     {LogsData, ExportLogsServiceResponse},
	otlp.Profiles: {ProfilesData, ExportProfilesServiceResponse},
}

// ForSignal returns the message types of sig's data (also its
// Export*ServiceRequest, which has the same fields) and of its
// Export*ServiceResponse; ok is false for a value that is not a signal.
func ForSignal(sig otlp.Signal) (data, response MessageType, ok bool) {
	if sig == 0 || sig > otlp.MaxSignal {
		return 0, 0, false
	}
	t := signalTypes[sig]
	return t.data, t.response, t.data != 0
}

// MaxDepth is the maximum message nesting depth accepted by Marshal and
// Unmarshal, counting the top-level message as 1. AnyValue can nest without
// bound (ArrayValue and KeyValueList), so untrusted input must be limited to
// keep recursion bounded. Each AnyValue level costs at most three messages
// (AnyValue, KeyValueList, KeyValue) below an envelope of at most ten
// (MetricsData down to an exemplar attribute), so 512 admits more than the
// 128 AnyValue levels otlpdecode.DefaultMaxAnyValueDepth accepts (3×128+10 =
// 394): everything the receiver stores can be exported as JSON, and JSON
// requests may nest as deep as protobuf ones.
const MaxDepth = 512

func (t MessageType) msg() *message {
	switch t {
	case TracesData:
		return &schema[mTracesData]
	case MetricsData:
		return &schema[mMetricsData]
	case LogsData:
		return &schema[mLogsData]
	case ExportTraceServiceResponse:
		return &schema[mExportTraceServiceResponse]
	case ExportMetricsServiceResponse:
		return &schema[mExportMetricsServiceResponse]
	case ExportLogsServiceResponse:
		return &schema[mExportLogsServiceResponse]
	case Status:
		return &schema[mRPCStatus]
	case ProfilesData:
		return &schema[mProfilesData]
	case ExportProfilesServiceResponse:
		return &schema[mExportProfilesServiceResponse]
	}
	return nil
}

// String returns the protobuf message name of t.
func (t MessageType) String() string {
	if m := t.msg(); m != nil {
		return m.name
	}
	return "MessageType(" + strconv.Itoa(int(t)) + ")"
}

// Error is returned by Marshal and Unmarshal for malformed input. It reads
// like `cannot decode resourceSpans[0].scopeSpans[1].spans[3].traceId: invalid hex at offset 120`,
// suitable for an HTTP 400 body.
type Error struct {
	// Path locates the offending value with JSON field names and array
	// indexes; it is the top-level message name when the error is not inside
	// a field.
	Path string
	// Offset is the byte offset in the input where the offending value starts.
	Offset int
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *Error) Error() string {
	return "cannot decode " + e.Path + ": " + e.Reason + " at offset " + strconv.Itoa(e.Offset)
}

// pathElem is one step of the location reported in an Error.
type pathElem struct {
	name  string
	index int // array index, or -1 when the field is not repeated
}

// maxPathElems caps the path an Error reports: the outermost elements,
// which locate the item (the deepest envelope, resourceMetrics down to an
// exemplar's filtered attribute value, has 9), then "...". Without it an
// error at the nesting limit would name every one of MaxDepth levels.
const maxPathElems = 16

// formatPath renders p like resourceSpans[0].scopeSpans[1].spans[3].traceId.
func formatPath(root string, p []pathElem) string {
	if len(p) == 0 {
		return root
	}
	cut := len(p) > maxPathElems
	if cut {
		p = p[:maxPathElems]
	}
	var b []byte
	for i, e := range p {
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, e.name...)
		if e.index >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(e.index), 10)
			b = append(b, ']')
		}
	}
	if cut {
		b = append(b, "..."...)
	}
	return string(b)
}
