// Package otlpdecode validates OTLP v1 protobuf payloads
// (ExportTraceServiceRequest, ExportMetricsServiceRequest,
// ExportLogsServiceRequest, which share their wire format with TracesData,
// MetricsData and LogsData, and the Alpha profiles signal's
// ExportProfilesServiceRequest, v1development, sharing it with
// ProfilesData) without generated code and without allocating: it is what
// the receiver runs on every request.
//
//   - CheckTraces, CheckMetrics, CheckLogs and CheckProfiles walk a whole
//     request once, verify that it is well-formed protobuf and count the
//     items (spans, data points, log records, profiles) that break the OTLP
//     rules on identifiers (length; all zeroes for a span's own ids and a
//     profile's id), on histogram bucket counts, on profiles' dictionary
//     references and samples and, optionally, on UTF-8.
//   - AppendValidTraces, AppendValidMetrics, AppendValidLogs and
//     AppendValidProfiles re-encode a request without its rejected items,
//     for the partial-success path of the OTLP protocol (specification:
//     "Partial Success").
//   - ErrorPosition splits their errors into where the bad data is and what
//     is wrong there.
//
// Reading the fields of a request is the business of the subpackage
// otlpview: lazy views over the same bytes, with their own decoders.
//
// The walk follows protobuf-go's reading rules where easyproto leaves them
// to the caller: unknown fields, including groups, are skipped; a known
// field that arrives with an unexpected wire type is treated as unknown;
// field number 0 and numbers above 2^29-1 are malformed. NextField applies
// them for other packages that walk OTLP protobuf. The walk itself reads
// the commonest fields (a one-byte tag, a short length or a fixed-size
// scalar) inline and hands the rest to easyproto; FuzzNextField holds the
// two readers to the same result on every input.
package otlpdecode
