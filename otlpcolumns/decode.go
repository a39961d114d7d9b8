package otlpcolumns

import (
	"encoding/binary"
	"errors"
	"fmt"
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

// maxExpansion bounds how many bytes of message an encoding's byte
// decodes to: a reference (kRef) of two bytes (its tag in the structure
// and a one-byte ordinal) stands for at most 24 (the tag and a value of
// less than len(refKey)); a timestamp of two (tag, varint) for nine; a
// sub-message's three (tag, the size of its length, its end) for at most
// eleven. A declared length above it is a lie, refused before allocating.
const maxExpansion = 12

// Decoder rebuilds the messages an Encoder of the same signal transformed.
// It holds no state between messages but its fixed tables. Not safe for
// concurrent use.
type Decoder struct {
	s    *schema
	cols [maxCols][]byte
	prev [maxCols]uint64
	st   []byte
	out  []byte
	want int // the declared length
	// charged is how much of out has been charged to grow.
	charged int
	grow    func(int) error
	err     error
	// offs are the offsets in refCol of the reference column's values
	// (at most maxRefs+1: each value's start, then the last's end),
	// nref the values of it taken so far (Encoder.writeRefs).
	offs   []int32
	refCol []byte
	nref   int
}

// DecoderCost is the most a Decoder holds between messages, beyond its
// output: its fixed tables and its index of the reference column.
const DecoderCost = int64(unsafeSizeofDecoder + 4*(maxRefs+1))

// unsafeSizeofDecoder is about unsafe.Sizeof(Decoder{}): the column and
// previous-value tables (maxCols × (24 + 8)) and a few words.
const unsafeSizeofDecoder = maxCols*32 + 256

// NewDecoder returns a decoder for the envelopes of sig.
func NewDecoder(sig Signal) *Decoder {
	d := &Decoder{}
	if sig < Profiles && sig > 0 {
		d.s = &schemas[sig]
	}
	return d
}

// Decode appends to dst the message that src encodes. A declared length
// over limit is ErrTooLarge, and one over maxExpansion times the encoding
// (more than any encoding of that many bytes can decode to) ErrCorrupt,
// before any output; grow, if not nil, is then charged for the declared
// length (64 KiB at a time, its error returned as it is), and dst grows
// to hold it: what is charged and allocated is bounded by the bytes that
// arrived, never by a claim alone. An untransformed message (flag 0) is
// copied, under the same limit and charge.
func (d *Decoder) Decode(dst, src []byte, limit int, grow func(int) error) ([]byte, error) {
	if len(src) == 0 {
		return dst, fmt.Errorf("%w: empty message", ErrCorrupt)
	}
	d.grow, d.charged, d.err = grow, 0, nil
	defer func() { d.grow = nil }()
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
	n, k := binary.Uvarint(src)
	if k <= 0 {
		return dst, fmt.Errorf("%w: bad length", ErrCorrupt)
	}
	if n > uint64(limit) {
		return dst, ErrTooLarge
	}
	if n > maxExpansion*uint64(len(src)) {
		return dst, fmt.Errorf("%w: declares %d bytes from %d", ErrCorrupt, n, len(src))
	}
	src = src[k:]
	ncols, k := binary.Uvarint(src)
	if k <= 0 || ncols > uint64(d.s.cols) {
		return dst, fmt.Errorf("%w: bad column count", ErrCorrupt)
	}
	src = src[k:]
	for i := range d.s.cols {
		d.cols[i] = nil
		d.prev[i] = 0
	}
	// The column table: the slices are cut after it, from what follows.
	var lens [maxCols]int
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
		lens[c] = int(l)
		last = c
		src = src[1+k:]
	}
	for i := range d.s.cols {
		if lens[i] > len(src) {
			return dst, fmt.Errorf("%w: column %d cut short", ErrCorrupt, i)
		}
		d.cols[i], src = src[:lens[i]], src[lens[i]:]
	}
	if len(src) > 0 {
		return dst, fmt.Errorf("%w: %d bytes past the columns", ErrCorrupt, len(src))
	}
	d.st = d.cols[colStruct]
	d.indexRefs()
	if err := d.charge(int(n)); err != nil {
		return dst, err
	}
	if cap(dst)-base < int(n) {
		nb := make([]byte, base, base+int(n))
		copy(nb, dst)
		dst = nb
	}
	d.out = dst
	d.want = base + int(n)
	err := d.walk(d.s.root, 0)
	dst, d.out, d.st = d.out, nil, nil
	if err != nil {
		return dst, err
	}
	for i := range d.s.cols {
		if i != colStruct && len(d.cols[i]) > 0 {
			return dst, fmt.Errorf("%w: column %d has %d bytes left", ErrCorrupt, i, len(d.cols[i]))
		}
	}
	if len(dst) != d.want {
		return dst, fmt.Errorf("%w: %d bytes, declared %d", ErrCorrupt, len(dst)-base, n)
	}
	return dst, nil
}

// indexRefs finds the values of the reference column (a value that
// cannot be parsed ends the index: the walk then refuses the column).
func (d *Decoder) indexRefs() {
	d.offs, d.nref, d.refCol = d.offs[:0], 0, nil
	if d.s.ref == 0 {
		return
	}
	col := d.cols[d.s.ref]
	d.refCol = col
	// Each value takes at least a byte: the index never needs more.
	if most := min(maxRefs, len(col)) + 1; cap(d.offs) < most {
		d.offs = make([]int32, 0, most)
	}
	at := 0
	for len(d.offs) < maxRefs && at < len(col) {
		l, k := binary.Uvarint(col[at:])
		if k <= 0 || l > uint64(len(col)-at-k) {
			break
		}
		d.offs = append(d.offs, int32(at))
		at += k + int(l)
	}
	d.offs = append(d.offs, int32(at))
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

// need checks that m more bytes of output stay within the declared length
// (dst was grown to hold it, and charged for it, before the walk).
func (d *Decoder) need(m int) error {
	if len(d.out)+m > d.want {
		return fmt.Errorf("%w: output longer than declared", ErrCorrupt)
	}
	return nil
}

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

// uvarint is binary.Uvarint with a fast path for one byte.
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
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

// walk rebuilds the fields of a message of node n from the structure and
// the columns. The output stays within d.want (dst's capacity covers it),
// so each write is a bounds check and a copy.
func (d *Decoder) walk(n *node, depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	var start uint64
	var bucket uint8
	st, out, want := d.st, d.out, d.want
	var err error
loop:
	for {
		if len(st) == 0 {
			if depth > 0 {
				err = errEnd
				break loop
			}
			break loop
		}
		var tag uint64
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
			tag = uint64(b)
		} else if tag, k = binary.Uvarint(st); k <= 0 || tag>>3 == 0 || tag>>3 > 1<<29-1 {
			err = errTag
			break loop
		}
		if len(out)+k > want {
			err = errLong
			break loop
		}
		out = append(out, st[:k]...)
		st = st[k:]
		wt := uint8(tag & 7)
		num := tag >> 3
		kd, col := kOther, uint8(colOther)
		var child *node
		if num <= maxField {
			f := &n.f[num]
			if f.kind != kOther && wireOf[f.kind] == wt {
				kd, col, child = f.kind, f.col, f.child
			}
		}
		switch wt {
		case 0:
			c := d.cols[col]
			m := varintLen(c)
			if m == 0 {
				err = errCut
				break loop
			}
			if len(out)+m > want {
				err = errLong
				break loop
			}
			out = append(out, c[:m]...)
			d.cols[col] = c[m:]
		case 1:
			var v uint64
			c := d.cols[col]
			switch kd {
			case kTime, kStart, kEnd:
				x, m := uvarint(c)
				if m <= 0 {
					err = errCut
					break loop
				}
				d.cols[col] = c[m:]
				if kd == kEnd {
					v = start + unzigzag(x)
				} else {
					v = d.prev[col] + unzigzag(x)
					d.prev[col] = v
					if kd == kStart {
						start = v
					}
				}
			case kDouble:
				if len(c) < 8 {
					err = errCut
					break loop
				}
				v = binary.BigEndian.Uint64(c) ^ d.prev[col]
				d.prev[col] = v
				d.cols[col] = c[8:]
			default:
				if len(c) < 8 {
					err = errCut
					break loop
				}
				v = binary.LittleEndian.Uint64(c)
				d.cols[col] = c[8:]
			}
			if len(out)+8 > want {
				err = errLong
				break loop
			}
			out = binary.LittleEndian.AppendUint64(out, v)
		case 5:
			c := d.cols[col]
			if len(c) < 4 {
				err = errCut
				break loop
			}
			if len(out)+4 > want {
				err = errLong
				break loop
			}
			out = append(out, c[:4]...)
			d.cols[col] = c[4:]
		case 2:
			if kd == kMsg {
				if len(st) == 0 || st[0] == 0 || st[0] > binary.MaxVarintLen64 {
					err = errSize
					break loop
				}
				size := int(st[0])
				st = st[1:]
				if len(out)+size > want {
					err = errLong
					break loop
				}
				at := len(out)
				out = out[:at+size]
				if n.byCtx != nil && num == uint64(n.ctxUse) {
					child = n.byCtx[bucket]
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
			}
			c := d.cols[col]
			if kd == kRef {
				v, m := uvarint(c)
				if m <= 0 {
					err = errCut
					break loop
				}
				c = c[m:]
				d.cols[col] = c
				if v > 0 {
					o := int64(d.nref) + int64(unzigzag(v-1))
					if o < 0 || o >= int64(len(d.offs)-1) {
						err = errRef
						break loop
					}
					val := d.refCol[d.offs[o]:d.offs[o+1]]
					if len(out)+len(val) > want {
						err = errLong
						break loop
					}
					out = append(out, val...)
					continue
				}
			}
			l, m := uvarint(c)
			if m <= 0 || l > uint64(len(c)-m) {
				err = errCut
				break loop
			}
			e := m + int(l)
			if len(out)+e > want {
				err = errLong
				break loop
			}
			if n.byCtx != nil && num == uint64(n.ctxSet) && kd == kLen {
				bucket = keyBucket(c[m:e])
			}
			if col == d.s.ref && col != 0 {
				d.nref++
			}
			out = append(out, c[:e]...)
			d.cols[col] = c[e:]
		default:
			err = errWire
			break loop
		}
	}
	d.st, d.out = st, out
	return err
}
