package otlpdecode

import "encoding/binary"

// The per-item rules of the Check* functions that a transport building a
// request itself may establish while it writes it (otlpcolumns' Decoder
// vouches with them, ingest.Validated): each is written here once, and the
// checker uses the same functions, so a rule cannot differ between the two.

// ValidSpanTraceID reports whether b, the last Span.trace_id of a span, is
// valid: 16 bytes, not all zeroes (trace.proto: "An ID with all zeroes OR
// of length other than 16 bytes is considered invalid").
func ValidSpanTraceID(b []byte) bool { return len(b) == 16 && !zeroID16(b) }

// ValidSpanID reports whether b, the last Span.span_id of a span, is
// valid: 8 bytes, not all zeroes.
func ValidSpanID(b []byte) bool { return len(b) == 8 && binary.LittleEndian.Uint64(b) != 0 }

// ValidParentSpanIDLen reports whether a Span.parent_span_id of n bytes
// (the last one) is valid: empty or 8 bytes (all zeroes accepted: see
// CheckTraces).
func ValidParentSpanIDLen(n int) bool { return n == 0 || n == 8 }

// ValidLinkIDLens reports whether a Span.Link whose last trace_id is
// trace bytes and last span_id span bytes is valid: 16 and 8 (an absent id
// is 0 bytes, invalid; all zeroes accepted: see CheckTraces).
func ValidLinkIDLens(trace, span int) bool { return trace == 16 && span == 8 }

// ValidLogIDLens reports whether a LogRecord whose last trace_id is trace
// bytes and last span_id span bytes is valid: each empty or of its id's
// length (16, 8).
func ValidLogIDLens(trace, span int) bool {
	return (trace == 0 || trace == 16) && (span == 0 || span == 8)
}

// ValidExemplarIDLens is ValidLogIDLens for an Exemplar's ids.
func ValidExemplarIDLens(trace, span int) bool { return ValidLogIDLens(trace, span) }

// ValidBuckets reports whether a HistogramDataPoint with counts elements
// of bucket_counts and bounds of explicit_bounds (summed over their
// occurrences, packed or not) is valid: no counts, or one more than
// bounds (metrics.proto, HistogramDataPoint.bucket_counts).
func ValidBuckets(counts, bounds int) bool { return counts == 0 || counts == bounds+1 }

// PackedFixed64Count returns the elements of a packed fixed64 or double
// field of l bytes, ok false when l is not a multiple of 8 (the request
// is then malformed).
func PackedFixed64Count(l int) (n int, ok bool) { return l / 8, l%8 == 0 }

// ValidIDLen reports whether an occurrence of n bytes of a trace or span
// id field, of ids of want bytes (16, 8), is one the Collector's pdata
// reads: empty or want bytes. pdata refuses the whole request at an id of
// any other length, even one that a later occurrence of the field
// replaces (protobuf's last one wins, by which the rules above judge the
// item), so an item with such an occurrence anywhere is rejected: stored,
// it would make the request unreadable downstream (forwarding to a
// Collector, Kafka, exports read with pdata).
func ValidIDLen(n, want int) bool { return n == 0 || n == want }
