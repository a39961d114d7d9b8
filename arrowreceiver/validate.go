//go:build otelarrow

package arrowreceiver

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// validate checks an array's data before otel-arrow's conversion reads it:
// arrow-go's IPC reader takes every array's length and offsets as the
// message declares them, and the conversion sizes pdata slices by them (a
// list declaring two billion bucket bounds made it reserve 16 GB, found by
// mutating producer output). Checked here, every length is backed by the
// bytes of its buffers (which the allocator bounds), every offset stays
// within the data it indexes, and every dictionary index within its
// dictionary, so what the conversion makes is proportional to what
// arrived. Types otel-arrow does not write are refused.
func validate(d arrow.ArrayData, maxRows int64, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("arrays nested more than %d deep", maxSchemaDepth)
	}
	off, n := int64(d.Offset()), int64(d.Len())
	if off < 0 || n < 0 {
		return fmt.Errorf("array of length %d at offset %d", n, off)
	}
	end := off + n
	bufs := d.Buffers()
	buf := func(i int) int64 {
		if i < len(bufs) && bufs[i] != nil {
			return int64(bufs[i].Len())
		}
		return 0
	}
	if n > 0 && len(bufs) > 0 && bufs[0] != nil && buf(0)*8 < end {
		return fmt.Errorf("validity bitmap of %d bytes for %d values", buf(0), end)
	}
	switch t := d.DataType().(type) {
	case *arrow.NullType:
		if n > maxRows {
			return fmt.Errorf("null array of %d values, more than %d", n, maxRows)
		}
	case *arrow.DictionaryType:
		w, ok := t.IndexType.(arrow.FixedWidthDataType)
		if !ok || n > 0 && buf(1)*8 < end*int64(w.BitWidth()) {
			return fmt.Errorf("dictionary indexes of %d bytes for %d values", buf(1), end)
		}
		dict := d.Dictionary()
		if dict == nil {
			return fmt.Errorf("dictionary array without its dictionary")
		}
		if err := validate(dict, maxRows, depth+1); err != nil {
			return err
		}
		var valid []byte
		if bufs[0] != nil {
			valid = bufs[0].Bytes()
		}
		if err := indexesWithin(bufs[1], valid, w.BitWidth(), off, end, int64(dict.Len())); err != nil {
			return err
		}
	case arrow.FixedWidthDataType:
		if n > 0 && buf(1)*8 < end*int64(t.BitWidth()) {
			return fmt.Errorf("%v values of %d bytes for %d values", t, buf(1), end)
		}
	case *arrow.StringType, *arrow.BinaryType:
		return offsetsWithin(bufs, 4, off, end, buf(2))
	case *arrow.LargeStringType, *arrow.LargeBinaryType:
		return offsetsWithin(bufs, 8, off, end, buf(2))
	case *arrow.ListType, *arrow.MapType:
		c := d.Children()
		if len(c) != 1 {
			return fmt.Errorf("list without its values")
		}
		if err := offsetsWithin(bufs, 4, off, end, int64(c[0].Len())); err != nil {
			return err
		}
		return validate(c[0], maxRows, depth+1)
	case *arrow.LargeListType:
		c := d.Children()
		if len(c) != 1 {
			return fmt.Errorf("list without its values")
		}
		if err := offsetsWithin(bufs, 8, off, end, int64(c[0].Len())); err != nil {
			return err
		}
		return validate(c[0], maxRows, depth+1)
	case *arrow.FixedSizeListType:
		c := d.Children()
		if len(c) != 1 || int64(c[0].Len()) < end*int64(t.Len()) {
			return fmt.Errorf("fixed-size list without its values")
		}
		return validate(c[0], maxRows, depth+1)
	case *arrow.StructType:
		for _, c := range d.Children() {
			if int64(c.Len()) < end {
				return fmt.Errorf("struct field of %d values for %d", c.Len(), end)
			}
			if err := validate(c, maxRows, depth+1); err != nil {
				return err
			}
		}
	case *arrow.SparseUnionType:
		if n > 0 && buf(1) < end {
			return fmt.Errorf("union type ids of %d bytes for %d values", buf(1), end)
		}
		for _, c := range d.Children() {
			if int64(c.Len()) < end {
				return fmt.Errorf("union field of %d values for %d", c.Len(), end)
			}
			if err := validate(c, maxRows, depth+1); err != nil {
				return err
			}
		}
	case *arrow.DenseUnionType:
		if n > 0 && (buf(1) < end || buf(2) < end*4) {
			return fmt.Errorf("dense union of %d values without its type ids and offsets", end)
		}
		for _, c := range d.Children() {
			if err := validate(c, maxRows, depth+1); err != nil {
				return err
			}
		}
		ids, offs := bufs[1].Bytes(), bufs[2].Bytes()
		children := d.Children()
		codes := t.TypeCodes()
		for i := off; i < end; i++ {
			k := -1
			for j, code := range codes {
				if int8(ids[i]) == int8(code) {
					k = j
				}
			}
			if k < 0 || k >= len(children) {
				return fmt.Errorf("dense union type id %d not of its type", int8(ids[i]))
			}
			if o := int64(int32(binary.LittleEndian.Uint32(offs[4*i:]))); o < 0 || o >= int64(children[k].Len()) {
				return fmt.Errorf("dense union offset %d past its field's %d values", o, children[k].Len())
			}
		}
	default:
		return fmt.Errorf("arrays of type %v are not part of OTel-Arrow", d.DataType())
	}
	return nil
}

// offsetsWithin checks the offsets of values off..end (each w bytes) of a
// binary or list array: present, non-decreasing, within limit.
func offsetsWithin(bufs []*memory.Buffer, w int, off, end, limit int64) error {
	if end == 0 {
		return nil
	}
	if len(bufs) < 2 || bufs[1] == nil || int64(bufs[1].Len()) < (end+1)*int64(w) {
		return fmt.Errorf("offsets missing for %d values", end)
	}
	b := bufs[1].Bytes()
	prev := int64(-1)
	for i := off; i <= end; i++ {
		var o int64
		if w == 4 {
			o = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		} else {
			o = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
		if o < prev || o < 0 || o > limit {
			return fmt.Errorf("offset %d out of order or past the %d values it indexes", o, limit)
		}
		prev = o
	}
	return nil
}

// indexesWithin checks the dictionary indexes off..end (w bits each,
// signed or not) of the values that are not null (valid: the validity
// bitmap, nil when none is) against the dictionary's length. A null's
// index is undefined (the producer writes 0 into an empty dictionary).
func indexesWithin(b *memory.Buffer, valid []byte, w int, off, end, dictLen int64) error {
	if end == 0 {
		return nil
	}
	bs := b.Bytes()
	for i := off; i < end; i++ {
		if valid != nil && valid[i>>3]&(1<<(i&7)) == 0 {
			continue
		}
		var x uint64
		switch w {
		case 8:
			x = uint64(bs[i])
		case 16:
			x = uint64(binary.LittleEndian.Uint16(bs[2*i:]))
		case 32:
			x = uint64(binary.LittleEndian.Uint32(bs[4*i:]))
		case 64:
			x = binary.LittleEndian.Uint64(bs[8*i:])
		default:
			return fmt.Errorf("dictionary index of %d bits", w)
		}
		if x >= uint64(dictLen) {
			return fmt.Errorf("dictionary index %d past its %d values", x, dictLen)
		}
	}
	return nil
}
