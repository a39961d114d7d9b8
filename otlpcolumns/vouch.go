package otlpcolumns

import (
	"encoding/binary"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// Vouch is what a Decoder established of the request it has just written
// (Decoder.Vouched): with it, the pipeline need not validate the request
// (ingest.Pipeline.ExportValidated).
type Vouch struct {
	// Items is what otlpdecode.Check* would count in the request
	// (otlp.UnwrapEnvelope's): its spans, data points or log records.
	Items int
	// MaxAnyValueDepth bounds the AnyValue nesting of the request as
	// otlpdecode counts it (1: an attribute's value, a log body).
	MaxAnyValueDepth int
}

// Vouched reports what the last Decode established of the request it
// wrote, ok only when otlpdecode's Check* of it (the request within the
// envelope, with any Options but ValidateUTF8, whose strings the decoder
// does not look at, and a MaxAnyValueDepth of at least v's) finds no error
// and rejects nothing, and counts v.Items.
//
// It is conservative: it vouches only for a message that the generated
// walks wrote whole, each field one the schema names, of the wire type it
// names, with the nodes' rules (the generated walks' per-item state, from
// otlpdecode's predicates: rules.go) met by every item, and series that
// were themselves written so. Anything else is not vouched for, and the
// pipeline validates it as any request: the interpreter taking over (a
// field the schema does not name, of another wire type, of a tag of more
// than a byte but Span.flags' minimal one; the cold nodes: entity refs,
// exponential histograms, summaries), a message sent untransformed, a
// *_strindex field (the checker counts them, Result.IgnoredStrindex), a
// varint the checker would find malformed, a metric with more than one
// data field, a packed field whose length is not its elements', an
// AnyValue container nested 255 messages deep, an error.
func (d *Decoder) Vouched() (v Vouch, ok bool) {
	if !d.vouched {
		return Vouch{}, false
	}
	return Vouch{Items: d.items, MaxAnyValueDepth: max(1, int(d.sets.mark)/2)}, true
}

// rule is what a node's generated walk establishes of its messages, or of
// a field's values, for Vouched. Only a few nodes and fields have one:
// the generator writes its state (two integers, vA and vB: the Decoder's
// va and vb of the node's rule; no node of a rule is inside another of
// the same rule) and tests only there, so the other nodes' walks cost
// what they did (gen_test.go, genRuleStart). In the Decoder, not in the
// walk's locals: there they took registers the walk of a span needs for
// its fields (BenchmarkDecode, callgrind: 10.9 % more instructions than
// without vouching, 4.9 % with the state here).
type rule uint8

// The rules of nodes: each, at the end of a message of the node, tests
// what its fields' rules kept (the last occurrence of a field winning, as
// in the checker), counts an item or keeps the deepest container.
const (
	ruleNone rule = iota
	// ruleSpan: an item; vA has bit 1 if it has a trace_id, every
	// occurrence valid (otlpdecode.ValidSpanTraceID; one that is not
	// is not vouched for), bit 2 the same of its span_id
	// (ValidSpanID); vB is its last parent_span_id's length
	// (ValidParentSpanIDLen; each occurrence ValidIDLen).
	ruleSpan
	// ruleLink: vA and vB are its last trace_id's and span_id's lengths
	// (ValidLinkIDLens; any occurrence of either not ValidIDLen is not
	// vouched for: pdata refuses it, the checker rejects the item).
	ruleLink
	// ruleRecord: an item; vA, vB as ruleLink's (ValidLogIDLens).
	ruleRecord
	// ruleMetric: vA counts its data fields (the oneof): more than one is
	// not vouched for (the checker keeps the last kind's points only).
	ruleMetric
	// rulePoint: an item.
	rulePoint
	// ruleHist: an item; vA and vB count its bucket_counts' and
	// explicit_bounds' elements (ValidBuckets).
	ruleHist
	// ruleExemplar: vA, vB as ruleLink's (ValidExemplarIDLens).
	ruleExemplar
	// ruleNest: an AnyValue's array or key-value list: its depth is kept
	// in the series table's mark (Vouched's MaxAnyValueDepth).
	ruleNest
)

// The rules of fields: each keeps what its node's rule tests.
const (
	ruleSpanTraceID rule = iota + 16 // vA bit 1: otlpdecode.ValidSpanTraceID, each occurrence
	ruleSpanID                       // vA bit 2: otlpdecode.ValidSpanID, each occurrence
	ruleTraceLen                     // vA: its length (each occurrence ValidIDLen 16)
	ruleSpanLen                      // vB: its length (each occurrence ValidIDLen 8)
	ruleData                         // vA++
	ruleCounts                       // vA += its packed fixed64 elements
	ruleBounds                       // vB += its packed fixed64 elements
	ruleOff                          // never vouched for (*_strindex)
)

// markOff is the series table's mark once the message cannot be vouched
// for (seriesTable.mark): the highest, so that a series' mark can be
// taken with max.
const markOff = 255

// off makes the message not vouched for.
func (d *Decoder) off() { d.sets.mark = markOff }

// nest keeps depth, that of an AnyValue's array or key-value list, in the
// mark, if deeper than the deepest so far. An AnyValue nested k deep (1:
// an attribute's value) is at least 2k+2 messages deep (the request, a
// resource_*, a resource, a KeyValue, then an array or a list and a
// KeyValue each level), and one inside a container at depth c at most
// c+2 deep: Vouched's bound, c/2.
func (d *Decoder) nest(depth int) {
	if depth > int(d.sets.mark) {
		d.sets.mark = uint8(min(depth, markOff))
	}
}

// idValue is the value of a bytes field the decoder wrote: b is its
// length varint and its bytes.
func idValue(b []byte) []byte {
	if len(b) > 0 && b[0] < 0x80 {
		return b[1:]
	}
	return longValue(b)
}

// longValue is idValue's value after a length of more than a byte.
func longValue(b []byte) []byte {
	_, k := binary.Uvarint(b)
	return b[max(k, 0):]
}

// varintOK checks a varint field's bytes of the maximum length (ten):
// the decoder copies any such bytes, the checker refuses one that
// overflows 64 bits.
func (d *Decoder) varintOK(c []byte) {
	if _, k := binary.Uvarint(c[:binary.MaxVarintLen64]); k <= 0 {
		d.off()
	}
}

// packed adds to *n the elements of a packed fixed64 field of l bytes, or
// makes the message not vouched for if l is not a multiple of 8 (the
// checker's error: otlpdecode.PackedFixed64Count).
func (d *Decoder) packed(n *int, l int) {
	if k, ok := otlpdecode.PackedFixed64Count(l); ok {
		*n += k
	} else {
		d.off()
	}
}

// maxRule bounds the rules of nodes (Decoder.va, vb).
const maxRule = ruleNest
