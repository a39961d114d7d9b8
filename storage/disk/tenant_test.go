package disk

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// Records keep their tenant, compressed or not, next to records without
// one and to a version 1 segment written before tenants existed (which
// read as the default tenant); the per-tenant stats count them.
func TestRecordTenants(t *testing.T) {
	dir := t.TempDir()
	writeV1Segment(t, dir, storage.Traces, 1, "old-a", "old-b")
	type rec struct{ tenant, data string }
	want := []rec{{otlp.DefaultTenant, "old-a"}, {otlp.DefaultTenant, "old-b"}}
	for round, c := range []Compression{CompressionNone, CompressionZstd} {
		s, err := Open(dir, Options{Compression: c})
		if err != nil {
			t.Fatal(err)
		}
		for i, tenant := range []string{"team-a", "", "team-b", otlp.DefaultTenant, "team-a", strings.Repeat("x", 150)} {
			ctx := context.Background()
			if tenant != "" {
				ctx = otlp.WithTenant(ctx, tenant)
			}
			data := fmt.Sprintf("round %d record %d", round, i)
			if err := s.Write(ctx, storage.Traces, []byte(data), 1); err != nil {
				t.Fatal(err)
			}
			if tenant == "" {
				tenant = otlp.DefaultTenant
			}
			want = append(want, rec{tenant, data})
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var got []rec
	err := Scan(dir, storage.Traces, func(r Record) error {
		got = append(got, rec{r.Tenant, string(r.Data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records\n got %v\nwant %v", got, want)
	}
	// Reopened, the store counts every record (the header walk masks
	// the tenant flag out of the item count).
	st, err := ReadStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The v1 segment's records hold 1 and 2 items, the others 1 each.
	if st.Signals[0].Records != int64(len(want)) || st.Signals[0].Items != 3+12 {
		t.Fatalf("stats %+v, want %d records and 15 items", st.Signals[0], len(want))
	}
	ts, err := ReadTenantStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a := ts["team-a"][storage.Traces]; a.Records != 4 || a.Items != 4 {
		t.Fatalf("team-a stats %+v", a)
	}
	// Default: the two v1 records (1 and 2 items), and two a round.
	if d := ts[otlp.DefaultTenant][storage.Traces]; d.Records != 6 || d.Items != 7 {
		t.Fatalf("default stats %+v", d)
	}
}

// A tenant name longer than a record can hold is refused, not cut.
func TestRecordTenantTooLong(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := otlp.WithTenant(context.Background(), strings.Repeat("x", 256))
	if err := s.Write(ctx, storage.Traces, []byte("x"), 1); err == nil {
		t.Fatal("a 256-byte tenant was stored")
	}
}

// A record whose tenant length runs past its body is damage: skipped like
// a CRC failure would be (the CRC is recomputed here to get past it).
func TestRecordTenantCorrupt(t *testing.T) {
	if _, _, err := splitRecordTenant([]byte{5, 'a'}); err == nil {
		t.Fatal("a short tenant was accepted")
	}
	if _, _, err := splitRecordTenant([]byte{0, 'a'}); err == nil {
		t.Fatal("an empty tenant was accepted")
	}
	dir := t.TempDir()
	b := appendSegmentHeader(nil, uint8(storage.Traces), CompressionNone)
	b = appendTenantRecord(b, 1, 1, "team-a", []byte("good"))
	bad := appendTenantRecord(nil, 1, 1, "", []byte("xx"))
	// Set the flag on a record with no tenant bytes: length byte 'x'=120
	// runs past the body.
	bad[recordHeaderSize+11] |= 0x80
	fixCRC(bad)
	b = append(b, bad...)
	b = appendTenantRecord(b, 1, 1, "team-b", []byte("after"))
	d := filepath.Join(dir, "traces")
	os.MkdirAll(d, 0o755)
	os.WriteFile(filepath.Join(d, segmentName(1)), b, 0o644)
	var got []string
	Scan(dir, storage.Traces, func(r Record) error {
		got = append(got, r.Tenant+":"+string(r.Data))
		return nil
	})
	if fmt.Sprint(got) != "[team-a:good team-b:after]" {
		t.Fatalf("got %v", got)
	}
}

// fixCRC recomputes the CRC of the one record in rec.
func fixCRC(rec []byte) {
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(rec[recordHeaderSize:], castagnoli))
}
