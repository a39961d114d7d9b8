package disk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

func scanAll(t *testing.T, dir string, sig storage.Signal) [][]byte {
	t.Helper()
	var got [][]byte
	err := Scan(dir, sig, func(r Record) error {
		got = append(got, bytes.Clone(r.Data))
		return nil
	})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return got
}

func TestWriteScanAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxSegmentSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	for i := range 200 {
		p := []byte(fmt.Sprintf("record-%03d-%s", i, bytes.Repeat([]byte{'x'}, i)))
		if err := s.Write(context.Background(), storage.Traces, p, i); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	if err := s.Write(context.Background(), storage.Logs, []byte("log"), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	segs, _ := listSegments(filepath.Join(dir, "traces"))
	if len(segs) < 5 {
		t.Fatalf("want several segments, got %d", len(segs))
	}
	got := scanAll(t, dir, storage.Traces)
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("record %d differs", i)
		}
	}
	var items []int
	Scan(dir, storage.Traces, func(r Record) error { items = append(items, r.Items); return nil })
	if items[7] != 7 {
		t.Fatalf("items not kept: %v", items[:8])
	}
	if n := len(scanAll(t, dir, storage.Logs)); n != 1 {
		t.Fatalf("logs: %d records", n)
	}
	if n := len(scanAll(t, dir, storage.Metrics)); n != 0 {
		t.Fatalf("metrics: %d records", n)
	}
	// Reopening appends after what is there.
	s, err = Open(dir, Options{MaxSegmentSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	s.Write(context.Background(), storage.Traces, []byte("after reopen"), 1)
	s.Close()
	got = scanAll(t, dir, storage.Traces)
	if len(got) != 201 || string(got[200]) != "after reopen" {
		t.Fatalf("after reopen: %d records, last %q", len(got), got[len(got)-1])
	}
}

// TestConcurrentWritersGroupCommit checks that many concurrent writers all
// get their records stored exactly once.
func TestConcurrentWritersGroupCommit(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 16, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := s.Write(context.Background(), storage.Metrics, []byte(fmt.Sprintf("%d/%d", w, i)), 1); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	s.Close()
	seen := map[string]bool{}
	for _, r := range scanAll(t, dir, storage.Metrics) {
		if seen[string(r)] {
			t.Fatalf("duplicate %q", r)
		}
		seen[string(r)] = true
	}
	if len(seen) != writers*each {
		t.Fatalf("stored %d, want %d", len(seen), writers*each)
	}
	if err := s.Write(context.Background(), storage.Metrics, []byte("late"), 1); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
}

// TestRecoverTornTail cuts the newest segment at every byte offset inside
// its last record (a crash mid-write) and checks that reopening keeps every
// earlier record, drops the torn one, and accepts new writes after it.
func TestRecoverTornTail(t *testing.T) {
	base := t.TempDir()
	s, _ := Open(base, Options{})
	for i := range 3 {
		s.Write(context.Background(), storage.Traces, []byte(fmt.Sprintf("good-%d", i)), 1)
	}
	s.Write(context.Background(), storage.Traces, []byte("the torn one"), 1)
	s.Close()
	segPath := filepath.Join(base, "traces", segmentName(1))
	full, _ := os.ReadFile(segPath)
	lastLen := recordHeaderSize + recordMetaSize + len("the torn one")
	for cut := len(full) - lastLen; cut < len(full); cut++ {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
		os.WriteFile(filepath.Join(dir, "traces", segmentName(1)), full[:cut], 0o644)
		// Scan tolerates the torn tail before any recovery.
		if got := scanAll(t, dir, storage.Traces); len(got) != 3 {
			t.Fatalf("cut %d: scan saw %d records", cut, len(got))
		}
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		s.Write(context.Background(), storage.Traces, []byte("new"), 1)
		s.Close()
		got := scanAll(t, dir, storage.Traces)
		if len(got) != 4 || string(got[2]) != "good-2" || string(got[3]) != "new" {
			t.Fatalf("cut %d: got %q", cut, got)
		}
	}
}

// TestRecoverCorruptTail flips a byte in the last record: the CRC catches it
// and recovery cuts the record off.
func TestRecoverCorruptTail(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, Options{})
	s.Write(context.Background(), storage.Logs, []byte("keep"), 1)
	s.Write(context.Background(), storage.Logs, []byte("flip"), 1)
	s.Close()
	path := filepath.Join(dir, "logs", segmentName(1))
	b, _ := os.ReadFile(path)
	b[len(b)-1] ^= 0x40
	os.WriteFile(path, b, 0o644)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := scanAll(t, dir, storage.Logs); len(got) != 1 || string(got[0]) != "keep" {
		t.Fatalf("got %q", got)
	}
}

// TestScanReportsCorruptionInOlderSegment: damage before the newest segment
// is not a torn tail; Scan must say where it is rather than hide it.
func TestScanReportsCorruptionInOlderSegment(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, Options{MaxSegmentSize: 64})
	for i := range 4 {
		s.Write(context.Background(), storage.Traces, bytes.Repeat([]byte{byte('a' + i)}, 40), 1)
	}
	s.Close()
	path := filepath.Join(dir, "traces", segmentName(1))
	b, _ := os.ReadFile(path)
	b[segmentHeaderSize+recordHeaderSize+recordMetaSize+3] ^= 1
	os.WriteFile(path, b, 0o644)
	err := Scan(dir, storage.Traces, func(Record) error { return nil })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want ErrCorrupt, got %v", err)
	}
}

func TestOpenRejectsForeignSegment(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "traces"), 0o755)
	os.WriteFile(filepath.Join(dir, "traces", segmentName(1)), []byte("definitely not a segment header"), 0o644)
	if _, err := Open(dir, Options{}); err == nil {
		t.Fatal("Open accepted a file with a bad magic")
	}
}

func TestWriteHonoursContext(t *testing.T) {
	s, _ := Open(t.TempDir(), Options{})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Either the record made it before the check or the canceled context
	// is reported; both are fine, a hang is not.
	_ = s.Write(ctx, storage.Traces, []byte("x"), 1)
}

func TestOpenLocksTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	// Readers need no lock.
	if err := Scan(dir, storage.Traces, func(Record) error { return nil }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s2.Close()
}
