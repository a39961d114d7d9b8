package kafka

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/internal/kafkaconn"
	"github.com/otlp-lite/otlp-lite/storage"
)

// appendTestRecord appends a v2 record (with its length) of offsetDelta
// and headers, given as name, value pairs.
func appendTestRecord(dst []byte, offsetDelta int, headers ...[]byte) []byte {
	var body []byte
	body = append(body, 0) // attributes
	body = binary.AppendVarint(body, 0)
	body = binary.AppendVarint(body, int64(offsetDelta))
	body = binary.AppendVarint(body, -1) // no key
	body = binary.AppendVarint(body, 1)
	body = append(body, 'v')
	body = binary.AppendVarint(body, int64(len(headers)/2))
	for _, h := range headers {
		body = binary.AppendVarint(body, int64(len(h)))
		body = append(body, h...)
	}
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

// appendTestBatch appends an uncompressed v2 record batch of n records
// (recs) from offset first, with attrs.
func appendTestBatch(dst []byte, first int64, attrs int16, n int, recs []byte) []byte {
	at := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(first))
	dst = binary.BigEndian.AppendUint32(dst, 0) // length, below
	dst = binary.BigEndian.AppendUint32(dst, 0) // leader epoch
	dst = append(dst, 2)                        // magic
	dst = binary.BigEndian.AppendUint32(dst, 0) // crc (not checked)
	dst = binary.BigEndian.AppendUint16(dst, uint16(attrs))
	dst = binary.BigEndian.AppendUint32(dst, uint32(n-1))
	dst = binary.BigEndian.AppendUint64(dst, uint64(time.Unix(1e9, 0).UnixMilli()))
	dst = binary.BigEndian.AppendUint64(dst, uint64(time.Unix(1e9, 0).UnixMilli()))
	dst = binary.BigEndian.AppendUint64(dst, ^uint64(0)) // producer id -1
	dst = binary.BigEndian.AppendUint16(dst, ^uint16(0))
	dst = binary.BigEndian.AppendUint32(dst, ^uint32(0))
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, recs...)
	binary.BigEndian.PutUint32(dst[at+8:], uint32(len(dst)-at-12))
	return dst
}

func testKeysReader(fn func(storage.StoredKey) error) *keysReader {
	return &keysReader{a: newKeyAssembler(1<<20, fn, newKeysMetrics(nil)), dec: kafkaconn.NewBatchDecompressor(1 << 20)}
}

// TestKeysBatches: the batch walker finds the keyed records from the
// offset asked, steps over control batches, old message sets and records
// without the header, stops at a batch cut by the fetch's size, and walks
// a record of many headers without allocating.
func TestKeysBatches(t *testing.T) {
	key := func(name string, part, parts int) []byte {
		return appendKeyHeader(nil, storage.Logs, part, parts, 1, &storage.StoredKey{Key: name, Fingerprint: 1})
	}
	var raw []byte
	raw = appendTestBatch(raw, 0, 0, 2, appendTestRecord(appendTestRecord(nil, 0, []byte(KeyHeader), key("skipped", 0, 1)), 1, []byte(KeyHeader), key("first", 0, 1)))
	raw = appendTestBatch(raw, 2, batchAttrControl, 1, appendTestRecord(nil, 0, []byte(KeyHeader), key("control", 0, 1)))
	// A v1 message set (magic 1) at offset 3: stepped over.
	v1 := binary.BigEndian.AppendUint64(nil, 3)
	v1 = binary.BigEndian.AppendUint32(v1, 14)
	v1 = append(v1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	raw = append(raw, v1...)
	many := [][]byte{}
	for range 1000 {
		many = append(many, []byte("x-other"), nil)
	}
	manyRec := appendTestRecord(nil, 0, many...)
	raw = appendTestBatch(raw, 4, 0, 1, manyRec)
	raw = appendTestBatch(raw, 5, 0, 2, appendTestRecord(appendTestRecord(nil, 0, []byte(TenantHeader), []byte("team-a"), []byte(KeyHeader), key("split", 0, 2)), 1,
		[]byte(KeyHeader), key("split", 1, 2), []byte(TenantHeader), []byte("team-a")))
	whole := len(raw)
	raw = appendTestBatch(raw, 7, 0, 1, appendTestRecord(nil, 0, []byte(KeyHeader), key("cut", 0, 1)))
	raw = raw[:len(raw)-3]

	var got []storage.StoredKey
	r := testKeysReader(func(k storage.StoredKey) error { got = append(got, k); return nil })
	next, err := r.batches(raw, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	if next != 7 {
		t.Errorf("next offset %d, want 7 (the cut batch is fetched again)", next)
	}
	if len(got) != 2 || got[0].Key != "first" || got[1].Key != "split" || got[1].Tenant != "team-a" || !got[1].Time.Equal(time.Unix(1e9, 0)) {
		t.Errorf("read %+v, want first, and split of team-a", got)
	}
	if next, _ := r.batches(raw[:whole], 0, 6); next != 7 {
		t.Errorf("up to offset 6: next %d, want 7", next)
	}
	many1 := appendTestBatch(nil, 0, 0, 1, manyRec)
	if n := testing.AllocsPerRun(10, func() { r.batches(many1, 0, 10) }); n != 0 {
		t.Errorf("a record of 1000 headers: %v allocations, want 0", n)
	}
}

// FuzzKeysBatches feeds arbitrary bytes to the batch walker as a fetch's
// bytes for a partition: no panic, and the offset never goes back.
//
// Seeds: testdata/fuzz/FuzzKeysBatches, and the batches below.
func FuzzKeysBatches(f *testing.F) {
	k := appendKeyHeader(nil, storage.Traces, 0, 1, 1, &storage.StoredKey{Key: "k", Fingerprint: 1})
	f.Add(appendTestBatch(nil, 0, 0, 1, appendTestRecord(nil, 0, []byte(KeyHeader), k)))
	f.Add(appendTestBatch(nil, 5, 0, 2, appendTestRecord(appendTestRecord(nil, 0, []byte("a"), nil), 1, []byte(KeyHeader), k, []byte(TenantHeader), []byte("t"))))
	f.Add(appendTestBatch(nil, 0, 4, 1, []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0x58, 0, 0}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		r := testKeysReader(func(storage.StoredKey) error { return nil })
		if next, err := r.batches(raw, 3, 1<<40); err != nil || next < 3 {
			t.Fatalf("next %d, %v", next, err)
		}
	})
}
