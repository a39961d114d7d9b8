//go:build otelarrow

package arrowreceiver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Arrow IPC bodies compressed with zstd (what otel-arrow's producer sends)
// are decompressed here, before arrow-go reads them: arrow-go makes a zstd
// decoder per record batch and decodes each buffer as a stream, with
// goroutines of its own (a third of the server's CPU on the demo data).
// decompressIPC rewrites a record's messages as uncompressed ones: each
// buffer decoded with one process-wide decoder (DecodeAll: no goroutine)
// straight into a body allocated from the stream's allocator (charged and
// within its memory limit, as arrow-go's own body is), the buffers'
// offsets and lengths and the message's bodyLength written over, the
// compression field dropped from the record batch's vtable. A message it
// cannot rewrite so (a vtable shared with another table, no bodyLength
// field, LZ4) leaves the record as it is, for arrow-go to decompress.

// zstdBuffers is the decoder of compressed buffers: DecodeAll writes at
// most the capacity it is given (the buffer's declared size, charged),
// and a frame's window is at most MaxZstdWindow (checkZstd refuses larger
// ones first), so its history is bounded: one per GOMAXPROCS block
// decoder, for the process.
var zstdBuffers = sync.OnceValue(func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxWindow(MaxZstdWindow))
	if err != nil {
		panic(err)
	}
	return d
})

// ipcMsg is one message of a record: its metadata, its body, and for a
// compressed record batch where its buffers are described and the new
// body's size.
type ipcMsg struct {
	meta, body []byte
	rb         int64 // the RecordBatch table in meta; 0: copied as it is
	newBody    int64
}

// decompressIPC returns rec with its zstd-compressed record batches
// rewritten uncompressed, in memory from alloc (the caller frees it once
// the IPC reader has read it), or ok false when there is nothing it
// rewrites. rec has passed checkIPC.
func decompressIPC(rec []byte, alloc *budgetAllocator, msgs []ipcMsg) (out []byte, ok bool, _ []ipcMsg, err error) {
	msgs = msgs[:0]
	defer func() { clear(msgs) }() // they alias rec
	pos, total, any := 0, int64(0), false
	for len(rec)-pos >= 4 {
		n := int64(int32(binary.LittleEndian.Uint32(rec[pos:])))
		pos += 4
		if n == -1 {
			n = int64(int32(binary.LittleEndian.Uint32(rec[pos:])))
			pos += 4
		}
		if n == 0 {
			break
		}
		meta := rec[pos : pos+int(n)]
		pos += int(n)
		blen, _ := bodyLength(meta)
		body := rec[pos : pos+int(blen)]
		pos += int(blen)
		m := ipcMsg{meta: meta, body: body}
		if rb, size, ok := compressedBatch(meta, body); ok {
			m.rb, m.newBody, any = rb, size, true
			total += 8 + int64(len(meta)) + size
		} else {
			total += 8 + int64(len(meta)) + int64(len(body))
		}
		msgs = append(msgs, m)
	}
	if !any {
		return nil, false, msgs, nil
	}
	out = alloc.Allocate(int(total))[:0]
	for _, m := range msgs {
		out = binary.LittleEndian.AppendUint32(out, 0xFFFFFFFF)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(m.meta)))
		at := len(out)
		out = append(out, m.meta...)
		if m.rb == 0 {
			out = append(out, m.body...)
			continue
		}
		if out, err = decompressBatch(out, out[at:at+len(m.meta)], m.rb, m.body, m.newBody); err != nil {
			alloc.Free(out[:cap(out)])
			return nil, false, msgs, err
		}
	}
	return out, true, msgs, nil
}

// compressedBatch reports whether meta is a record batch (or dictionary
// batch) whose body is zstd-compressed and that can be rewritten, and
// returns the RecordBatch table and the uncompressed body's size (each
// buffer 8-byte aligned, as Arrow writes them).
func compressedBatch(meta, body []byte) (rb, size int64, ok bool) {
	f := &fbuf{b: meta}
	root, ok := f.u32(0)
	if !ok {
		return 0, 0, false
	}
	if at, ok := f.field(root, 3); !ok || at == 0 {
		return 0, 0, false // no bodyLength to write over
	}
	at, ok := f.field(root, 1)
	if !ok || at == 0 {
		return 0, 0, false
	}
	header, ok := f.ref(root, 2)
	if !ok || header == 0 {
		return 0, 0, false
	}
	tables := []int64{root, header}
	switch meta[at] {
	case 3:
		rb = header
	case 2:
		if rb, ok = f.ref(header, 1); !ok || rb == 0 {
			return 0, 0, false
		}
		tables = append(tables, rb)
	default:
		return 0, 0, false
	}
	c, ok := f.ref(rb, 3)
	if !ok || c == 0 {
		return 0, 0, false
	}
	if at, ok := f.field(c, 0); !ok || at == 0 || meta[at] != 1 {
		return 0, 0, false // not ZSTD
	}
	tables = append(tables, c)
	// The vtable whose compression slot is cleared must be the record
	// batch's alone.
	rbVT, _, ok := f.table(rb)
	if !ok {
		return 0, 0, false
	}
	for _, t := range tables {
		if vt, _, ok := f.table(t); !ok || (t != rb && vt == rbVT) {
			return 0, 0, false
		}
	}
	start, n, ok := f.vector(rb, 2, 16)
	if !ok {
		return 0, 0, false
	}
	for k := range n {
		s := meta[start+16*k:]
		off, bsize := int64(binary.LittleEndian.Uint64(s)), int64(binary.LittleEndian.Uint64(s[8:]))
		if bsize == 0 {
			continue
		}
		if off < 0 || bsize < 8 || off > int64(len(body)) || bsize > int64(len(body))-off {
			return 0, 0, false
		}
		raw := int64(binary.LittleEndian.Uint64(body[off:]))
		if raw == -1 {
			raw = bsize - 8
		}
		if raw < 0 || raw > 1<<40 {
			return 0, 0, false
		}
		size += (raw + 7) &^ 7
	}
	return rb, size, true
}

var errZstdSize = errors.New("a zstd buffer that does not decode to its declared size")

// decompressBatch appends the uncompressed body of the record batch at rb
// in meta (the copy in out, written over) to out.
func decompressBatch(out, meta []byte, rb int64, body []byte, size int64) ([]byte, error) {
	f := &fbuf{b: meta}
	start, n, _ := f.vector(rb, 2, 16)
	bodyAt := len(out)
	for k := range n {
		s := meta[start+16*k:]
		off, bsize := int64(binary.LittleEndian.Uint64(s)), int64(binary.LittleEndian.Uint64(s[8:]))
		at := int64(len(out) - bodyAt)
		if bsize == 0 {
			binary.LittleEndian.PutUint64(s, uint64(at))
			continue
		}
		buf := body[off : off+bsize]
		raw := int64(binary.LittleEndian.Uint64(buf))
		if raw == -1 {
			out = append(out, buf[8:]...)
			raw = bsize - 8
		} else {
			if err := checkZstd(buf[8:], raw); err != nil {
				return out, err
			}
			dst := out[len(out) : len(out) : len(out)+int(raw)]
			got, err := zstdBuffers().DecodeAll(buf[8:], dst)
			if err != nil {
				return out, fmt.Errorf("cannot decompress Arrow buffer: %w", err)
			}
			if int64(len(got)) != raw {
				return out, errZstdSize
			}
			out = out[:len(out)+int(raw)]
		}
		for len(out)-bodyAt < int(at+(raw+7)&^7) {
			out = append(out, 0)
		}
		binary.LittleEndian.PutUint64(s, uint64(at))
		binary.LittleEndian.PutUint64(s[8:], uint64(raw))
	}
	if int64(len(out)-bodyAt) != size {
		return out, errZstdSize
	}
	// The body is no longer compressed: the record batch's compression
	// slot is cleared (absent), and the message's bodyLength is the new
	// body's.
	vt, _, _ := f.table(rb)
	binary.LittleEndian.PutUint16(meta[vt+4+2*3:], 0)
	root, _ := f.u32(0)
	at, _ := f.field(root, 3)
	binary.LittleEndian.PutUint64(meta[at:], uint64(size))
	return out, nil
}
