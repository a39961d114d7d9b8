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
//   - ErrorPosition (otlppb's) splits their errors into where the bad data
//     is and what is wrong there.
//   - Options.Visit hands every item Check accepts to an embedder's Visitor
//     as otlpview views, in the same walk, and lets it reject single items
//     (decoded data for storage engines; see Visitor for the views'
//     lifetime, and visittest to hold an engine to it).
//
// Reading the fields of a request is the business of otlpview: lazy views
// over the same bytes. Fields are read with otlppb's reader and named with
// its constants.
//
// The walk follows protobuf-go's reading rules where easyproto leaves them
// to the caller: unknown fields, including groups, are skipped; a known
// field that arrives with an unexpected wire type is treated as unknown;
// field number 0 and numbers above 2^29-1 are malformed: otlppb's reader
// applies them for every walk of the module. It reads the commonest fields
// (a one-byte tag, a short length or a fixed-size scalar) inline and hands
// the rest to easyproto; otlppb's FuzzNextField holds the two to the same
// result on every input.
package otlpdecode
