package otlpcolumns

import (
	"encoding/binary"
	"errors"
	"unsafe"
)

// The encoded form of one message:
//
//	0x00 || the message, untransformed
//	0x01 || uvarint(len(message)) || uvarint(k) ||
//	        k × (column index byte, uvarint(column length)) ||
//	        the k columns' bytes, in the order listed
//
// The columns listed are the non-empty ones, in increasing index order;
// column 0 is the structure.

const (
	flagRaw     = 0
	flagColumns = 1
)

// maxDepth bounds the nesting the transform walks (the encoder sends a
// deeper message untransformed; the decoder refuses a deeper structure): it
// bounds the decoder's recursion, and so its stack, whatever the input
// claims: a frame of the decoder's walk is about 800 bytes, so a crafted
// message of a few KB grows a stream's goroutine stack to maxDepth frames,
// uncharged until the collector shrinks it (about 320 KB at 400). 400
// nodes hold the OTLP tree (at most 8 levels) with AnyValues nested to the
// receiver's default depth (otlpdecode's 128) through key-value lists, the
// deepest way (three nodes a level: AnyValue, KeyValueList, KeyValue), and
// 8 to spare; 512 had 112 more frames for nothing.
const maxDepth = 400

// MaxEncodedLen is the largest encoding of a message of n bytes: the
// encoder sends a message untransformed (n+1 bytes) when its columns would
// be larger, so a receiver that accepts messages of n bytes accepts their
// encodings of MaxEncodedLen(n) bytes.
func MaxEncodedLen(n int) int { return n + n/2 + 4<<10 }

// errFallback: the walk met something it cannot represent exactly (a
// group, a field number 0, a truncated or malformed sub-message, too
// deep): the message is sent untransformed.
var errFallback = errors.New("not representable")

// Encoder transforms the messages of one stream direction of one signal.
// It holds its columns' buffers between messages (no allocation once they
// have grown to a message's size). Not safe for concurrent use.
type Encoder struct {
	s    *schema
	cols [maxCols][]byte
	prev [maxCols]uint64
	// refs are the kRef fields met, in order, written once the walk has
	// seen every value of the reference column; nref counts the values
	// of the reference column written so far; index maps a value of the
	// reference column (its raw length and bytes) to its ordinal.
	refs  []pendingRef
	nref  int
	index map[refKey]int
	// sets are the series the stream has sent (series.go).
	sets seriesTable
	// starts holds the start time of the span of each ordinal
	// (recordStart).
	starts []uint64
	// childStart holds, by the ordinal of a span that comes later, the
	// start of the first span before it that names it as its parent
	// (childStarts).
	childStart []childStart
	// backs maps a kBack value to its last ordinal among the nback
	// kBack values written (one kBack field per schema).
	backs map[refKey]int
	nback int
	// traceStarts: the start of the span of each kBack ordinal.
	traceStarts []uint64
}

type pendingRef struct {
	col uint8
	raw []byte // its length varint and bytes
}

// refKey is a value of the reference column, its raw bytes padded: the
// ids are 8 bytes with their length, longer values are not referenced.
type refKey [24]byte

// maxRefs bounds the values of the reference column that may be
// referenced: the decoder indexes at most that many (4 bytes each).
const maxRefs = 1 << 14

// NewEncoder returns an encoder for the envelopes of sig.
func NewEncoder(sig Signal) *Encoder {
	if sig < Profiles && sig > 0 {
		return newEncoder(&schemas[sig])
	}
	return newEncoder(nil)
}

// newEncoder returns an encoder of schema s (nil: none).
func newEncoder(s *schema) *Encoder {
	return &Encoder{s: s, sets: seriesTable{index: map[string]int32{}}}
}

// maxKept bounds the buffers an Encoder keeps from one message to the
// next (its columns and its list of references, which grow to a message's
// size): a stream's messages are usually far smaller (a batch processor's
// 8,192 spans are about 2 MiB of OTLP), and a larger one allocates them
// anew rather than leave its size held for the stream's life (a forward
// destination's stream of 64 MiB records held that, with append's slack,
// per signal). Part of EncoderCost.
const maxKept = 4 << 20

// EncoderCost is the most an Encoder holds between messages: its fixed
// tables, the buffers it keeps (maxKept), its maps of the reference
// column's values and of kBack values (maxRefs entries each, about 80
// bytes an entry with Go's map overhead and growth), its start times by
// ordinal (three slices of maxRefs, twice with append's slack) and its
// series table (the runs, their copies as the index's keys, and about 80
// bytes a run in the index and offsets): TestEncoderCostHolds. A client
// holds one per stream with columns (otlpclient.StreamConfig.StreamColumns,
// a forward destination's stream-compression=zstd+columns), beside its
// stateful zstd encoder.
const EncoderCost = int64(unsafeSizeofEncoder + maxKept + 2*80*maxRefs + 2*(8+16+8)*maxRefs + 2*maxSeriesBytes + 80*maxSeries)

// unsafeSizeofEncoder is at least unsafe.Sizeof(Encoder{}): the column
// and previous-value tables (maxCols × (24 + 8)), the series' last
// references (maxCols × 4) and a few words (TestEncoderCostHolds).
const unsafeSizeofEncoder = maxCols*36 + 512

// Append appends the encoding of msg to dst. It never fails: what the
// transform cannot represent exactly is sent untransformed.
func (e *Encoder) Append(dst, msg []byte) []byte {
	dst = e.append(dst, msg)
	e.trim()
	return dst
}

// trim drops the buffers a message grew past maxKept.
func (e *Encoder) trim() {
	if e.s == nil {
		return
	}
	kept := cap(e.refs) * int(unsafe.Sizeof(pendingRef{}))
	for i := range e.s.cols {
		kept += cap(e.cols[i])
	}
	if kept > maxKept {
		e.refs = nil
		clear(e.cols[:e.s.cols])
	}
}

func (e *Encoder) append(dst, msg []byte) []byte {
	if e.s == nil {
		return append(append(dst, flagRaw), msg...)
	}
	sets, last := len(e.sets.offs), e.sets.last
	if e.s.ref != 0 {
		// A first walk finds the reference column's values, so that
		// the second knows a span's parent that comes after it.
		e.reset()
		clear(e.index) // the first walk finds no parents
		err := e.walk(e.s.root, msg, 0)
		e.sets.truncate(sets, &last)
		if err != nil {
			return e.raw(dst, msg)
		}
		e.indexRefs()
	}
	e.reset()
	if err := e.walk(e.s.root, msg, 0); err != nil {
		e.sets.truncate(sets, &last)
		return e.raw(dst, msg)
	}
	e.writeRefs()
	clear(e.refs) // they point into msg
	start := len(dst)
	dst = append(dst, flagColumns)
	dst = binary.AppendUvarint(dst, uint64(len(msg)))
	k := 0
	for i := range e.s.cols {
		if len(e.cols[i]) > 0 {
			k++
		}
	}
	dst = binary.AppendUvarint(dst, uint64(k))
	for i := range e.s.cols {
		if len(e.cols[i]) > 0 {
			dst = append(dst, byte(i))
			dst = binary.AppendUvarint(dst, uint64(len(e.cols[i])))
		}
	}
	for i := range e.s.cols {
		dst = append(dst, e.cols[i]...)
	}
	if len(dst)-start > MaxEncodedLen(len(msg)) {
		e.sets.truncate(sets, &last)
		return append(append(dst[:start], flagRaw), msg...)
	}
	return dst
}

// raw appends msg untransformed, after a walk that gave up: the kRef
// fields it met point into msg, and are dropped (to the list's capacity:
// a walk that stopped part way leaves those of a longer walk before it),
// so that the encoder holds nothing of msg between messages
// (TestEncoderKeepsNoInput).
func (e *Encoder) raw(dst, msg []byte) []byte {
	clear(e.refs[:cap(e.refs)])
	return append(append(dst, flagRaw), msg...)
}

// reset empties the columns and what a walk keeps of a message.
func (e *Encoder) reset() {
	for i := range e.s.cols {
		e.cols[i] = e.cols[i][:0]
		e.prev[i] = 0
	}
	e.refs, e.nref, e.starts, e.nback = e.refs[:0], 0, e.starts[:0], 0
	e.childStart, e.traceStarts = e.childStart[:0], e.traceStarts[:0]
	if e.backs == nil {
		e.backs = map[refKey]int{}
	}
	clear(e.backs)
}

// indexRefs maps the values of the reference column (its first maxRefs) to
// their first ordinal.
func (e *Encoder) indexRefs() {
	if e.index == nil {
		e.index = make(map[refKey]int)
	}
	clear(e.index)
	col, lens := e.cols[e.s.ref], e.cols[e.s.refLen]
	var raw []byte
	for i := 0; len(lens) > 0 && i < maxRefs; i++ {
		l, k := binary.Uvarint(lens)
		if k <= 0 || l > uint64(len(col)) {
			break // cannot happen: the walk wrote whole values
		}
		raw = append(append(raw[:0], lens[:k]...), col[:l]...)
		if key, ok := keyOf(raw); ok {
			if _, dup := e.index[key]; !dup {
				e.index[key] = i
			}
		}
		lens, col = lens[k:], col[l:]
	}
}

// writeRefs writes the kRef fields met by the walk: a reference to the
// value of the reference column they repeat, or the value itself.
func (e *Encoder) writeRefs() {
	prev := 0
	for _, r := range e.refs {
		c := e.cols[r.col]
		if key, ok := keyOf(r.raw); ok {
			if o, found := e.index[key]; found {
				e.cols[r.col] = binary.AppendUvarint(c, 1+zigzag(uint64(o-prev)))
				prev = o
				continue
			}
		}
		e.cols[r.col] = append(append(c, 0), r.raw...)
	}
}

func keyOf(raw []byte) (refKey, bool) {
	var k refKey
	if len(raw) >= len(k) || len(raw) < 2 {
		return k, false
	}
	k[0] = byte(len(raw))
	copy(k[1:], raw)
	return k, true
}

// recordStart records v as the start time of the span of ordinal nref-1
// (the last value of the reference column written: the span's own id),
// the spans between without one at zero. A child span whose parent is
// recorded writes its start from the parent's (it starts a little after
// it), where the previous span's start, of another trace maybe, may be
// far. Encoder and decoder record alike, whatever the fields' order.
func recordStart(starts []uint64, nref int, v uint64) []uint64 {
	r := nref - 1
	if r < 0 || r >= maxRefs {
		return starts
	}
	for len(starts) <= r {
		starts = append(starts, 0)
	}
	starts[r] = v
	return starts
}

// childStart is the start of a span's first child that came before it.
type childStart struct {
	v   uint64
	set bool
}

// parentOf sorts the ordinal o of a span's parent: one whose start is
// recorded (known: its start is the base of the span's), or one that
// comes after the span (forward: the span's start is recorded for it).
func parentOf(o, known, nref int) (parent, forward int) {
	switch {
	case o < known:
		return o, -1
	case o >= nref && o < maxRefs:
		return -1, o
	}
	return -1, -1
}

// startBase is what a span's start is written from: its parent's start,
// when the parent came before it; else the start of its first child that
// came before it (a parent starts a little before its children); else the
// start of the last span of its trace before it (sameTrace, by the kBack
// ordinal of its trace_id, traceStarts recorded by the same); else the
// column's previous value.
func startBase(prev uint64, starts []uint64, children []childStart, parent, nref int, traceStarts []uint64, sameTrace int) (uint64, int) {
	if parent >= 0 {
		return starts[parent], after
	}
	if r := nref - 1; r >= 0 && r < len(children) && children[r].set {
		return children[r].v, before
	}
	if sameTrace >= 0 && sameTrace < len(traceStarts) {
		return traceStarts[sameTrace], either
	}
	return prev, either
}

// How a start is written from its base: a child starts after its parent's
// start (v-base), a parent before its child's (base-v), as plain varints
// (a bit a span less than zigzag; the other sign, wrapping, takes ten
// bytes); from the trace's last span or the previous one, zigzag.
const (
	either = iota
	after
	before
)

func appendStart(c []byte, v, base uint64, how int) []byte {
	switch how {
	case after:
		return binary.AppendUvarint(c, v-base)
	case before:
		return binary.AppendUvarint(c, base-v)
	}
	return binary.AppendUvarint(c, zigzag(v-base))
}

func startOf(x, base uint64, how int) uint64 {
	switch how {
	case after:
		return base + x
	case before:
		return base - x
	}
	return base + unzigzag(x)
}

// recordChild records v as the start of the first child of span forward.
func recordChild(children []childStart, forward int, v uint64) []childStart {
	if forward < 0 {
		return children
	}
	for len(children) <= forward {
		children = append(children, childStart{})
	}
	if !children[forward].set {
		children[forward] = childStart{v, true}
	}
	return children
}

func zigzag(v uint64) uint64   { return v<<1 ^ uint64(int64(v)>>63) }
func unzigzag(v uint64) uint64 { return v>>1 ^ -(v & 1) }

// walk writes the fields of msg, a message of node n.
func (e *Encoder) walk(n *node, msg []byte, depth int) error {
	if depth > maxDepth {
		return errFallback
	}
	var start uint64
	var bucket uint8
	parent := -1    // the ordinal of the parent span, when its start is known
	sameTrace := -1 // the kBack ordinal of the last span of its trace
	forward := -1   // the ordinal of the parent span, when it comes later
	inRun := -1     // which of n.series the previous field was
	st := e.cols[colStruct]
	for len(msg) > 0 {
		if i := n.seriesIndex(msg[0]); i >= 0 && inRun != i {
			if r := seriesRun(msg, n.series[i]); r > 0 {
				if id, ok := e.sets.index[string(msg[:r])]; ok {
					col := n.seriesCol[i]
					st = append(st, seriesRef+8*byte(i))
					e.cols[col] = binary.AppendUvarint(e.cols[col], zigzag(uint64(int64(id)-int64(e.sets.last[col]))))
					e.sets.last[col] = id + 1
					if n.byCtx != nil && n.series[i] == n.ctxSet {
						bucket = e.sets.buckets[id]
					}
					msg = msg[r:]
					inRun = -1
					continue
				}
				// The decoder adds the run once it has rebuilt it.
				e.sets.add(msg[:r])
			}
		}
		tag, k := binary.Uvarint(msg)
		if k <= 0 || tag>>3 == 0 || tag>>3 > 1<<29-1 {
			return errFallback
		}
		inRun = -1
		if k == 1 {
			inRun = n.seriesIndex(msg[0])
		}
		st = append(st, msg[:k]...)
		msg = msg[k:]
		wt := uint8(tag & 7)
		var f field
		if num := tag >> 3; num <= maxField {
			f = n.f[num]
		}
		if f.kind != kOther && wireOf[f.kind] != wt {
			f = field{}
		}
		if f.kind == kOther {
			f.col = colOther
		}
		if f.spread {
			f.col += bucket
		}
		switch wt {
		case 0:
			_, k := binary.Uvarint(msg)
			if k <= 0 {
				return errFallback
			}
			e.cols[f.col] = append(e.cols[f.col], msg[:k]...)
			msg = msg[k:]
		case 1:
			if len(msg) < 8 {
				return errFallback
			}
			v := binary.LittleEndian.Uint64(msg)
			msg = msg[8:]
			c := e.cols[f.col]
			switch f.kind {
			case kTime, kStart:
				base, how := e.prev[f.col], either
				if f.kind == kStart && e.s.ref != 0 {
					base, how = startBase(base, e.starts, e.childStart, parent, e.nref, e.traceStarts, sameTrace)
				}
				c = appendStart(c, v, base, how)
				e.prev[f.col] = v
				if f.kind == kStart {
					start = v
					if e.s.ref != 0 {
						e.starts = recordStart(e.starts, e.nref, v)
						e.childStart = recordChild(e.childStart, forward, v)
						e.traceStarts = recordStart(e.traceStarts, e.nback, v)
					}
				}
			case kEnd:
				c = binary.AppendUvarint(c, v-start)
			case kDouble:
				c = binary.BigEndian.AppendUint64(c, v^e.prev[f.col])
				e.prev[f.col] = v
			default:
				c = binary.LittleEndian.AppendUint64(c, v)
			}
			e.cols[f.col] = c
		case 5:
			if len(msg) < 4 {
				return errFallback
			}
			e.cols[f.col] = append(e.cols[f.col], msg[:4]...)
			msg = msg[4:]
		case 2:
			l, k := binary.Uvarint(msg)
			if k <= 0 || l > uint64(len(msg)-k) {
				return errFallback
			}
			if f.kind == kMsg {
				st = append(st, byte(k))
				e.cols[colStruct] = st
				child := f.child
				if n.byCtx != nil && tag>>3 == uint64(n.ctxUse) {
					child = n.byCtx[bucket]
				}
				if err := e.walk(child, msg[k:k+int(l)], depth+1); err != nil {
					return err
				}
				st = append(e.cols[colStruct], 0)
			} else if f.kind == kBack {
				raw := msg[:k+int(l)]
				c := e.cols[f.col]
				key, ok := keyOf(raw)
				sameTrace = -1
				if last, found := e.backs[key]; ok && found {
					c = binary.AppendUvarint(c, uint64(e.nback-last))
					sameTrace = last
				} else {
					c = append(append(c, 0), raw...)
				}
				if ok && e.nback < maxRefs {
					e.backs[key] = e.nback
				}
				e.cols[f.col] = c
				e.nback++
			} else if f.kind == kRef {
				e.refs = append(e.refs, pendingRef{col: f.col, raw: msg[:k+int(l)]})
				parent, forward = -1, -1
				if key, ok := keyOf(msg[:k+int(l)]); ok {
					if o, found := e.index[key]; found {
						parent, forward = parentOf(o, len(e.starts), e.nref)
					}
				}
			} else if f.kind == kID {
				e.cols[f.lcol] = append(e.cols[f.lcol], msg[:k]...)
				e.cols[f.col] = append(e.cols[f.col], msg[k:k+int(l)]...)
				if f.col == e.s.ref {
					e.nref++
				}
			} else {
				e.cols[f.col] = append(e.cols[f.col], msg[:k+int(l)]...)
				if n.byCtx != nil && tag>>3 == uint64(n.ctxSet) && f.kind == kLen {
					bucket = keyBucket(msg[k : k+int(l)])
				}
			}
			msg = msg[k+int(l):]
		default:
			return errFallback
		}
	}
	e.cols[colStruct] = st
	return nil
}
