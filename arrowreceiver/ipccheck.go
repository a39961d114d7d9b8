//go:build otelarrow

package arrowreceiver

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// checkIPC walks the Arrow IPC stream messages of one payload's record
// (each: an optional 0xFFFFFFFF continuation, the metadata's int32 length,
// the Message flatbuffer, then its body of the bodyLength the flatbuffer
// declares) and refuses a message whose metadata or body would end past
// the record's bytes.
//
// The reason: arrow-go's IPC reader makes the metadata buffer of the
// length the message declares (up to 2 GiB, outside any allocator) before
// it finds the bytes missing, and sizes the body through the allocator
// before reading it. Both are declared by the client; checked here, a
// message costs at most the bytes that arrived (already charged with the
// message), whatever it declares.
func checkIPC(b []byte) error {
	pos := 0
	for len(b)-pos >= 4 {
		n := int64(int32(binary.LittleEndian.Uint32(b[pos:])))
		pos += 4
		if n == 0 {
			return nil // end of stream
		}
		if n == -1 { // continuation token: the length follows
			if len(b)-pos < 4 {
				return fmt.Errorf("cannot decode Arrow IPC message at byte %d: truncated length", pos)
			}
			n = int64(int32(binary.LittleEndian.Uint32(b[pos:])))
			pos += 4
			if n == 0 {
				return nil
			}
		}
		if n < 0 || n > int64(len(b)-pos) {
			return fmt.Errorf("cannot decode Arrow IPC message at byte %d: metadata of %d bytes in a record of %d", pos, n, len(b))
		}
		body, ok := bodyLength(b[pos : pos+int(n)])
		if !ok {
			return fmt.Errorf("cannot decode Arrow IPC message at byte %d: bad Message flatbuffer", pos)
		}
		meta := b[pos : pos+int(n)]
		pos += int(n)
		if body < 0 || body > int64(len(b)-pos) {
			return fmt.Errorf("cannot decode Arrow IPC message at byte %d: body of %d bytes in a record of %d", pos, body, len(b))
		}
		if err := checkMessage(meta, b[pos:pos+int(body)]); err != nil {
			return fmt.Errorf("cannot decode Arrow IPC message at byte %d: %w", pos-int(n), err)
		}
		pos += int(body)
	}
	return nil
}

// bodyLength reads Message.bodyLength (field 3, an int64; Arrow's
// format/Message.fbs) from a Message flatbuffer, bounds-checked: the root
// table's offset, its vtable, the field's slot.
func bodyLength(fb []byte) (int64, bool) {
	if len(fb) < 8 {
		return 0, false
	}
	table := int64(binary.LittleEndian.Uint32(fb))
	if table+4 > int64(len(fb)) {
		return 0, false
	}
	vtable := table - int64(int32(binary.LittleEndian.Uint32(fb[table:])))
	if vtable < 0 || vtable+4 > int64(len(fb)) {
		return 0, false
	}
	vsize := int64(binary.LittleEndian.Uint16(fb[vtable:]))
	const slot = 4 + 2*3 // the vtable's header, then field 3's offset
	// Present when its slot starts within the vtable's declared size,
	// as the flatbuffers library reads it (even an odd size).
	if vsize <= slot {
		return 0, true // absent: the default, 0
	}
	if vtable+slot+2 > int64(len(fb)) {
		return 0, false
	}
	off := int64(binary.LittleEndian.Uint16(fb[vtable+slot:]))
	if off == 0 {
		return 0, true
	}
	if table+off+8 > int64(len(fb)) {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(fb[table+off:])), true
}

// Bounds of a schema, checked before arrow-go reads it: arrow-go makes its
// slices of fields, children and metadata of the lengths the flatbuffer
// declares, and recurses once per nesting level. otel-arrow's schemas have
// a few dozen fields, nested three or four deep.
const (
	maxSchemaFields = 4096 // fields of a schema, every level counted
	maxSchemaDepth  = 32   // nesting of fields
	maxMetadata     = 256  // key-value pairs of one custom_metadata
)

// fbuf is a flatbuffer being checked: every offset followed stays inside
// it, and every vector's declared length fits in the bytes after it.
type fbuf struct {
	b      []byte
	fields int
	// kvs and strs count the metadata pairs and the bytes of names and
	// metadata that arrow-go will copy into strings: a flatbuffer may
	// point many fields at one table and many pairs at one long string
	// (a schema of 1,240 bytes made arrow-go copy 1.8 GB of strings), so
	// what is read is bounded, not only what is there.
	kvs  int
	strs int64
}

// maxStringBytes bounds the strings a schema makes: four times its
// message, or 64 KiB for a small one.
func (f *fbuf) maxStringBytes() int64 { return max(4*int64(len(f.b)), 64<<10) }

// str checks the string of field i of the table at t and counts it.
func (f *fbuf) str(t int64, i int) error {
	_, n, ok := f.vector(t, i, 1)
	if !ok {
		return errFlatbuffer
	}
	if f.strs += n; f.strs > f.maxStringBytes() {
		return fmt.Errorf("a schema whose names and metadata make more than %d bytes of strings", f.maxStringBytes())
	}
	return nil
}

var errFlatbuffer = errors.New("bad Message flatbuffer")

func (f *fbuf) u32(at int64) (int64, bool) {
	if at < 0 || at+4 > int64(len(f.b)) {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint32(f.b[at:])), true
}

// table returns the vtable of the table at t and its size.
func (f *fbuf) table(t int64) (vt, vsize int64, ok bool) {
	so, ok := f.u32(t)
	if !ok {
		return 0, 0, false
	}
	vt = t - int64(int32(so))
	if vt < 0 || vt+4 > int64(len(f.b)) {
		return 0, 0, false
	}
	vsize = int64(binary.LittleEndian.Uint16(f.b[vt:]))
	if vsize < 4 {
		return 0, 0, false
	}
	return vt, vsize, true
}

// field returns where field i of the table at t is, 0 when absent.
func (f *fbuf) field(t int64, i int) (int64, bool) {
	vt, vsize, ok := f.table(t)
	if !ok {
		return 0, false
	}
	slot := int64(4 + 2*i)
	// Present when its slot starts within the vtable's declared size, as
	// the flatbuffers library reads it: an odd size covers half a slot.
	if slot >= vsize {
		return 0, true
	}
	if vt+slot+2 > int64(len(f.b)) {
		return 0, false
	}
	off := int64(binary.LittleEndian.Uint16(f.b[vt+slot:]))
	if off == 0 {
		return 0, true
	}
	return t + off, t+off < int64(len(f.b))
}

// ref follows the offset of field i of the table at t (a table, vector or
// string), 0 when absent.
func (f *fbuf) ref(t int64, i int) (int64, bool) {
	at, ok := f.field(t, i)
	if !ok || at == 0 {
		return 0, ok
	}
	off, ok := f.u32(at)
	if !ok || at+off >= int64(len(f.b)) {
		return 0, false
	}
	return at + off, true
}

// vector returns the elements' start and count of the vector of field i,
// its elements elem bytes each, checked to fit.
func (f *fbuf) vector(t int64, i int, elem int64) (start, n int64, ok bool) {
	v, ok := f.ref(t, i)
	if !ok || v == 0 {
		return 0, 0, ok
	}
	n, ok = f.u32(v)
	if !ok || v+4+n*elem > int64(len(f.b)) {
		return 0, 0, false
	}
	return v + 4, n, true
}

// tables calls each for every table of the vector of tables of field i.
func (f *fbuf) tables(t int64, i int, max int64, each func(int64) error) error {
	start, n, ok := f.vector(t, i, 4)
	if !ok {
		return errFlatbuffer
	}
	if n > max {
		return fmt.Errorf("a flatbuffer vector of %d tables, more than %d", n, max)
	}
	for k := range n {
		at := start + 4*k
		off, _ := f.u32(at)
		if at+off >= int64(len(f.b)) {
			return errFlatbuffer
		}
		if err := each(at + off); err != nil {
			return err
		}
	}
	return nil
}

func (f *fbuf) metadata(t int64, i int) error {
	return f.tables(t, i, maxMetadata, func(kv int64) error {
		if f.kvs++; f.kvs > maxSchemaFields {
			return fmt.Errorf("a schema of more than %d metadata pairs", maxSchemaFields)
		}
		for j := range 2 {
			if err := f.str(kv, j); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkMessage checks a Message flatbuffer (Arrow's format/Message.fbs,
// Schema.fbs) where arrow-go trusts it: a Schema's fields, their children
// and metadata (counted and nested within bounds), a record batch's
// vectors, and the message's own metadata.
func checkMessage(b, body []byte) error {
	f := &fbuf{b: b}
	root, ok := f.u32(0)
	if !ok {
		return errFlatbuffer
	}
	if err := f.metadata(root, 4); err != nil {
		return err
	}
	at, ok := f.field(root, 1)
	if !ok {
		return errFlatbuffer
	}
	var kind byte
	if at != 0 {
		kind = b[at]
	}
	header, ok := f.ref(root, 2)
	if !ok {
		return errFlatbuffer
	}
	if header == 0 {
		return nil
	}
	switch kind {
	case 1: // Schema: endianness 0, fields 1, custom_metadata 2, features 3
		if err := f.metadata(header, 2); err != nil {
			return err
		}
		if _, _, ok := f.vector(header, 3, 8); !ok {
			return errFlatbuffer
		}
		return f.tables(header, 1, maxSchemaFields, func(t int64) error { return f.checkField(t, 1) })
	case 2: // DictionaryBatch: id 0, data 1 (a RecordBatch), isDelta 2
		rb, ok := f.ref(header, 1)
		if !ok {
			return errFlatbuffer
		}
		if rb == 0 {
			return nil
		}
		return f.checkRecordBatch(rb, body)
	case 3:
		return f.checkRecordBatch(header, body)
	}
	return nil
}

// checkField checks a Field: name 0, nullable 1, type_type 2, type 3,
// dictionary 4, children 5, custom_metadata 6.
func (f *fbuf) checkField(t int64, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("a schema nested more than %d deep", maxSchemaDepth)
	}
	if f.fields++; f.fields > maxSchemaFields {
		return fmt.Errorf("a schema of more than %d fields", maxSchemaFields)
	}
	if err := f.str(t, 0); err != nil {
		return err
	}
	for _, i := range []int{3, 4} {
		if x, ok := f.ref(t, i); !ok {
			return errFlatbuffer
		} else if x != 0 {
			if _, _, ok := f.table(x); !ok {
				return errFlatbuffer
			}
		}
	}
	if err := f.metadata(t, 6); err != nil {
		return err
	}
	return f.tables(t, 5, maxSchemaFields, func(c int64) error { return f.checkField(c, depth+1) })
}

// checkRecordBatch checks a RecordBatch: length 0, nodes 1 (16-byte
// structs), buffers 2 (16-byte structs), compression 3,
// variadicBufferCounts 4 (int64s).
func (f *fbuf) checkRecordBatch(t int64, body []byte) error {
	if _, _, ok := f.table(t); !ok {
		return errFlatbuffer
	}
	for _, v := range [][2]int64{{1, 16}, {2, 16}, {4, 8}} {
		if _, _, ok := f.vector(t, int(v[0]), v[1]); !ok {
			return errFlatbuffer
		}
	}
	// compression 3: a BodyCompression, codec 0 (0 LZ4_FRAME, 1 ZSTD).
	c, ok := f.ref(t, 3)
	if !ok {
		return errFlatbuffer
	}
	if c == 0 {
		return nil
	}
	at, ok := f.field(c, 0)
	if !ok {
		return errFlatbuffer
	}
	if at == 0 || f.b[at] != 1 {
		return nil // LZ4 frames: blocks of at most 4 MiB
	}
	start, n, _ := f.vector(t, 2, 16)
	for k := range n {
		s := f.b[start+16*k:]
		off, size := int64(binary.LittleEndian.Uint64(s)), int64(binary.LittleEndian.Uint64(s[8:]))
		if size == 0 {
			continue
		}
		if off < 0 || size < 8 || off > int64(len(body)) || size > int64(len(body))-off {
			return fmt.Errorf("buffer of %d bytes at %d in a body of %d", size, off, len(body))
		}
		buf := body[off : off+size]
		out := int64(binary.LittleEndian.Uint64(buf))
		if out == -1 {
			continue // stored uncompressed
		}
		if err := checkZstd(buf[8:], out); err != nil {
			return err
		}
	}
	return nil
}

// MaxZstdWindow bounds the window a zstd frame of a compressed Arrow
// buffer may declare when it is not a single segment (whose window is its
// content, at most the buffer's declared size, which the allocator
// bounds): arrow-go's decoder (klauspost/compress, its defaults) makes a
// history of the declared window, up to 512 MiB, outside the allocator.
// 8 MiB is zstd's own limit for decoders that must not be forced to more
// (RFC 8878, 3.1.1.1.2) and what its encoder uses at its default level.
const MaxZstdWindow = 8 << 20

// checkZstd walks the zstd frames of a compressed buffer that decodes to
// out bytes and refuses a frame whose window is larger than MaxZstdWindow,
// or a single segment larger than out.
func checkZstd(b []byte, out int64) error {
	for len(b) >= 5 {
		magic := binary.LittleEndian.Uint32(b)
		if magic&0xfffffff0 == 0x184d2a50 { // a skippable frame
			n := int64(binary.LittleEndian.Uint32(b[4:]))
			if n > int64(len(b))-8 {
				return nil
			}
			b = b[8+n:]
			continue
		}
		if magic != 0xfd2fb528 {
			return nil // not zstd: the decoder refuses it
		}
		fhd := b[4]
		pos := 5
		single := fhd&0x20 != 0
		var window uint64
		if !single {
			wd := b[pos]
			pos++
			base := uint64(1) << (10 + wd>>3)
			window = base + base/8*uint64(wd&7)
		}
		pos += [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
		fcsLen := [4]int{0, 2, 4, 8}[fhd>>6]
		if fcsLen == 0 && single {
			fcsLen = 1
		}
		if pos+fcsLen > len(b) {
			return nil
		}
		var fcs uint64
		for i := range fcsLen {
			fcs |= uint64(b[pos+i]) << (8 * i)
		}
		if fcsLen == 2 {
			fcs += 256
		}
		pos += fcsLen
		if single {
			if fcs > uint64(max(out, 0)) {
				return fmt.Errorf("zstd frame of %d bytes in a buffer of %d", fcs, out)
			}
		} else if window > MaxZstdWindow {
			return fmt.Errorf("zstd window of %d bytes, more than %d", window, MaxZstdWindow)
		}
		for { // blocks: a 3-byte header, last bit, type, size
			if pos+3 > len(b) {
				return nil
			}
			h := uint32(b[pos]) | uint32(b[pos+1])<<8 | uint32(b[pos+2])<<16
			pos += 3
			size := int(h >> 3)
			if h>>1&3 == 1 { // RLE: one byte
				size = 1
			}
			if size > len(b)-pos {
				return nil
			}
			pos += size
			if h&1 == 1 {
				break
			}
		}
		if fhd&4 != 0 {
			pos += 4 // checksum
		}
		if pos > len(b) {
			return nil
		}
		b = b[pos:]
	}
	return nil
}
