// Package otlpdecode decodes and validates OTLP v1 protobuf payloads
// (ExportTraceServiceRequest, ExportMetricsServiceRequest,
// ExportLogsServiceRequest, which share their wire format with TracesData,
// MetricsData and LogsData) without generated code and without allocating
// on the hot path.
//
// The package offers three layers:
//
//   - CheckTraces, CheckMetrics and CheckLogs walk a whole request once,
//     verify that it is well-formed protobuf and count the items (spans, data
//     points, log records) that break the OTLP rules on identifiers (length;
//     all zeroes for a span's own ids), on histogram bucket counts and,
//     optionally, on UTF-8. The receiver calls them on every request.
//   - AppendValidTraces, AppendValidMetrics and AppendValidLogs re-encode a
//     request without its rejected items, for the partial-success path of the
//     OTLP protocol (specification: "Partial Success").
//   - TracesDecoder, MetricsDecoder and LogsDecoder visit every item of a
//     request through views (Resource, Scope, Span, Metric, LogRecord) whose
//     repeated sub-messages are lazy iterators over the raw bytes.
//
// The decoders follow protobuf-go's reading rules where easyproto leaves them
// to the caller: the last occurrence of a scalar wins; repeated scalars are
// accepted packed and unpacked; int32 and enum values are read as 64-bit
// varints and truncated, so negative values work; a bool is any non-zero
// varint; unknown fields, including groups, are skipped; a known field that
// arrives with an unexpected wire type is treated as unknown; field number 0
// and numbers above 2^29-1 are malformed.
//
// Strings and byte slices in views alias the source buffer: they stay valid
// as long as that buffer is not modified.
package otlpdecode
