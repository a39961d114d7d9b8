package disk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// writeRecords stores n records "rec-000".."rec-<n-1>" (padded to size
// bytes) and closes the store.
func writeRecords(t *testing.T, dir string, opts Options, sig storage.Signal, n, size int) {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		p := fmt.Sprintf("rec-%03d-", i)
		p += strings.Repeat("x", max(size-len(p), 0))
		if err := s.Write(context.Background(), sig, []byte(p), 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// scanWithErrors returns the record names Scan saw and the CorruptErrors it
// reported.
func scanWithErrors(t *testing.T, dir string, sig storage.Signal) ([]string, []*CorruptError) {
	t.Helper()
	var names []string
	err := Scan(dir, sig, func(r Record) error {
		names = append(names, string(r.Data[:7]))
		return nil
	})
	var ces []*CorruptError
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Scan: %v", err)
		}
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var ce *CorruptError
			if !errors.As(e, &ce) {
				t.Fatalf("not a CorruptError: %v", e)
			}
			ces = append(ces, ce)
		}
	}
	return names, ces
}

// recordOffset returns the offset of record i (0-based) in a segment of
// equal-size records.
func recordOffset(i, payload int) int64 {
	return int64(segmentHeaderSize + i*(recordHeaderSize+recordMetaSize+payload))
}

// TestMidSegmentCorruption damages records in the middle of a closed
// segment in several ways: each time the reader reports the damaged
// region's exact position and still returns every record after it.
func TestMidSegmentCorruption(t *testing.T) {
	const n, size = 20, 100
	recLen := recordHeaderSize + recordMetaSize + size
	tests := []struct {
		name     string
		compress Compression
		damage   func(b []byte)
		lost     []string // records that must be gone
	}{
		{"flipped payload bit", CompressionNone, func(b []byte) { b[recordOffset(5, size)+40] ^= 0x10 }, []string{"rec-005"}},
		{"flipped length", CompressionNone, func(b []byte) { b[recordOffset(5, size)+1] ^= 0x01 }, []string{"rec-005"}},
		{"zeroed page", CompressionNone, func(b []byte) {
			clear(b[recordOffset(5, size)+3 : recordOffset(8, size)+7])
		}, []string{"rec-005", "rec-006", "rec-007", "rec-008"}},
		{"garbage", CompressionNone, func(b []byte) {
			for i := recordOffset(10, size); i < recordOffset(12, size); i++ {
				b[i] = byte(i * 7)
			}
		}, []string{"rec-010", "rec-011"}},
		{"zstd flipped bit", CompressionZstd, func(b []byte) { b[len(b)/2] ^= 0x80 }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRecords(t, dir, Options{Compression: tt.compress}, storage.Traces, n, size)
			// Reopen once so that the written segment is a closed one.
			s, _ := Open(dir, Options{})
			s.Close()
			path := filepath.Join(dir, "traces", segmentName(1))
			b, _ := os.ReadFile(path)
			tt.damage(b)
			os.WriteFile(path, b, 0o644)

			names, ces := scanWithErrors(t, dir, storage.Traces)
			if len(ces) != 1 {
				t.Fatalf("want one corrupt region, got %v", ces)
			}
			ce := ces[0]
			if ce.Path != path || ce.Offset < segmentHeaderSize || ce.Skipped <= 0 || ce.Reason == "" {
				t.Fatalf("CorruptError lacks its position: %+v", ce)
			}
			if tt.compress == CompressionNone {
				first := recordOffset(0, size)
				if (ce.Offset-first)%int64(recLen) != 0 {
					t.Fatalf("damage reported at %d, not at a record start", ce.Offset)
				}
				if len(names) != n-len(tt.lost) {
					t.Fatalf("got %d records, want %d: %v", len(names), n-len(tt.lost), names)
				}
				for _, lost := range tt.lost {
					for _, got := range names {
						if got == lost {
							t.Fatalf("damaged record %s was returned", lost)
						}
					}
				}
			} else if len(names) < n-2 || len(names) >= n {
				t.Fatalf("zstd: got %d of %d records", len(names), n)
			}
			// Stats count the records after the damage too. They walk
			// headers without CRCs, so a record whose framing survived
			// (a flipped payload bit) still counts.
			if st, err := ReadStats(dir); err != nil || st.Signals[0].Records < int64(len(names)) || st.Signals[0].Records > n {
				t.Fatalf("ReadStats: %d records (%v), readable %d", st.Signals[0].Records, err, len(names))
			}
			// The records after the damage come out in order.
			if names[len(names)-1] != fmt.Sprintf("rec-%03d", n-1) {
				t.Fatalf("last record %s", names[len(names)-1])
			}
		})
	}
}

// TestRecoveryKeepsRecordsAfterMidSegmentDamage: damage in the middle of
// the newest segment is not a torn tail. Recovery must not cut there (the
// records after it were acknowledged); it logs the damage, and new writes
// go on after the last valid record.
func TestRecoveryKeepsRecordsAfterMidSegmentDamage(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, Options{}, storage.Logs, 10, 50)
	path := filepath.Join(dir, "logs", segmentName(1))
	b, _ := os.ReadFile(path)
	b[recordOffset(3, 50)+30] ^= 1
	os.WriteFile(path, b, 0o644)

	var logBuf bytes.Buffer
	s, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), storage.Logs, []byte("rec-new-after"), 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !strings.Contains(logBuf.String(), "damaged region") || !strings.Contains(logBuf.String(), fmt.Sprintf("offset %d", recordOffset(3, 50))) {
		t.Fatalf("damage not logged with its offset: %s", logBuf.String())
	}
	names, ces := scanWithErrors(t, dir, storage.Logs)
	if len(ces) != 1 || ces[0].Offset != recordOffset(3, 50) {
		t.Fatalf("corrupt regions: %v", ces)
	}
	if len(names) != 10 || names[2] != "rec-002" || names[3] != "rec-004" || names[9] != "rec-new" {
		t.Fatalf("got %v", names)
	}
	if st, _ := os.Stat(path); st.Size() != int64(len(b)) {
		t.Fatalf("recovery changed the damaged segment's size from %d to %d", len(b), st.Size())
	}
}

// TestBadSegmentHeaderSkipped: a closed segment whose header is destroyed
// is reported as a whole and the next segments are still read.
func TestBadSegmentHeaderSkipped(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, Options{MaxSegmentSize: 300}, storage.Metrics, 10, 100)
	path := filepath.Join(dir, "metrics", segmentName(2))
	b, _ := os.ReadFile(path)
	copy(b, "garbage!")
	os.WriteFile(path, b, 0o644)
	names, ces := scanWithErrors(t, dir, storage.Metrics)
	if len(ces) != 1 || ces[0].Path != path || !strings.Contains(ces[0].Reason, "magic") {
		t.Fatalf("corrupt regions: %v", ces)
	}
	if len(names) == 0 || names[len(names)-1] != "rec-009" {
		t.Fatalf("records after the bad segment lost: %v", names)
	}
}
