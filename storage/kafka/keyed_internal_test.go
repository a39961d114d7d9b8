package kafka

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

func TestKeyHeaderRoundTrip(t *testing.T) {
	k := storage.StoredKey{Key: strings.Repeat("k", otlp.MaxIdempotencyKeyLen), Fingerprint: 0x0102030405060708,
		Rejected: 3, Message: strings.Repeat("m", storage.MaxStoredKeyMessage)}
	v := appendKeyHeader(nil, storage.Logs, 6, 7, 500, &k)
	if len(v) > maxKeyHeader {
		t.Fatalf("header of %d bytes, over maxKeyHeader %d", len(v), maxKeyHeader)
	}
	p, err := parseKeyHeader(v)
	if err != nil {
		t.Fatal(err)
	}
	if p.signal != storage.Logs || p.part != 6 || p.parts != 7 || p.fingerprint != k.Fingerprint || p.items != 500 ||
		p.rejected != 3 || string(p.key) != k.Key || string(p.message) != k.Message {
		t.Fatalf("decoded %+v", p)
	}
	if err := checkStoredKey(&storage.StoredKey{}, 1); err == nil {
		t.Error("an empty key is accepted")
	}
}

// TestKeyHeaderHostile: truncated, padded, huge part counts, lengths past
// the value or the limits: refused, never a panic.
func TestKeyHeaderHostile(t *testing.T) {
	good := appendKeyHeader(nil, storage.Traces, 1, 2, 10, &storage.StoredKey{Key: "abc", Fingerprint: 9, Message: "x"})
	for i := range good {
		if _, err := parseKeyHeader(good[:i]); err == nil {
			t.Errorf("truncated to %d bytes: accepted", i)
		}
	}
	uv := binary.AppendUvarint
	bad := map[string][]byte{
		"padded":           append(bytes.Clone(good), 0),
		"version 2":        append([]byte{2}, good[1:]...),
		"unknown signal":   append([]byte{1, 99}, good[2:]...),
		"zero parts":       append(uv([]byte{1, 0, 0}, 0), good[4:]...),
		"part past parts":  append(uv([]byte{1, 0, 2}, 2), good[4:]...),
		"huge parts":       append(uv([]byte{1, 0, 0}, maxKeyParts+1), good[4:]...),
		"overlong varint":  append([]byte{1, 0}, bytes.Repeat([]byte{0xff}, 11)...),
		"key past the end": append(append(append([]byte{1, 0, 0, 1}, make([]byte, 8)...), 0, 0), uv(nil, 200)...),
		"key too long": append(append(append(append([]byte{1, 0, 0, 1}, make([]byte, 8)...), 0, 0), uv(nil, otlp.MaxIdempotencyKeyLen+1)...),
			make([]byte, otlp.MaxIdempotencyKeyLen+2)...),
		"empty key": append(append([]byte{1, 0, 0, 1}, make([]byte, 8)...), 0, 0, 0, 0),
	}
	for name, v := range bad {
		if p, err := parseKeyHeader(v); err == nil {
			t.Errorf("%s: accepted as %+v", name, p)
		}
	}
}

// FuzzKeyHeader: parseKeyHeader never panics, and what it accepts is
// written back as a header that reads the same.
//
// Seeds: testdata/fuzz/FuzzKeyHeader, and headers appendKeyHeader writes.
func FuzzKeyHeader(f *testing.F) {
	f.Add(appendKeyHeader(nil, storage.Traces, 0, 1, 5, &storage.StoredKey{Key: "k", Fingerprint: 1}))
	f.Add(appendKeyHeader(nil, storage.Profiles, 9, 10, 1<<20, &storage.StoredKey{Key: "0190-uuid", Rejected: 2, Message: "2 spans rejected"}))
	f.Fuzz(func(t *testing.T, v []byte) {
		p, err := parseKeyHeader(v)
		if err != nil {
			return
		}
		k := storage.StoredKey{Key: string(p.key), Fingerprint: p.fingerprint, Rejected: p.rejected, Message: string(p.message)}
		if err := checkStoredKey(&k, p.items); err != nil {
			t.Fatalf("accepted a key it would not write: %v", err)
		}
		w := appendKeyHeader(nil, p.signal, p.part, p.parts, p.items, &k)
		q, err := parseKeyHeader(w)
		if err != nil || q.signal != p.signal || q.part != p.part || q.parts != p.parts || q.fingerprint != p.fingerprint ||
			q.items != p.items || q.rejected != p.rejected || !bytes.Equal(q.key, p.key) || !bytes.Equal(q.message, p.message) {
			t.Fatalf("read %x as %+v, written back as %x: %+v, %v", v, p, w, q, err)
		}
	})
}

func keyRecord(t *testing.T, sig storage.Signal, part, parts int, k storage.StoredKey, tenant string) []kgo.RecordHeader {
	t.Helper()
	hs := []kgo.RecordHeader{{Key: "x-team", Value: []byte("a")}, {Key: KeyHeader, Value: appendKeyHeader(nil, sig, part, parts, 7, &k)}}
	if tenant != "" {
		hs = append(hs, kgo.RecordHeader{Key: TenantHeader, Value: []byte(tenant)})
	}
	return hs
}

// TestKeyAssembler: a key is reported once all its parts were read, in
// any order and with parts read twice (a retry); a key with a part missing
// is not, and is counted; records without the header, or with a damaged
// one, are skipped.
func TestKeyAssembler(t *testing.T) {
	set := metrics.NewSet()
	var got []storage.StoredKey
	a := newKeyAssembler(1<<20, func(k storage.StoredKey) error { got = append(got, k); return nil }, newKeysMetrics(set))
	t0 := time.Unix(1700000000, 0)
	whole := storage.StoredKey{Key: "whole", Fingerprint: 1, Rejected: 1, Message: "1 span rejected"}
	torn := storage.StoredKey{Key: "torn", Fingerprint: 2}
	single := storage.StoredKey{Key: "single", Fingerprint: 3}
	for i, part := range []int{2, 0, 2, 1} { // one part read twice
		if err := a.add(keyRecord(t, storage.Traces, part, 3, whole, "team-a"), t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	a.add(keyRecord(t, storage.Traces, 0, 3, torn, ""), t0)
	a.add(keyRecord(t, storage.Traces, 2, 3, torn, ""), t0)
	a.add(keyRecord(t, storage.Logs, 0, 1, single, ""), t0)
	a.add(nil, t0)                                                       // a Collector's record
	a.add([]kgo.RecordHeader{{Key: KeyHeader, Value: []byte{1, 0}}}, t0) // damaged
	a.add([]kgo.RecordHeader{{Key: KeyHeader, Value: appendKeyHeader(nil, 0, 0, 1, 1, &single)}, {Key: TenantHeader, Value: []byte("bad tenant!")}}, t0)
	a.finish()
	want := []storage.StoredKey{
		{Signal: storage.Traces, Tenant: "team-a", Key: "whole", Fingerprint: 1, Rejected: 1, Message: "1 span rejected", Items: 7, Time: t0.Add(3 * time.Second)},
		{Signal: storage.Logs, Tenant: otlp.DefaultTenant, Key: "single", Fingerprint: 3, Items: 7, Time: t0},
	}
	if len(got) != len(want) {
		t.Fatalf("reported %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("key %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for name, want := range map[string]uint64{
		`otlplite_kafka_keys_read_total`:                              2,
		`otlplite_kafka_keys_skipped_total{reason="incomplete"}`:      1,
		`otlplite_kafka_keys_skipped_total{reason="damaged"}`:         2,
		`otlplite_kafka_keys_skipped_total{reason="pending_limit"}`:   0,
		`otlplite_kafka_keys_skipped_total{reason="batch_too_large"}`: 0,
	} {
		if got := set.GetOrCreateCounter(name).Get(); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
}

// TestKeyAssemblerBounded: keys waiting for parts never hold more than the
// budget, however many are read (one part each of 100,000 split requests
// with the longest keys and messages and denseKeyParts parts each, whose
// bits are reserved at the first part); those over it are counted, and a
// key whose parts all come while it is within the budget is still
// reported.
func TestKeyAssemblerBounded(t *testing.T) {
	set := metrics.NewSet()
	const budget = 1 << 20
	reported := 0
	a := newKeyAssembler(budget, func(storage.StoredKey) error { reported++; return nil }, newKeysMetrics(set))
	long := strings.Repeat("k", otlp.MaxIdempotencyKeyLen-8)
	msg := strings.Repeat("m", storage.MaxStoredKeyMessage)
	maxUsed := int64(0)
	for i := range 100_000 {
		k := storage.StoredKey{Key: long + string(binary.BigEndian.AppendUint64(nil, uint64(i))), Message: msg}
		a.add(keyRecord(t, storage.Traces, 0, denseKeyParts, k, ""), time.Time{})
		maxUsed = max(maxUsed, a.used)
	}
	if maxUsed > budget {
		t.Fatalf("pending keys held %d bytes, over the %d budget", maxUsed, budget)
	}
	k := storage.StoredKey{Key: long + string(binary.BigEndian.AppendUint64(nil, 0)), Message: msg}
	for part := 1; part < denseKeyParts; part++ {
		a.add(keyRecord(t, storage.Traces, part, denseKeyParts, k, ""), time.Time{})
	}
	a.finish()
	over := set.GetOrCreateCounter(`otlplite_kafka_keys_skipped_total{reason="pending_limit"}`).Get()
	incomplete := set.GetOrCreateCounter(`otlplite_kafka_keys_skipped_total{reason="incomplete"}`).Get()
	if reported != 1 || over == 0 || over+incomplete+1 != 100_000 {
		t.Fatalf("reported %d, over the limit %d, incomplete %d; want 1 reported, the rest counted", reported, over, incomplete)
	}
	t.Logf("at most %d bytes pending; %d keys over the limit, %d incomplete", maxUsed, over, incomplete)
}

// TestKeyAssemblerHugePartCounts: a record claiming the most parts a
// header allows (2^24) costs the pending keys what its parts found hold,
// not a bitset for all it claims: a few dozen such records (a few KiB on a
// topic anyone can write to) do not fill the budget and keep the honest
// split requests after them out of the window.
func TestKeyAssemblerHugePartCounts(t *testing.T) {
	set := metrics.NewSet()
	var got []string
	a := newKeyAssembler(DefaultMaxPendingKeyBytes, func(k storage.StoredKey) error { got = append(got, k.Key); return nil }, newKeysMetrics(set))
	for i := range 100 {
		a.add(keyRecord(t, storage.Traces, maxKeyParts-1-i, maxKeyParts, storage.StoredKey{Key: fmt.Sprint("claims-", i), Fingerprint: 1}, ""), time.Time{})
	}
	honest := storage.StoredKey{Key: "honest", Fingerprint: 2}
	for part := range 3 {
		a.add(keyRecord(t, storage.Traces, part, 3, honest, ""), time.Time{})
	}
	// A request of more parts than denseKeyParts, its parts read out of
	// order and one twice: reported once, when the last comes.
	big := storage.StoredKey{Key: "big", Fingerprint: 3}
	const n = denseKeyParts + 100
	for i := range n + 1 {
		a.add(keyRecord(t, storage.Traces, (i*7919)%n, n, big, ""), time.Time{})
	}
	if len(got) != 2 || got[0] != "honest" || got[1] != "big" {
		t.Errorf("reported %v, want honest and big (pending: %d bytes)", got, a.used)
	}
	if a.used > 100*1024 {
		t.Errorf("100 records of one part each hold %d bytes pending", a.used)
	}
}

// TestKeyAssemblerFutureTimes: a key dated after the read began (a
// producer's clock ahead, or keys planted to push honest ones out of the
// window, which keeps the newest) is reported as of the read's start.
func TestKeyAssemblerFutureTimes(t *testing.T) {
	var got []storage.StoredKey
	a := newKeyAssembler(1<<20, func(k storage.StoredKey) error { got = append(got, k); return nil }, newKeysMetrics(metrics.NewSet()))
	future := a.started.Add(365 * 24 * time.Hour)
	past := a.started.Add(-time.Minute)
	a.add(keyRecord(t, storage.Traces, 0, 1, storage.StoredKey{Key: "planted", Fingerprint: 1}, ""), future)
	a.add(keyRecord(t, storage.Traces, 0, 2, storage.StoredKey{Key: "split", Fingerprint: 2}, ""), past)
	a.add(keyRecord(t, storage.Traces, 1, 2, storage.StoredKey{Key: "split", Fingerprint: 2}, ""), future)
	a.add(keyRecord(t, storage.Traces, 0, 1, storage.StoredKey{Key: "honest", Fingerprint: 3}, ""), past)
	a.finish()
	want := map[string]time.Time{"planted": a.started, "split": a.started, "honest": past}
	if len(got) != len(want) {
		t.Fatalf("reported %+v, want %d keys", got, len(want))
	}
	for _, k := range got {
		if !k.Time.Equal(want[k.Key]) {
			t.Errorf("key %s reported at %v, want %v", k.Key, k.Time, want[k.Key])
		}
	}
}
