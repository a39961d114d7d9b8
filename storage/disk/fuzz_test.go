package disk

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// FuzzReadSegment feeds arbitrary bytes as a segment's records to the walk
// that recovery and readers share (readRecord plus resync): it must not
// panic or loop, every record it returns must carry a matching CRC, and
// records and damaged regions must tile the segment exactly, up to the
// recovered end. The segment is held in memory so that fuzzing runs at
// full speed; the file-level Reader is covered by the unit tests.
func FuzzReadSegment(f *testing.F) {
	now := time.Now().UnixNano()
	var good []byte
	for _, p := range []string{"alpha", "", "gamma gamma gamma"} {
		good = appendRecord(good, now, len(p), []byte(p))
	}
	f.Add(good, false)
	f.Add(good[:len(good)-3], false)
	damaged := append([]byte(nil), good...)
	damaged[25] ^= 0xff
	f.Add(damaged, false)
	f.Add(append(make([]byte, 100), good...), false)
	// A preallocated tail (direct.go): zeros after the records; and a
	// run of zeros before more records (a lost block).
	f.Add(append(append([]byte(nil), good...), make([]byte, 3*blockSize)...), false)
	f.Add(append(append(append([]byte(nil), good...), make([]byte, blockSize+3)...), good...), false)
	// A record a lost block cuts through (its header landed, a block of
	// its body did not), records after it (recover's end: lostBlock).
	torn := appendRecord(nil, now, 1, bytes.Repeat([]byte("t"), 3*blockSize))
	clear(torn[blockSize : 2*blockSize])
	f.Add(append(append(append([]byte(nil), good...), torn...), good...), false)
	f.Add(appendRecord(nil, now, 1, compressPayload(nil, []byte("zstd payload"))), true)
	f.Add(appendRecord(nil, now, 1, []byte("not a zstd frame")), true)
	key := &storage.StoredKey{Key: "client/42", Fingerprint: 7, Rejected: 1, Message: "1 of 2 spans rejected"}
	f.Add(appendKeyedRecord(nil, now, 1, "team-a", key, []byte("keyed")), false)
	f.Add(appendKeyedRecord(nil, now, 1, "", key, compressPayload(nil, []byte("keyed zstd"))), true)
	// A key block whose lengths run past the record, under a good CRC.
	bad := appendKeyedRecord(nil, now, 1, "", key, nil)
	bad[recordHeaderSize+recordMetaSize] = 0xff
	binary.LittleEndian.PutUint32(bad[4:], crc32.Checksum(bad[recordHeaderSize:], castagnoli))
	f.Add(bad, false)
	f.Fuzz(func(t *testing.T, body []byte, zstd bool) {
		c := CompressionNone
		if zstd {
			c = CompressionZstd
		}
		seg := append(appendSegmentHeader(nil, uint8(storage.Logs), c), body...)
		src := bytes.NewReader(seg)
		size := func() (int64, error) { return int64(len(seg)), nil }
		r, err := newSegmentReader(src, size, nil, "fuzz.seg", 1, uint8(storage.Logs), nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		type span struct{ off, n int64 }
		var spans []span
		var offs []int64 // of the records
		info, end, corrupt := walkSegment(r, func(rec Record) {
			offs = append(offs, rec.Offset)
			raw := seg[rec.Offset:]
			n, crc := parseRecordHeader(raw)
			if crc32.Checksum(raw[recordHeaderSize:recordHeaderSize+n], castagnoli) != crc {
				t.Fatalf("record at %d has a bad CRC", rec.Offset)
			}
			// The payload ends the body (a tenant and a key may precede it).
			if c == CompressionNone && !bytes.HasSuffix(raw[recordHeaderSize+recordMetaSize:recordHeaderSize+n], rec.Data) {
				t.Fatalf("record at %d: data differs from the file", rec.Offset)
			}
			spans = append(spans, span{rec.Offset, int64(recordHeaderSize + n)})
		})
		for _, ce := range corrupt {
			spans = append(spans, span{ce.Offset, ce.Skipped})
		}
		if int64(len(spans)-len(corrupt)) != info.records {
			t.Fatalf("%d records seen, %d counted", len(spans)-len(corrupt), info.records)
		}
		// Records and damage, in offset order, tile [header, end).
		for i := 1; i < len(spans); i++ {
			for j := i; j > 0 && spans[j].off < spans[j-1].off; j-- {
				spans[j], spans[j-1] = spans[j-1], spans[j]
			}
		}
		at := int64(segmentHeaderSize)
		for _, s := range spans {
			if s.off != at || s.n <= 0 {
				t.Fatalf("gap or overlap at %d: next span %+v", at, s)
			}
			at += s.n
		}
		if at != end || end > int64(len(seg)) {
			t.Fatalf("spans end at %d, recovery at %d, segment %d", at, end, len(seg))
		}
		// Recovery's walk of a segment written in place ends at a
		// lost write: it finds the first records of the full walk,
		// and ends no later.
		rl, err := newSegmentReader(bytes.NewReader(seg), size, nil, "fuzz.seg", 1, uint8(storage.Logs), nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var lostOffs []int64
		linfo, lend, _ := walkSegmentTo(rl, func(rec Record) { lostOffs = append(lostOffs, rec.Offset) }, true)
		if lend > end || linfo.records > info.records {
			t.Fatalf("recovery's walk ends at %d with %d records, the full walk at %d with %d", lend, linfo.records, end, info.records)
		}
		for i, off := range lostOffs {
			if off != offs[i] {
				t.Fatalf("recovery's walk found a record at %d, the full walk at %d", off, offs[i])
			}
		}
		// The keys read from the frames alone (ReadKeys) are the keys of
		// the records a full walk finds, when the frames walk to the end
		// and nothing is damaged.
		r2, err := newSegmentReader(bytes.NewReader(seg), size, nil, "fuzz.seg", 1, uint8(storage.Logs), nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		fromFrames, ok := walkKeys(r2, storage.Logs, 0)
		if ok && len(corrupt) == 0 && end == int64(len(seg)) {
			var whole []string
			r3, _ := newSegmentReader(bytes.NewReader(seg), size, nil, "fuzz.seg", 1, uint8(storage.Logs), nil, nil, nil)
			r3.keysOnly = true
			walkSegment(r3, func(rec Record) {
				if k, ok := rec.IdempotencyKey(); ok && rec.Time.UnixNano() >= 0 {
					whole = append(whole, k.Key)
				}
			})
			var framed []string
			for _, k := range fromFrames {
				framed = append(framed, k.Key)
			}
			if fmt.Sprint(framed) != fmt.Sprint(whole) {
				t.Fatalf("keys from the frames %q, from the records %q", framed, whole)
			}
		}
	})
}
