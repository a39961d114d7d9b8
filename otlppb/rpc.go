package otlppb

// The field numbers of the messages an OTLP error carries
// (OTLP v1.11, "Failures", "Bad Data", "OTLP/HTTP Throttling"): the
// google.rpc.Status of a refusal, its google.protobuf.Any details, and the
// two detail types the receiver sends and reads, google.rpc.RetryInfo (with
// its google.protobuf.Duration) and google.rpc.BadRequest. They are named
// once here, as schema.go names OTLP's, for grpcwire (the gRPC status and
// its grpc-status-details-bin) and otlpjson (their JSON form), with
// schema.go's conventions: <Message><Field>, a nested message prefixed by
// its parent; google.rpc.Status is RPCStatus. Each block quotes the field's declaration.
//
// interop's TestOTLPPBFieldNumbers holds every constant of this file to
// the descriptors of the generated types (google.golang.org/genproto's
// status and errdetails, google.golang.org/protobuf's anypb and
// durationpb), and every field of these six messages to a constant.

// google/rpc/status.proto (package google.rpc).

// google.rpc.Status, prefixed RPC: OTLP's
// opentelemetry.proto.trace.v1.Status has a code and a message too
// (StatusCode, StatusMessage in schema.go).
const (
	RPCStatusCode    = 1 // int32 code
	RPCStatusMessage = 2 // string message
	RPCStatusDetails = 3 // repeated google.protobuf.Any details
)

// google/protobuf/any.proto (package google.protobuf).

// google.protobuf.Any. Not OTLP's opentelemetry.proto.common.v1.AnyValue,
// whose fields are the AnyValue* constants of schema.go.
const (
	AnyTypeURL = 1 // string type_url
	AnyValue   = 2 // bytes value
)

// google/protobuf/duration.proto (package google.protobuf).

// google.protobuf.Duration.
const (
	DurationSeconds = 1 // int64 seconds
	DurationNanos   = 2 // int32 nanos
)

// google/rpc/error_details.proto (package google.rpc).

// google.rpc.RetryInfo.
const (
	RetryInfoRetryDelay = 1 // google.protobuf.Duration retry_delay
)

// google.rpc.BadRequest.
const (
	BadRequestFieldViolations = 1 // repeated google.rpc.BadRequest.FieldViolation field_violations
)

// google.rpc.BadRequest.FieldViolation. The receiver sends and reads
// field and description; reason and localized_message are named so that
// the list is the message's whole.
const (
	BadRequestFieldViolationField            = 1 // string field
	BadRequestFieldViolationDescription      = 2 // string description
	BadRequestFieldViolationReason           = 3 // string reason
	BadRequestFieldViolationLocalizedMessage = 4 // google.rpc.LocalizedMessage localized_message
)

// The full names of the detail types the receiver sends and reads, and
// their type URLs in a google.protobuf.Any: the prefix every Google API
// and protobuf-go's anypb.New use, then the name (any.proto: the name is
// what follows the last '/').
const (
	RetryInfoName     = "google.rpc.RetryInfo"
	BadRequestName    = "google.rpc.BadRequest"
	TypeURLPrefix     = "type.googleapis.com/"
	RetryInfoTypeURL  = TypeURLPrefix + RetryInfoName
	BadRequestTypeURL = TypeURLPrefix + BadRequestName
)
