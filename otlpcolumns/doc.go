// Package otlpcolumns is a reversible columnar transform of the export
// stream's requests, under the stream's stateful zstd when both sides
// agree to it (otlp.StreamColumns, off by default: docs/streaming.md,
// "Columns", has the figures and why; bench/cmd/wirebytes measures it).
//
// An Encoder and a Decoder each serve one stream of one signal: the series
// tables (series.go) carry from message to message, so every message the
// encoder produced must reach the decoder, in order, as the zstd state's.
//
// The encoder walks a request with the OTLP schema of its signal (traces,
// metrics, logs; profiles are sent untransformed) and writes each field
// path to its own column: the structure (tags, the byte count of each
// sub-message's length, a zero at each sub-message's end) to one, each
// string or bytes field's values (with their lengths) to their own, so that
// zstd finds names beside names and ids beside ids. Beyond the layout:
//
//   - timestamps are the zigzag varint of their difference from the
//     column's previous one in the request (a span's end, and a log
//     record's observed time, from its start);
//   - the string and integer values of span and log record attributes go
//     to columns by their key's hash (a status code beside status codes),
//     and a span's attribute keys by its name's hash (keyBuckets);
//   - a parent span id, or a link's span id, that is a span id of the same
//     request is its ordinal there (kRef), a byte or two instead of nine;
//   - sub-messages' lengths are not sent: the decoder recomputes them.
//
// The decoder rebuilds the exact bytes of the request (the disk log stores
// them and the idempotency window hashes them). Fields the schema does not
// name, or of another wire type, go unchanged to a column of their own;
// non-minimal varints are copied, or padded back to their size; fields in
// any order keep it. A message the transform cannot walk (a group, a
// truncated sub-message, nesting deeper than maxDepth) is sent untransformed
// behind a flag byte. So any bytes round-trip (FuzzRoundTrip).
//
// The decoder is bounded: a declared length over the caller's limit is
// refused before any output; the output is charged to the caller's budget
// as it is produced, never for a claimed length alone; its recursion is
// bounded by maxDepth, its index of the reference column by maxRefs and its
// series table by maxSeriesBytes (DecoderCost); and anything that does not
// decode to exactly the declared length, with every column consumed, is
// ErrCorrupt. Each message is walked by the generated walk of its node's
// shape (walk_gen.go, from the schemas by gen_test.go: go generate), a
// switch on the structure's byte to straight-line code for each field the
// schema names with a one-byte tag (and Span.flags' two-byte one); at any
// other field it hands the rest of the message to the interpreter
// (Decoder.interp), which finds a one-byte tag's field in a table of its
// node (node.ops, built with the first decoder of the signal) and keeps
// in registers only what each field uses (walkFrame). FuzzGenSame holds the generated walks to the
// interpreter, and FuzzDecodeSame the interpreter to the one it replaced
// (walkRef, in its tests).
//
// The encoder holds at most EncoderCost between messages: its tables are
// bounded as the decoder's, and it keeps at most maxKept of the buffers a
// message grew and nothing of the message (TestEncoderKeepsNoInput).
package otlpcolumns
