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

// chargeStep is how much output is charged at a time: the charge follows
// the output produced, never the declared length alone.
const chargeStep = 64 << 10

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
}

// NewDecoder returns a decoder for the envelopes of sig.
func NewDecoder(sig Signal) *Decoder {
	d := &Decoder{}
	if sig < Profiles && sig > 0 {
		d.s = &schemas[sig]
	}
	return d
}

// Decode appends to dst the message that src encodes. A declared length
// over limit is ErrTooLarge, before any output; the output is at most
// limit bytes, and grow, if not nil, is charged for it as it is produced
// (64 KiB at a time), its error returned as it is. An untransformed
// message (flag 0) is copied, under the same limit and charge.
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
	d.out = dst
	d.want = base + int(n)
	err := d.walk(d.s.root, 0)
	dst, d.out = d.out, nil
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

// need makes room for m more bytes of output, within the declared length,
// charging it as it grows.
func (d *Decoder) need(m int) error {
	end := len(d.out) + m
	if end > d.want {
		return fmt.Errorf("%w: output longer than declared", ErrCorrupt)
	}
	if end > d.charged {
		if err := d.charge(min(d.want, max(end, d.charged+chargeStep))); err != nil {
			return err
		}
	}
	if end > cap(d.out) {
		nb := make([]byte, len(d.out), min(d.want, max(end, 2*cap(d.out))))
		copy(nb, d.out)
		d.out = nb
	}
	return nil
}

var errCut = fmt.Errorf("%w: a column ends inside a value", ErrCorrupt)

// varintLen returns the length of the varint at the start of b, or 0.
func varintLen(b []byte) int {
	for i := 0; i < len(b) && i < binary.MaxVarintLen64; i++ {
		if b[i] < 0x80 {
			return i + 1
		}
	}
	return 0
}

// take moves m bytes of column c to the output.
func (d *Decoder) take(c uint8, m int) error {
	col := d.cols[c]
	if m > len(col) {
		return errCut
	}
	if err := d.need(m); err != nil {
		return err
	}
	d.out = append(d.out, col[:m]...)
	d.cols[c] = col[m:]
	return nil
}

func (d *Decoder) walk(n *node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrCorrupt, maxDepth)
	}
	var start uint64
	for {
		if len(d.st) == 0 {
			if depth > 0 {
				return fmt.Errorf("%w: structure ends inside a message", ErrCorrupt)
			}
			return nil
		}
		if d.st[0] == 0 {
			if depth == 0 {
				return fmt.Errorf("%w: end of a message at the top", ErrCorrupt)
			}
			d.st = d.st[1:]
			return nil
		}
		tag, k := binary.Uvarint(d.st)
		if k <= 0 || tag>>3 == 0 || tag>>3 > 1<<29-1 {
			return fmt.Errorf("%w: bad tag", ErrCorrupt)
		}
		if err := d.need(k); err != nil {
			return err
		}
		d.out = append(d.out, d.st[:k]...)
		d.st = d.st[k:]
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
		var err error
		switch wt {
		case 0:
			m := varintLen(d.cols[f.col])
			if m == 0 {
				return errCut
			}
			err = d.take(f.col, m)
		case 1:
			var v uint64
			c := d.cols[f.col]
			switch f.kind {
			case kTime, kStart, kEnd:
				x, m := binary.Uvarint(c)
				if m <= 0 {
					return errCut
				}
				d.cols[f.col] = c[m:]
				if f.kind == kEnd {
					v = start + unzigzag(x)
				} else {
					v = d.prev[f.col] + unzigzag(x)
					d.prev[f.col] = v
					if f.kind == kStart {
						start = v
					}
				}
			case kDouble:
				if len(c) < 8 {
					return errCut
				}
				v = binary.BigEndian.Uint64(c) ^ d.prev[f.col]
				d.prev[f.col] = v
				d.cols[f.col] = c[8:]
			default:
				if len(c) < 8 {
					return errCut
				}
				v = binary.LittleEndian.Uint64(c)
				d.cols[f.col] = c[8:]
			}
			if err = d.need(8); err == nil {
				d.out = binary.LittleEndian.AppendUint64(d.out, v)
			}
		case 5:
			err = d.take(f.col, 4)
		case 2:
			if f.kind == kMsg {
				if len(d.st) == 0 || d.st[0] == 0 || d.st[0] > binary.MaxVarintLen64 {
					return fmt.Errorf("%w: bad length size", ErrCorrupt)
				}
				size := int(d.st[0])
				d.st = d.st[1:]
				if err := d.need(size); err != nil {
					return err
				}
				at := len(d.out)
				d.out = d.out[:at+size]
				if err := d.walk(f.child, depth+1); err != nil {
					return err
				}
				l := uint64(len(d.out) - at - size)
				if size < binary.MaxVarintLen64 && l>>(7*size) != 0 {
					return fmt.Errorf("%w: a length does not fit its size", ErrCorrupt)
				}
				b := d.out[at : at+size]
				for i := range size - 1 {
					b[i] = byte(l) | 0x80
					l >>= 7
				}
				b[size-1] = byte(l)
			} else {
				l, m := binary.Uvarint(d.cols[f.col])
				if m <= 0 || l > uint64(len(d.cols[f.col])-m) {
					return errCut
				}
				err = d.take(f.col, m+int(l))
			}
		default:
			return fmt.Errorf("%w: bad wire type %d", ErrCorrupt, wt)
		}
		if err != nil {
			return err
		}
	}
}
