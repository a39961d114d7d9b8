package otlpcolumns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Decoder errors.
var (
	// ErrCorrupt: the encoding is not what the encoder writes for any
	// message (a column cut short or left with bytes, a structure that
	// does not end where it should, output not of the declared length).
	ErrCorrupt = errors.New("corrupt columnar message")
	// ErrTooLarge: the declared length is over the decoder's limit.
	ErrTooLarge = errors.New("columnar message larger than the limit")
)

// chargeStep is how much output is charged at a time.
const chargeStep = 64 << 10

// growRatio bounds the output buffer's first growth in a message: up to
// the declared length, but never more than growRatio times the bytes of
// the columns the message sent (which the caller holds and has charged
// already). The demo data's messages decode to at most 5.7 times their
// columns at 8,192 items a request (3.3 times on average for traces, 5.0
// for metrics; only SDK-sized metrics, a few KiB, reach 15), so one
// allocation serves nearly every message: growing by doubling from
// chargeStep copied and cleared each message's output twice over, a third
// of the inverse transform's CPU on metrics at 8,192 points. A message
// that declares more than it sends gets at most growRatio times what it
// sent, charged before it is allocated, as before.
const growRatio = 8

// Decoder rebuilds the messages an Encoder of the same signal transformed.
// Between messages it holds the stream's series table and its buffers,
// within DecoderCost, and nothing of the messages it decoded. Not safe for
// concurrent use.
type Decoder struct {
	s *schema
	// cols are the message's columns, at their read positions at:
	// walking advances a position, an integer, where advancing the
	// slice stored a pointer in the heap at every field, with the
	// garbage collector's write barrier while it marks (a third of the
	// decoder's time on metrics at 8,192 points when it marked often).
	cols [maxCols][]byte
	at   [maxCols]int32
	// present are the columns the message sent (its column table's,
	// in order), their lengths in plen: Decode sets up, and forget
	// drops, only those (a message of a few items sends a few dozen of
	// the schema's up to 188: going over them all was a fifth of the
	// decoder's instructions on SDK-sized metrics). Between messages
	// every column is nil at position 0.
	present  [maxCols]uint8
	plen     [maxCols]int32
	npresent int
	prev     [maxCols]uint64
	// st is the rest of the structure column, a string: walk keeps it in
	// two registers, not three.
	st  string
	out []byte
	// buf is out's buffer, out a slice of it whose capacity is what
	// may be written without calling more.
	buf  []byte
	want int // the declared length
	// hint is the output's end the first growth may reach (growRatio).
	hint int
	// room is the capacity a growth to the declared length allocates:
	// an eighth more (within the caller's limit), so that the next
	// message of a stream, a little larger, decodes into the same
	// buffer (a pooled ticket's) instead of a new one; charged as the
	// rest of the capacity, before it is allocated.
	room int
	// charged is how much of out has been charged to grow (from the
	// start of dst); lim is walkRef's limit (walk keeps it as out's
	// capacity).
	charged, lim int
	grow         func(int) error
	err          error // the first error: every later call's (Decode)
	// offs are the offsets in refCol of the reference column's values
	// (at most maxRefs+1: each value's start, then the last's end),
	// nref the values of it taken so far (Encoder.writeRefs).
	offs, loffs    []int32
	refCol, refLen []byte
	nref           int
	// sets are the series the stream has sent (series.go).
	sets seriesTable
	// starts: the start time of the span of each ordinal (recordStart);
	// childStart: the start of a later span's first child (recordChild).
	starts, traceStarts []uint64
	childStart          []childStart
	// backs: where in the output each kBack value of the message is
	// (its first maxRefs values), its raw length in backLen.
	backs   []int32
	backLen []uint8
	nback   int // the kBack values of the message so far
	prevRef int // the ordinal of the last reference (kRef)
	// walker, if not nil, walks in walk's place (the tests' walkRef).
	walker func(*Decoder, *node, int) error
	// interpOnly: walk never takes the generated walks (the tests'
	// oracle for them: FuzzGenSame).
	interpOnly bool
	// items are the items the generated walks counted in the message
	// (Vouched), vouched whether the last Decode vouches for its
	// output; the rest of what it established is sets.mark.
	items   int
	vouched bool
	// va, vb are the state of the rule of each node (vouch.go).
	va, vb [maxRule]int
}

// DecoderCost is the most a Decoder holds between messages, beyond its
// output: its fixed tables, its index of the reference column (two offsets
// and, with append's slack, two start times and two children's a value),
// the starts by trace (two more),
// where its kBack
// values are (five bytes, twice) and its series table (grown within its
// bounds: its bytes, and an offset, a bucket and a mark a run; TestDecoderCostHolds).
const DecoderCost = int64(unsafeSizeofDecoder + (4+4+16+16+32+2*5)*(maxRefs+1) + maxSeriesBytes + (4+1+1)*maxSeries)

// unsafeSizeofDecoder is at least unsafe.Sizeof(Decoder{}): the column,
// column position, present column and length, previous-value and series'
// last-reference tables (maxCols × (24 + 4 + 1 + 4 + 8 + 4)) and a few
// words (TestDecoderSize).
const unsafeSizeofDecoder = maxCols*45 + 704

// NewDecoder returns a decoder for the envelopes of sig.
func NewDecoder(sig Signal) *Decoder {
	if sig < Profiles && sig > 0 {
		return newDecoder(&schemas[sig])
	}
	return &Decoder{}
}

// newDecoder returns a decoder of schema s, its nodes' tables filled and
// generated walks installed by the first (streams' first messages may race
// here: TestNewDecoderRace).
func newDecoder(s *schema) *Decoder {
	s.tables.Do(func() {
		tables(s.root, map[*node]bool{})
		installGen(s, s.sig)
	})
	return &Decoder{s: s}
}

// Decode appends to dst the message that src encodes (dst, to its
// capacity, must not overlap src: the columns are read as the output is
// written). A declared length over limit is ErrTooLarge, before any
// output; the output is at most the declared length, and grow, if not
// nil, is charged for it as it is produced (64 KiB at a time, never for
// the declared length alone), its error returned as it is. An
// untransformed message (flag 0) is copied, under the same limit and
// charge.
//
// An error is the stream's end: a message decoded part way has left
// series in the table that the encoder's next messages do not count on,
// so every later call returns the same error (as
// compression.StreamDecoder's do), never output built on them.
func (d *Decoder) Decode(dst, src []byte, limit int, grow func(int) error) (_ []byte, err error) {
	d.items, d.vouched, d.sets.mark = 0, false, 0
	if d.err != nil {
		return dst, d.err
	}
	d.grow, d.charged = grow, 0
	defer func() {
		d.forget()
		d.err = err
	}()
	if len(src) == 0 {
		return dst, fmt.Errorf("%w: empty message", ErrCorrupt)
	}
	base := len(dst)
	switch src[0] {
	case flagRaw:
		src = src[1:]
		if len(src) > limit {
			return dst, ErrTooLarge
		}
		if err := d.charge(len(src)); err != nil {
			return dst, err
		}
		return append(dst, src...), nil
	case flagColumns:
	default:
		return dst, fmt.Errorf("%w: unknown flag %d", ErrCorrupt, src[0])
	}
	if d.s == nil {
		return dst, fmt.Errorf("%w: columns for a signal without a schema", ErrCorrupt)
	}
	src = src[1:]
	sent := len(src)
	if sent > math.MaxInt32 {
		// The column positions (Decoder.at) are int32s: more than
		// any limit a server sets.
		return dst, ErrTooLarge
	}
	n, k := binary.Uvarint(src)
	if k <= 0 {
		return dst, fmt.Errorf("%w: bad length", ErrCorrupt)
	}
	if n > uint64(limit) {
		return dst, ErrTooLarge
	}
	src = src[k:]
	ncols, k := binary.Uvarint(src)
	if k <= 0 || ncols > uint64(d.s.cols) {
		return dst, fmt.Errorf("%w: bad column count", ErrCorrupt)
	}
	src = src[k:]
	// The column table: the slices are cut after it, from what follows.
	last := -1
	for range ncols {
		if len(src) < 2 {
			return dst, fmt.Errorf("%w: column table cut short", ErrCorrupt)
		}
		c := int(src[0])
		l, k := binary.Uvarint(src[1:])
		if k <= 0 || c <= last || c >= d.s.cols || l == 0 {
			return dst, fmt.Errorf("%w: bad column table", ErrCorrupt)
		}
		if l > uint64(len(src)) {
			return dst, fmt.Errorf("%w: column longer than the message", ErrCorrupt)
		}
		d.present[d.npresent], d.plen[d.npresent] = uint8(c), int32(l)
		d.npresent++
		last = c
		src = src[1+k:]
	}
	for k, c := range d.present[:d.npresent] {
		l := int(d.plen[k])
		if l > len(src) {
			return dst, fmt.Errorf("%w: column %d cut short", ErrCorrupt, c)
		}
		d.cols[c], src = src[:l], src[l:]
		d.prev[c] = 0
	}
	if len(src) > 0 {
		return dst, fmt.Errorf("%w: %d bytes past the columns", ErrCorrupt, len(src))
	}
	d.st = unsafe.String(unsafe.SliceData(d.cols[colStruct]), len(d.cols[colStruct]))
	d.indexRefs()
	d.want = base + int(n)
	d.hint = base + min(int(n), growRatio*sent)
	d.room = base + min(limit, int(n)+int(n)/growthRoom)
	d.charged = base
	d.buf, d.out, d.lim = dst, dst[:base:base], base
	if d.walker != nil {
		err = d.walker(d, d.s.root, 0)
	} else {
		err = d.walk(d.s.root, 0)
	}
	dst, d.out, d.buf, d.st = d.buf[:len(d.out)], nil, nil, ""
	if err != nil {
		return dst, err
	}
	for _, i := range d.present[:d.npresent] {
		if c := d.col(i); i != colStruct && len(c) > 0 {
			return dst, fmt.Errorf("%w: column %d has %d bytes left", ErrCorrupt, i, len(c))
		}
	}
	if len(dst) != d.want {
		return dst, fmt.Errorf("%w: %d bytes, declared %d", ErrCorrupt, len(dst)-base, n)
	}
	d.vouched = d.sets.mark != markOff && d.walker == nil
	return dst, nil
}

// col returns the rest of column i, from its read position.
func (d *Decoder) col(i uint8) []byte { return d.cols[i][d.at[i]:] }

// skip advances column i's read position by m bytes, which col's
// result had.
func (d *Decoder) skip(i uint8, m int) { d.at[i] += int32(m) }

// took sets column i's read position where c, the rest of what col
// returned, starts.
func (d *Decoder) took(i uint8, c []byte) { d.at[i] = int32(len(d.cols[i]) - len(c)) }

// forget drops what Decode took from its caller: the grow function and
// the slices of src (the columns, the reference column). Held between
// messages they would pin the stream's last message, up to
// MaxEncodedLen(limit) bytes that DecoderCost does not count and that the
// caller has stopped charging (TestDecoderKeepsNoInput).
func (d *Decoder) forget() {
	d.grow, d.st, d.out, d.buf, d.refCol, d.refLen = nil, "", nil, nil, nil, nil
	for _, c := range d.present[:d.npresent] {
		d.cols[c], d.at[c] = nil, 0
	}
	d.npresent = 0
}

// indexRefs finds the values of the reference column (a value that
// cannot be parsed ends the index: the walk then refuses the column).
func (d *Decoder) indexRefs() {
	d.offs, d.loffs, d.nref, d.refCol, d.refLen = d.offs[:0], d.loffs[:0], 0, nil, nil
	d.starts, d.backs, d.backLen, d.nback = d.starts[:0], d.backs[:0], d.backLen[:0], 0
	d.childStart, d.prevRef, d.traceStarts = d.childStart[:0], 0, d.traceStarts[:0]
	if d.s.ref == 0 {
		return
	}
	col, lens := d.cols[d.s.ref], d.cols[d.s.refLen]
	d.refCol, d.refLen = col, lens
	// Each value takes at least a byte of lengths: the index never
	// needs more.
	if most := min(maxRefs, len(lens)) + 1; cap(d.offs) < most {
		d.offs, d.loffs = make([]int32, 0, most), make([]int32, 0, most)
	}
	at, lat := 0, 0
	for len(d.offs) < maxRefs && lat < len(lens) {
		l, k := uint64(lens[lat]), 1 // uvarint, its one-byte case inlined (a span id's 8)
		if l >= 0x80 {
			l, k = uvarint(lens[lat:])
		}
		if k <= 0 || l > uint64(len(col)-at) {
			break
		}
		d.offs, d.loffs = append(d.offs, int32(at)), append(d.loffs, int32(lat))
		at, lat = at+int(l), lat+k
	}
	d.offs, d.loffs = append(d.offs, int32(at)), append(d.loffs, int32(lat))
}

// charge charges output up to total bytes of this message.
func (d *Decoder) charge(total int) error {
	for d.charged < total {
		m := min(chargeStep, total-d.charged)
		if d.grow != nil {
			if err := d.grow(m); err != nil {
				return err
			}
		}
		d.charged += m
	}
	return nil
}

// more makes room for m more bytes of output after out (a slice of
// d.buf whose capacity is what may be written without calling it again),
// within the declared length: it charges the output as it grows (a
// chargeStep at a time, never the declared length alone: a reference to a
// series copies bytes the message does not carry, so its size is no
// bound) and grows d.buf's capacity at once to the hint (growRatio) or
// by doubling (its copies stay linear),
// charging the new capacity before allocating it: a message that declares
// more than it decodes to, or fails half way, holds no memory beyond its
// charge (TestDecodeChargesWhatItAllocates). It returns out with its
// new capacity: walk keeps its limit there, not in a register.
func (d *Decoder) more(out []byte, m int) ([]byte, error) {
	end := len(out) + m
	if end > d.want {
		return out, errLong
	}
	if end > cap(d.buf) {
		c := min(d.want, max(end, 2*cap(d.buf), chargeStep, d.hint))
		if c == d.want {
			c = d.room
		}
		if err := d.charge(c); err != nil {
			// The room is for the stream's next messages: a message
			// that fits the budget without it is decoded, in a buffer
			// of what was charged (TestReviewRoomNeverRefuses).
			if c <= d.want || d.charge(d.want) != nil {
				return out, err
			}
			c = d.charged
		}
		nb := make([]byte, len(out), c)
		copy(nb, out)
		d.buf = nb
	}
	if end > d.charged {
		if err := d.charge(min(d.want, max(end, d.charged+chargeStep))); err != nil {
			return out, err
		}
	}
	return d.buf[:len(out):min(d.charged, cap(d.buf))], nil
}

// growthRoom: a buffer grown to a message's declared length gets
// 1/growthRoom more (compression.StreamDecoder.DecodeMessage's growthRoom
// alike), as a stream's requests differ by a few percent.
const growthRoom = 8

var (
	errCut     = fmt.Errorf("%w: a column ends inside a value", ErrCorrupt)
	errLong    = fmt.Errorf("%w: output longer than declared", ErrCorrupt)
	errTag     = fmt.Errorf("%w: bad tag", ErrCorrupt)
	errEnd     = fmt.Errorf("%w: structure ends inside a message", ErrCorrupt)
	errTopEnd  = fmt.Errorf("%w: end of a message at the top", ErrCorrupt)
	errSize    = fmt.Errorf("%w: bad length size", ErrCorrupt)
	errFit     = fmt.Errorf("%w: a length does not fit its size", ErrCorrupt)
	errRef     = fmt.Errorf("%w: a reference out of its column", ErrCorrupt)
	errWire    = fmt.Errorf("%w: bad wire type", ErrCorrupt)
	errTooDeep = fmt.Errorf("%w: nested deeper than %d", ErrCorrupt, maxDepth)
)

// uvarint is binary.Uvarint, its loop unrolled for the varints of up to
// five bytes that timestamps' differences and lengths are (Uvarint's loop
// took 80 instructions for a span's start or end): a longer one, or one
// too near the end of b, is Uvarint's (TestUvarintSameAsBinary).
func uvarint(b []byte) (uint64, int) {
	if len(b) < 5 {
		if len(b) > 0 && b[0] < 0x80 {
			return uint64(b[0]), 1
		}
		return binary.Uvarint(b)
	}
	x := uint64(b[0])
	if x < 0x80 {
		return x, 1
	}
	y := uint64(b[1])
	x = x&0x7f | y<<7
	if y < 0x80 {
		return x, 2
	}
	y = uint64(b[2])
	x = x&(1<<14-1) | y<<14
	if y < 0x80 {
		return x, 3
	}
	y = uint64(b[3])
	x = x&(1<<21-1) | y<<21
	if y < 0x80 {
		return x, 4
	}
	y = uint64(b[4])
	x = x&(1<<28-1) | y<<28
	if y < 0x80 {
		return x, 5
	}
	return binary.Uvarint(b)
}

// varintLen returns the length of the varint at the start of b, or 0.
func varintLen(b []byte) int {
	for i := 0; i < len(b) && i < binary.MaxVarintLen64; i++ {
		if b[i] < 0x80 {
			return i + 1
		}
	}
	return 0
}

// walkFrame is what walk keeps of a message beside its position: read
// and written a few times a message, it lives in memory, so that the
// registers hold what every field uses (the structure, the output and its
// limit: with these too, the loop spilled and reloaded a score of values
// at each field, half of the decoder's instructions).
type walkFrame struct {
	start     uint64 // the message's kStart
	parent    int    // the ordinal of the parent span, when its start is known
	sameTrace int    // the kBack ordinal of the last span of its trace
	forward   int    // the ordinal of the parent span, when it comes later
	run       int    // where the run of n.series fields being rebuilt starts in out
	runIdx    int    // which of n.series it is
	bucket    uint8  // the bucket of the node's ctxSet field
}

// walk rebuilds the fields of a message of node n from the structure and
// the columns: with the node's generated walk (walk_gen.go), or with
// interp.
func (d *Decoder) walk(n *node, depth int) error {
	if n.gen != nil && !d.interpOnly {
		var err error
		d.st, d.out, err = n.gen(d, n, depth, d.st, d.out)
		return err
	}
	return d.interp(n, depth)
}

// newFrame is a message's walkFrame before its first field.
func newFrame() walkFrame { return walkFrame{parent: -1, sameTrace: -1, forward: -1, run: -1} }

// interp is walk by the schema's tables, for any node: the generated walks
// hand it the rest of a message at a field they do not name
// (walkFrom), and the tests hold them to it (FuzzGenSame).
func (d *Decoder) interp(n *node, depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	return d.walkFrom(n, depth, newFrame())
}

// walkFrom rebuilds the rest of a message of node n from the structure
// and the columns, its frame so far fr. The output stays within d.want
// (dst's capacity covers it), so each write is a bounds check and a copy.
// A one-byte tag's field is found in n.ops, a longer tag's by opOf.
//
// It keeps none of the generated walks' per-item state: a message it
// walks any of is not vouched for (Vouched).
func (d *Decoder) walkFrom(n *node, depth int, fr walkFrame) error {
	d.off()
	st, out := d.st, d.out
	var err error
	var slow op
loop:
	for {
		if fr.run >= 0 && (len(st) == 0 || st[0] != n.series[fr.runIdx]<<3|2) {
			// The run ends (a field of another number, or a tag of
			// more than a byte: the encoder's runs hold minimal tags
			// only if the message's do, and any other tag ends it).
			d.sets.add(out[fr.run:])
			fr.run = -1
		}
		if len(st) == 0 {
			if depth > 0 {
				err = errEnd
			}
			break loop
		}
		var p *op
		k := 1
		if b := st[0]; b < 0x80 {
			if b == 0 {
				if depth == 0 {
					err = errTopEnd
					break loop
				}
				st = st[1:]
				break loop
			}
			p = &n.ops[b]
			if p.flags&opMarker != 0 {
				if out, err = d.seriesRef(n, &fr, int(p.series), out); err != nil {
					break loop
				}
				st = st[1:]
				continue
			}
			if p.flags&opRun != 0 && fr.run < 0 {
				fr.run, fr.runIdx = len(out), int(p.series)
			}
		} else {
			var tag uint64
			if tag, k = binary.Uvarint(unsafe.Slice(unsafe.StringData(st), len(st))); k <= 0 || tag>>3 == 0 || tag>>3 > 1<<29-1 {
				err = errTag
				break loop
			}
			slow = opOf(n, tag)
			p = &slow
		}
		if len(out)+k > cap(out) {
			if out, err = d.more(out, k); err != nil {
				break loop
			}
		}
		if k == 1 {
			out = append(out, st[0])
		} else {
			out = append(out, st[:k]...)
		}
		st = st[k:]
		col := p.col
		if p.flags&opSpread != 0 {
			col += fr.bucket
		}
		switch p.wt {
		case 0:
			c := d.col(col)
			m := varintLen(c)
			if m == 0 {
				err = errCut
				break loop
			}
			if len(out)+m > cap(out) {
				if out, err = d.more(out, m); err != nil {
					break loop
				}
			}
			out = appendShort(out, c[:m])
			d.skip(col, m)
		case 1:
			var v uint64
			c := d.col(col)
			switch kd := p.kind; kd {
			case kTime, kStart, kEnd:
				// uvarint by hand: inlined, where a call makes
				// the loop spill what it keeps in registers.
				x, m := uint64(0), 1
				if len(c) > 0 && c[0] < 0x80 {
					x = uint64(c[0])
				} else {
					x, m = uvarint(c)
				}
				if m <= 0 {
					err = errCut
					break loop
				}
				d.skip(col, m)
				if kd == kEnd {
					v = fr.start + x
				} else {
					v = d.startOf(&fr, kd, col, x)
				}
			case kDouble:
				if len(c) < 8 {
					err = errCut
					break loop
				}
				v = binary.BigEndian.Uint64(c) ^ d.prev[col]
				d.prev[col] = v
				d.skip(col, 8)
			default:
				if len(c) < 8 {
					err = errCut
					break loop
				}
				v = binary.LittleEndian.Uint64(c)
				d.skip(col, 8)
			}
			if len(out)+8 > cap(out) {
				if out, err = d.more(out, 8); err != nil {
					break loop
				}
			}
			out = binary.LittleEndian.AppendUint64(out, v)
		case 5:
			c := d.col(col)
			if len(c) < 4 {
				err = errCut
				break loop
			}
			if len(out)+4 > cap(out) {
				if out, err = d.more(out, 4); err != nil {
					break loop
				}
			}
			out = binary.LittleEndian.AppendUint32(out, binary.LittleEndian.Uint32(c))
			d.skip(col, 4)
		case 2:
			switch p.kind {
			case kMsg:
				if len(st) == 0 || st[0] == 0 || st[0] > binary.MaxVarintLen64 {
					err = errSize
					break loop
				}
				size := int(st[0])
				st = st[1:]
				if len(out)+size > cap(out) {
					if out, err = d.more(out, size); err != nil {
						break loop
					}
				}
				at := len(out)
				out = out[:at+size]
				child := p.child
				if p.flags&opCtxUse != 0 {
					child = n.byCtx[fr.bucket]
				}
				d.st, d.out = st, out
				if err = d.walk(child, depth+1); err != nil {
					return err
				}
				st, out = d.st, d.out
				l := uint64(len(out) - at - size)
				if size < binary.MaxVarintLen64 && l>>(7*size) != 0 {
					err = errFit
					break loop
				}
				b := out[at : at+size]
				for i := range size - 1 {
					b[i] = byte(l) | 0x80
					l >>= 7
				}
				b[size-1] = byte(l)
				continue
			case kBack:
				if out, err = d.back(&fr, col, out); err != nil {
					break loop
				}
				continue
			case kRef:
				var done bool
				if out, done, err = d.ref(&fr, col, out); err != nil {
					break loop
				}
				if done {
					continue
				}
			case kID:
				c, lc := d.col(col), d.col(p.lcol)
				l, m := uint64(0), 1 // uvarint, inlined
				if len(lc) > 0 && lc[0] < 0x80 {
					l = uint64(lc[0])
				} else {
					l, m = uvarint(lc)
				}
				if m <= 0 || l > uint64(len(c)) {
					err = errCut
					break loop
				}
				if len(out)+m+int(l) > cap(out) {
					if out, err = d.more(out, m+int(l)); err != nil {
						break loop
					}
				}
				out = appendShort(appendShort(out, lc[:m]), c[:l])
				d.skip(p.lcol, m)
				d.skip(col, int(l))
				if col == d.s.ref {
					d.nref++
				}
				continue
			}
			c := d.col(col)
			l, m := uint64(0), 1 // uvarint, inlined
			if len(c) > 0 && c[0] < 0x80 {
				l = uint64(c[0])
			} else {
				l, m = uvarint(c)
			}
			if m <= 0 || l > uint64(len(c)-m) {
				err = errCut
				break loop
			}
			e := m + int(l)
			if len(out)+e > cap(out) {
				if out, err = d.more(out, e); err != nil {
					break loop
				}
			}
			if p.flags&opCtxSet != 0 {
				fr.bucket = keyBucket(c[m:e])
			}
			out = append(out, c[:e]...)
			d.skip(col, e)
		default:
			err = errWire
			break loop
		}
	}
	d.st, d.out = st, out
	return err
}

// appendShort is append(out, b...) for the values of a few bytes that
// most fields are (a varint, a span id), without a call to memmove: a
// call makes walk spill every value it keeps in registers. The caller has
// made room (len(out)+len(b) <= cap(out)).
func appendShort(out, b []byte) []byte {
	switch len(b) {
	case 1:
		return append(out, b[0])
	case 8:
		return binary.LittleEndian.AppendUint64(out, binary.LittleEndian.Uint64(b))
	case 16:
		return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(out, binary.LittleEndian.Uint64(b)), binary.LittleEndian.Uint64(b[8:]))
	}
	return append(out, b...)
}

// seriesRef rebuilds a reference to a run of n's series field i
// (seriesRef in the structure).
func (d *Decoder) seriesRef(n *node, fr *walkFrame, i int, out []byte) ([]byte, error) {
	return d.seriesRefOf(n.seriesCol[i], n.series[i]<<3|2, n.byCtx != nil && n.series[i] == n.ctxSet, fr, out)
}

// seriesRefOf is seriesRef of a series field whose runs are in column
// scol, its tag tag, and whose last value sets the bucket (ctx): the
// generated walks pass the tag and ctx as constants of their node's shape
// (shapeOf), the column from the node.
func (d *Decoder) seriesRefOf(scol uint8, tag byte, ctx bool, fr *walkFrame, out []byte) ([]byte, error) {
	v, m := uint64(0), 1 // uvarint, inlined
	if c := d.col(scol); len(c) > 0 && c[0] < 0x80 {
		v = uint64(c[0])
	} else {
		v, m = uvarint(c)
	}
	if m <= 0 {
		return out, errCut
	}
	d.skip(scol, m)
	id := int64(d.sets.last[scol]) + int64(unzigzag(v))
	if id < 0 || id >= int64(len(d.sets.offs)) {
		return out, errRef
	}
	set := d.sets.get(int(id))
	if set[0] != tag {
		// A run of another series field (the table is shared): the
		// encoder never refers to one (its runs are found by their
		// bytes, tag included), a hostile stream can, copying fields
		// no rule of this node saw (a number point's attributes as a
		// histogram point's explicit_bounds). Nodes whose series
		// fields have one number are alike (TestSeriesFieldsAlike).
		// About 7 instructions a reference: with back's test of a
		// place holder, BenchmarkDecode 0.8 % more (callgrind-ab.sh,
		// 1,126,306 to 1,135,143 instructions a message).
		d.off()
	}
	if len(out)+len(set) > cap(out) {
		var err error
		if out, err = d.more(out, len(set)); err != nil {
			return out, err
		}
	}
	out = append(out, set...)
	if d.sets.marked {
		d.sets.mark = max(d.sets.mark, d.sets.marks[id]) // what it was written with (Vouched)
	}
	d.sets.last[scol] = int32(id + 1)
	if ctx {
		fr.bucket = d.sets.buckets[id]
	}
	return out, nil
}

// startOf returns the time x encodes in column col (kTime, kStart) and
// records a span's start (kStart).
func (d *Decoder) startOf(fr *walkFrame, kd kind, col uint8, x uint64) uint64 {
	base, how := d.prev[col], either
	if kd == kStart && d.s.ref != 0 {
		base, how = startBase(base, d.starts, d.childStart, fr.parent, d.nref, d.traceStarts, fr.sameTrace)
	}
	v := startOf(x, base, how)
	d.prev[col] = v
	if kd == kStart {
		fr.start = v
		if d.s.ref != 0 {
			// The tables are stored back only when they grew: a
			// slice stored in the decoder is a write barrier's test
			// (and while the collector marks, its work) at every span.
			if r := d.nref - 1; r >= 0 && r < len(d.starts) {
				d.starts[r] = v
			} else {
				d.starts = recordStart(d.starts, d.nref, v)
			}
			if fr.forward >= 0 {
				d.childStart = recordChild(d.childStart, fr.forward, v)
			}
			if r := d.nback - 1; r >= 0 && r < len(d.traceStarts) {
				d.traceStarts[r] = v
			} else {
				d.traceStarts = recordStart(d.traceStarts, d.nback, v)
			}
		}
	}
	return v
}

// back rebuilds a kBack field's value from column col.
func (d *Decoder) back(fr *walkFrame, col uint8, out []byte) ([]byte, error) {
	c := d.col(col)
	v, m := uint64(0), 1 // uvarint, inlined
	if len(c) > 0 && c[0] < 0x80 {
		v = uint64(c[0])
	} else {
		v, m = uvarint(c)
	}
	if m <= 0 {
		return out, errCut
	}
	var err error
	at := len(out)
	fr.sameTrace = -1
	if v > 0 {
		o := int64(d.nback) - int64(v)
		if v > uint64(d.nback) || o >= int64(len(d.backs)) {
			return out, errRef
		}
		l := int(d.backLen[o])
		if l == 0 {
			// A place holder (a value too long to be referenced,
			// which the encoder never refers to): it would write the
			// field's tag without a value, the fields after it
			// misread by every parser.
			return out, errRef
		}
		if len(out)+l > cap(out) {
			if out, err = d.more(out, l); err != nil {
				return out, err
			}
		}
		p := int(d.backs[o])
		if l == 17 {
			// A trace id, its length byte and 16 bytes: copied
			// without a call to memmove.
			out = appendShort(append(out, out[p]), out[p+1:p+17])
		} else {
			out = append(out, out[p:p+l]...)
		}
		fr.sameTrace = int(o)
		d.skip(col, m)
	} else {
		c = c[m:]
		l, m := uvarint(c)
		if m <= 0 || l > uint64(len(c)-m) {
			return out, errCut
		}
		e := m + int(l)
		if len(out)+e > cap(out) {
			if out, err = d.more(out, e); err != nil {
				return out, err
			}
		}
		out = append(out, c[:e]...)
		d.took(col, c[e:])
	}
	if k := len(d.backs); k < maxRefs {
		raw := uint8(0) // never referenced (keyOf): a place holder keeps the ordinals the encoder's
		if r := len(out) - at; r < len(refKey{}) {
			raw = uint8(r)
		}
		if k < cap(d.backs) && k < cap(d.backLen) {
			// Resliced in place: only the lengths are stored, where
			// append stored both slices back (a write barrier's test
			// each, at every span).
			d.backs, d.backLen = d.backs[:k+1], d.backLen[:k+1]
			d.backs[k], d.backLen[k] = int32(at), raw
		} else {
			d.backs, d.backLen = append(d.backs, int32(at)), append(d.backLen, raw)
		}
	}
	d.nback++
	return out, nil
}

// ref rebuilds a kRef field's value from column col when it is a
// reference (done); otherwise the column's 0 is taken and the value
// follows in it as a kLen's.
func (d *Decoder) ref(fr *walkFrame, col uint8, out []byte) (_ []byte, done bool, err error) {
	c := d.col(col)
	v, m := uint64(0), 1 // uvarint, inlined
	if len(c) > 0 && c[0] < 0x80 {
		v = uint64(c[0])
	} else {
		v, m = uvarint(c)
	}
	if m <= 0 {
		return out, false, errCut
	}
	d.skip(col, m)
	fr.parent, fr.forward = -1, -1
	if v == 0 {
		return out, false, nil
	}
	o := int64(d.prevRef) + int64(unzigzag(v-1))
	d.prevRef = int(o)
	if o >= 0 && o < maxRefs {
		fr.parent, fr.forward = parentOf(int(o), len(d.starts), d.nref)
	}
	if o < 0 || o >= int64(len(d.offs)-1) {
		return out, false, errRef
	}
	val, vlen := d.refCol[d.offs[o]:d.offs[o+1]], d.refLen[d.loffs[o]:d.loffs[o+1]]
	if len(out)+len(vlen)+len(val) > cap(out) {
		if out, err = d.more(out, len(vlen)+len(val)); err != nil {
			return out, false, err
		}
	}
	return appendShort(appendShort(out, vlen), val), true, nil
}
