package stefreceiver

import (
	"reflect"
	"strings"
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
// sub-columns'.
func (m *frameMeter) addColumns(set reflect.Value, depth int) bool {
	if depth > maxColumnDepth || !set.IsValid() || set.Kind() != reflect.Struct {
		return false
	}
	data := field(field(set, "column"), "data")
	if !isBytes(data) {
		return false
	}
	m.cols = append(m.cols, bytesAt(data))
	subs := field(set, "subColumns")
	if !subs.IsValid() || subs.Kind() != reflect.Slice {
		return false
	}
	for i := range subs.Len() {
		sub := subs.Index(i)
		if sub.Kind() != reflect.Pointer || sub.IsNil() || !m.addColumns(sub.Elem(), depth+1) {
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
	switch d.Type().Name() {
	case "StringDecoder", "StringDictDecoder":
		if buf := field(field(d, "buf"), "buf"); isBytes(buf) {
			m.strs = append(m.strs, bytesAt(buf))
		}
		return
	}
	for i := range d.NumField() {
		f := d.Field(i)
		switch {
		case f.Kind() == reflect.Struct && strings.HasSuffix(f.Type().Name(), "Decoder"):
			m.addStringDecoders(f, seen, depth+1)
		case f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.Struct &&
			strings.HasSuffix(f.Type().Elem().Name(), "Decoder"):
			if p := f.Pointer(); !seen[p] {
				seen[p] = true
				m.addStringDecoders(f.Elem(), seen, depth+1)
			}
		}
	}
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
