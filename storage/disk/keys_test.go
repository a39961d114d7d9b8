package disk

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// TestKeyedRecords: a record written with a key reads back with its
// payload and key (plain and zstd segments, with and without a tenant),
// beside records without one; ReadKeys returns the keys received since a
// time, with their tenant, items and time, and nothing of older records.
func TestKeyedRecords(t *testing.T) {
	for _, c := range []Compression{CompressionNone, CompressionZstd} {
		t.Run(c.String(), func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{Compression: c, Sync: SyncNone})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			team := otlp.WithTenant(ctx, "team-a")
			k1 := storage.StoredKey{Key: "client/1", Fingerprint: 11, Rejected: 2, Message: "2 of 5 spans rejected"}
			k2 := storage.StoredKey{Key: strings.Repeat("k", otlp.MaxIdempotencyKeyLen), Fingerprint: 1 << 63}
			if err := s.WriteKeyed(ctx, storage.Traces, []byte("one"), 3, k1); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, storage.Traces, []byte("plain"), 1); err != nil {
				t.Fatal(err)
			}
			if err := s.WriteKeyed(team, storage.Logs, []byte("two"), 1, k2); err != nil {
				t.Fatal(err)
			}
			s.Close()

			var got []string
			for _, sig := range []storage.Signal{storage.Traces, storage.Logs} {
				err := Scan(dir, sig, func(r Record) error {
					k, ok := r.IdempotencyKey()
					got = append(got, r.Tenant+" "+string(r.Data)+" "+k.Key[:min(len(k.Key), 8)]+" "+boolText(ok))
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			want := []string{otlp.DefaultTenant + " one client/1 true", otlp.DefaultTenant + " plain  false", "team-a two kkkkkkkk true"}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("records %q, want %q", got, want)
			}

			s, err = Open(dir, Options{Compression: c, Sync: SyncNone})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var keys []storage.StoredKey
			read := func(since time.Time) {
				keys = nil
				if err := s.ReadKeys(since, func(k storage.StoredKey) error { keys = append(keys, k); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			read(time.Now().Add(-time.Minute))
			if len(keys) != 2 {
				t.Fatalf("%d keys, want 2", len(keys))
			}
			a, b := keys[0], keys[1]
			if a.Signal != storage.Traces || a.Tenant != otlp.DefaultTenant || a.Key != k1.Key || a.Fingerprint != 11 || a.Rejected != 2 || a.Message != k1.Message || a.Items != 3 || time.Since(a.Time) > time.Minute {
				t.Fatalf("first key %+v", a)
			}
			if b.Signal != storage.Logs || b.Tenant != "team-a" || b.Key != k2.Key || b.Fingerprint != 1<<63 || b.Items != 1 {
				t.Fatalf("second key %+v", b)
			}
			read(time.Now().Add(time.Minute))
			if len(keys) != 0 {
				t.Fatalf("%d keys newer than the records", len(keys))
			}
		})
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestKeyedWriteRefused: a key the format cannot hold is refused before
// anything is stored.
func TestKeyedWriteRefused(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Sync: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []storage.StoredKey{
		{},
		{Key: strings.Repeat("k", otlp.MaxIdempotencyKeyLen+1)},
		{Key: "k", Message: strings.Repeat("m", storage.MaxStoredKeyMessage+1)},
		{Key: "k", Rejected: -1},
	} {
		err := s.WriteKeyed(context.Background(), storage.Traces, []byte("x"), 1, k)
		if !errors.Is(err, storage.ErrNotStored) || !errors.Is(err, storage.ErrRejected) {
			t.Errorf("key %.20q: %v, want not stored, rejected", k.Key, err)
		}
	}
}

// TestKeyedCrash: a keyed record written and then cut off mid-flush by a
// crash (the store closed without its last fsync, as after SIGKILL with
// the page cache lost) is either wholly there with its key or not at all:
// ReadKeys never returns a key whose record is missing.
func TestKeyedCrash(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{Sync: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 3 {
		if err := s.WriteKeyed(ctx, storage.Traces, []byte("payload"), 1, storage.StoredKey{Key: "k" + string(rune('0'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	// The crash tears the last record: its tail never reached the disk.
	segs, err := listSegments(dir + "/traces")
	if err != nil || len(segs) == 0 {
		t.Fatal(segs, err)
	}
	last := dir + "/traces/" + segs[len(segs)-1]
	if err := truncateBy(last, 5); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{Sync: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var keys []string
	if err := s.ReadKeys(time.Now().Add(-time.Minute), func(k storage.StoredKey) error { keys = append(keys, k.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != "k0,k1" {
		t.Fatalf("keys after the torn write: %v, want k0,k1", keys)
	}
}

// truncateBy cuts n bytes off the end of the file at path.
func truncateBy(path string, n int64) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.Truncate(path, st.Size()-n)
}

// TestKeyedWriteOutlivesContext: a keyed write whose context has ended
// still says whether its record is stored (here: it is), where Write
// would give up waiting and leave that unknown.
func TestKeyedWriteOutlivesContext(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{Sync: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.WriteKeyed(ctx, storage.Traces, []byte("late"), 1, storage.StoredKey{Key: "late-1"}); err != nil {
		t.Fatalf("a keyed write after its context ended: %v, want stored", err)
	}
	s.Close()
	n := 0
	if err := Scan(dir, storage.Traces, func(r Record) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("%d records, %v", n, err)
	}
}

// TestReadKeysDamage: a segment whose frames are damaged mid-way is read
// in full, every CRC checked: the keys of the records around the damage
// are found, the damaged record's is not.
func TestReadKeysDamage(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{Sync: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 3 {
		if err := s.WriteKeyed(ctx, storage.Traces, []byte(strings.Repeat("p", 100)), 1, storage.StoredKey{Key: "k" + string(rune('0'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	segs, _ := listSegments(dir + "/traces")
	path := dir + "/traces/" + segs[len(segs)-1]
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The second record's length, made impossible.
	first, _ := parseRecordHeader(data[segmentHeaderSize:])
	second := segmentHeaderSize + recordHeaderSize + first
	data[second+3] = 0x7f
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{Sync: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var keys []string
	if err := s.ReadKeys(time.Now().Add(-time.Minute), func(k storage.StoredKey) error { keys = append(keys, k.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != "k0,k2" {
		t.Fatalf("keys around the damage: %v, want k0,k2", keys)
	}
}
