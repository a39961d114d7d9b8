package stefreceiver

import (
	"reflect"
	"strings"
	"sync"
)

// frameMeter measures what a STEF reader's frame buffers hold.
//
// The library's reader (pkg.BaseReader.ReadBufs, v0.1.1) reads each frame
// whole into its column buffers before decoding its records: every column
// is grown to the frame's data for it (pkg.EnsureLen) and kept for the
// stream's life, so a stream holds, for each column, the largest the
// column was in any frame, whatever it sends afterwards. The string
// columns are taken by their decoders (codecs.StringDecoder,
// StringDictDecoder: ReadableColumn.BorrowData) and made anew at the next
// frame, and the strings decoded from them point into them
// (BytesReader.ReadStringMapped): an entry a frame adds to a dictionary
// keeps that frame's string column, as large as the frame made it, for as
// long as the dictionary keeps the entry. None of this is exposed, or
// bounded but by the frame's size (pkg.FrameSizeLimit, 64 MiB, which
// zstd makes a few KB on the wire when the columns repeat). So the meter
// finds the buffers with reflect once, as the reader is made, and sums
// their capacities when asked (a few hundred slice headers read).
//
// A reader whose layout the meter does not know (a newer library) makes
// newFrameMeter return nil, and the stream refuses to be served
// (TestFrameMeterKnowsTheReaders keeps it known).
type frameMeter struct {
	// cols are the reader's column buffers and its column-size buffer:
	// kept, each at its largest.
	cols []*[]byte
	// strs are the string decoders' buffers: the current frame's string
	// columns, made anew at each frame.
	strs []*[]byte
}

// newFrameMeter returns the meter of a *otelstef.MetricsReader or
// *otelstef.SpansReader, or nil if its buffers cannot be found.
func newFrameMeter(reader any) *frameMeter {
	v := reflect.ValueOf(reader)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	r := v.Elem()
	bufs := field(field(r, "base"), "ReadBufs")
	if !bufs.IsValid() {
		return nil
	}
	m := &frameMeter{}
	tmp := field(bufs, "tempBufBytes")
	if !isBytes(tmp) {
		return nil
	}
	m.cols = append(m.cols, bytesAt(tmp))
	if !m.addColumns(field(bufs, "Columns"), 0) {
		return nil
	}
	dec := field(r, "decoder")
	if !dec.IsValid() || dec.Kind() != reflect.Struct {
		return nil
	}
	m.addStringDecoders(dec, map[uintptr]bool{}, 0)
	if len(m.strs) == 0 {
		return nil
	}
	return m
}

// maxColumnDepth bounds the walks of the column and decoder trees, which
// the schema makes as deep as its structs nest (a few levels); a cycle
// is followed no further than this.
const maxColumnDepth = 64

// addColumns adds a pkg.ReadColumnSet's column buffer and its
// sub-columns'. The fields are found by name in the first set and by
// index in the others (every set is a pkg.ReadColumnSet): a name lookup
// per set was most of a stream's start.
func (m *frameMeter) addColumns(set reflect.Value, depth int) bool {
	if !set.IsValid() || set.Kind() != reflect.Struct {
		return false
	}
	col, ok := set.Type().FieldByName("column")
	if !ok || col.Type.Kind() != reflect.Struct {
		return false
	}
	data, ok := col.Type.FieldByName("data")
	if !ok {
		return false
	}
	subs, ok := set.Type().FieldByName("subColumns")
	if !ok || len(col.Index) != 1 || len(data.Index) != 1 || len(subs.Index) != 1 {
		return false
	}
	c := columnFields{set.Type(), col.Index[0], data.Index[0], subs.Index[0]}
	return m.addColumnSet(set, c, depth)
}

// columnFields are the indices of a pkg.ReadColumnSet's fields.
type columnFields struct {
	typ                reflect.Type
	column, data, subs int
}

func (m *frameMeter) addColumnSet(set reflect.Value, c columnFields, depth int) bool {
	if depth > maxColumnDepth || set.Type() != c.typ {
		return false
	}
	data := set.Field(c.column).Field(c.data)
	if !isBytes(data) {
		return false
	}
	m.cols = append(m.cols, bytesAt(data))
	subs := set.Field(c.subs)
	if subs.Kind() != reflect.Slice {
		return false
	}
	for i := range subs.Len() {
		sub := subs.Index(i)
		if sub.Kind() != reflect.Pointer || sub.IsNil() || !m.addColumnSet(sub.Elem(), c, depth+1) {
			return false
		}
	}
	return true
}

// addStringDecoders adds the buffers of the string decoders reachable
// from the decoder d (a struct value), following the pointers to other
// decoders once each.
func (m *frameMeter) addStringDecoders(d reflect.Value, seen map[uintptr]bool, depth int) {
	if depth > maxColumnDepth {
		return
	}
	fs := decoderFieldsOf(d.Type())
	if fs.str {
		if buf := d.Field(fs.buf[0]).Field(fs.buf[1]); isBytes(buf) {
			m.strs = append(m.strs, bytesAt(buf))
		}
		return
	}
	for _, i := range fs.structs {
		m.addStringDecoders(d.Field(i), seen, depth+1)
	}
	for _, i := range fs.ptrs {
		f := d.Field(i)
		if f.IsNil() {
			continue
		}
		if p := f.Pointer(); !seen[p] {
			seen[p] = true
			m.addStringDecoders(f.Elem(), seen, depth+1)
		}
	}
}

// decoderFields is what addStringDecoders walks of a decoder type: the
// string decoders' buffer (str: its field's and the BytesReader's
// bytes' indices), or the fields that are decoders (structs) or point to
// them.
type decoderFields struct {
	str     bool
	buf     [2]int
	structs []int
	ptrs    []int
}

// decoderTypes caches decoderFields by type: a name lookup per field per
// stream was most of a stream's start.
var decoderTypes sync.Map // reflect.Type -> *decoderFields

func decoderFieldsOf(t reflect.Type) *decoderFields {
	if v, ok := decoderTypes.Load(t); ok {
		return v.(*decoderFields)
	}
	fs := &decoderFields{}
	switch t.Name() {
	case "StringDecoder", "StringDictDecoder":
		if b, ok := t.FieldByName("buf"); ok && len(b.Index) == 1 && b.Type.Kind() == reflect.Struct {
			if bb, ok := b.Type.FieldByName("buf"); ok && len(bb.Index) == 1 {
				fs.str, fs.buf = true, [2]int{b.Index[0], bb.Index[0]}
			}
		}
	default:
		for i := range t.NumField() {
			f := t.Field(i).Type
			switch {
			case f.Kind() == reflect.Struct && strings.HasSuffix(f.Name(), "Decoder"):
				fs.structs = append(fs.structs, i)
			case f.Kind() == reflect.Pointer && f.Elem().Kind() == reflect.Struct && strings.HasSuffix(f.Elem().Name(), "Decoder"):
				fs.ptrs = append(fs.ptrs, i)
			}
		}
	}
	decoderTypes.Store(t, fs)
	return fs
}

// field returns v's field name, or the zero Value when v is not a struct
// or has none.
func field(v reflect.Value, name string) reflect.Value {
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.FieldByName(name)
}

func isBytes(v reflect.Value) bool {
	return v.IsValid() && v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 && v.CanAddr()
}

// bytesAt returns a pointer to the []byte v is (v addressable): read
// later, it sees what the reader made of it since.
func bytesAt(v reflect.Value) *[]byte {
	return (*[]byte)(v.Addr().UnsafePointer())
}

// resident returns what the column buffers and the current frame's string
// columns hold.
func (m *frameMeter) resident() int64 {
	return m.columns() + m.strings()
}

// columns returns what the column buffers hold.
func (m *frameMeter) columns() int64 {
	var n int64
	for _, b := range m.cols {
		n += int64(cap(*b))
	}
	return n
}

// strings returns what the current frame's string columns hold.
func (m *frameMeter) strings() int64 {
	var n int64
	for _, b := range m.strs {
		n += int64(cap(*b))
	}
	return n
}
