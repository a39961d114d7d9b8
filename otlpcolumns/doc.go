// Package otlpcolumns is a reversible columnar transform of the export
// stream's requests (docs/streaming.md, "Columns"), applied before the
// stream's stateful zstd and undone after its decoder.
//
// The encoder walks a request with the OTLP schema of its signal and writes
// each field path to its own column: the structure (tags, the byte count of
// each sub-message's length, a zero at each sub-message's end) to one, each
// string or bytes field's values (with their lengths) to their own, so that
// zstd finds names beside names and ids beside ids; timestamps as the
// zigzag varint of their difference from the column's previous one (a
// span's end time from its start), doubles XOR the column's previous one.
// The sub-messages' lengths are not sent: the decoder recomputes them.
//
// The decoder rebuilds the exact bytes of the request (the disk log stores
// them and the idempotency window hashes them). What the transform cannot
// represent exactly is still exact: fields the schema does not name, or of
// another wire type, go to a column of their own unchanged; non-minimal
// varints are copied or padded back to their size; fields in any order are
// kept in it. A message it cannot walk at all (a group, a truncated
// sub-message, nesting deeper than maxDepth) is sent untransformed behind
// a flag byte. So any bytes round-trip (FuzzRoundTrip).
//
// The decoder is bounded: the output is at most the declared length, which
// is refused over the caller's limit before any output; output is charged
// to the caller as it is produced, never for a claimed length alone; the
// recursion is bounded by maxDepth; and anything that does not decode to
// exactly the declared length, with every column consumed, is ErrCorrupt.
package otlpcolumns
