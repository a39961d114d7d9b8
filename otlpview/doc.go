// Package otlpview reads OTLP v1 protobuf requests (ExportTraceServiceRequest,
// ExportMetricsServiceRequest, ExportLogsServiceRequest,
// ExportProfilesServiceRequest, or the *Data messages) through views:
// TracesDecoder, MetricsDecoder, LogsDecoder and ProfilesDecoder visit every
// item of a request (Span, Metric, LogRecord, Profile) with its Resource
// and Scope, and the repeated sub-messages of a view (attributes, events,
// links, data points, exemplars, samples...) are lazy iterators over the
// raw bytes; a profile's dictionary indices resolve to what they index
// (Dictionary). ItemViews decodes the same views one message at a time,
// for a walk that finds the messages itself (otlpdecode's Visitor). Nothing
// is copied and, with a reused decoder, nothing is allocated per item.
//
// The package is named for what it holds, views of OTLP messages, with the
// otlp prefix of its siblings otlpdecode and otlpjson (a bare "view" would
// say nothing of what is viewed and clash with local variables of that
// name). It reads with otlppb's field reader, the one every walk of the
// module uses, names fields with otlppb's constants, and reports errors
// that otlppb.ErrorPosition splits. The receiver hands views of each item
// it validates to an embedder's otlpdecode.Visitor (the decoded-item
// path); the decoders here are for programs that read the receiver's
// store, and for tests.
//
// Views read what otlpdecode.Check* accepts: a request that passed Check
// never makes a decoder or an iterator fail. They do not apply Check's
// validation rules. They follow protobuf-go's reading rules where easyproto
// leaves them to the caller: the last occurrence of a scalar wins; repeated
// scalars are accepted packed and unpacked; int32 and enum values are read as 64-bit
// varints and truncated, so negative values work; a bool is any non-zero
// varint; unknown fields, including groups, are skipped; a known field that
// arrives with an unexpected wire type is treated as unknown; field number 0
// and numbers above 2^29-1 are malformed.
//
// Strings and byte slices in views alias the source buffer: they stay valid
// as long as that buffer is not modified.
package otlpview
