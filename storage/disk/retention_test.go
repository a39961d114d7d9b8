package disk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, sig := range storage.Signals {
		segs, _ := listSegments(filepath.Join(dir, sig.String()))
		for _, name := range segs {
			st, err := os.Stat(filepath.Join(dir, sig.String(), name))
			if err == nil {
				n += st.Size()
			}
		}
	}
	return n
}

// recordBytes is dirSize without the zeros preallocated after the last
// record of a segment (direct.go).
func recordBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, sig := range storage.Signals {
		segs, _ := listSegmentSeqs(filepath.Join(dir, sig.String()))
		for _, seq := range segs {
			info, err := summarizeSegment(filepath.Join(dir, sig.String(), segmentName(seq)), seq, uint8(sig))
			if err != nil {
				t.Fatal(err)
			}
			n += info.bytes
		}
	}
	return n
}

// TestRetentionMaxBytes: the store stays within MaxBytes plus the active
// segments, deleting the globally oldest segments first and never the one
// being written, and what is left is the newest data.
func TestRetentionMaxBytes(t *testing.T) {
	dir := t.TempDir()
	const seg, limit = 1024, 4096
	s, err := Open(dir, Options{MaxSegmentSize: seg, MaxBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 200)
	for i := range 200 {
		sig := storage.Traces
		if i%4 == 3 {
			sig = storage.Logs
		}
		copy(payload, fmt.Sprintf("%04d", i))
		if err := s.Write(context.Background(), sig, payload, 1); err != nil {
			t.Fatal(err)
		}
		s.enforceRetention(time.Now()) // as the roll's kick would, but synchronously
	}
	// An active segment written directly is a whole number of blocks,
	// preallocated up to its maximum size (direct.go).
	if got := dirSize(t, dir); got > int64(limit+2*alignUp(max(seg, blockSize))) {
		t.Fatalf("store is %d bytes, limit %d plus two active segments", got, limit)
	}
	st := s.Stats()
	if st.Bytes != recordBytes(t, dir) {
		t.Fatalf("Stats().Bytes = %d, files hold %d up to their last records", st.Bytes, recordBytes(t, dir))
	}
	if st.Signals[0].DeletedSegments == 0 || st.Signals[2].DeletedSegments == 0 {
		t.Fatalf("retention did not delete from both signals: %+v", st.Signals)
	}
	s.Close()
	// The newest records survive, in both signals.
	traces := scanAll(t, dir, storage.Traces)
	if string(traces[len(traces)-1][:4]) != "0198" {
		t.Fatalf("newest trace record is %.4s", traces[len(traces)-1])
	}
	logs := scanAll(t, dir, storage.Logs)
	if string(logs[len(logs)-1][:4]) != "0199" {
		t.Fatalf("newest log record is %.4s", logs[len(logs)-1])
	}
	if len(traces) >= 150 {
		t.Fatalf("nothing deleted: %d traces", len(traces))
	}
}

// TestRetentionMaxAge deletes segments whose newest record is older than
// MaxAge; the active segment stays even when all of it is old.
func TestRetentionMaxAge(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxSegmentSize: 300, MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 20 {
		s.Write(context.Background(), storage.Metrics, []byte(fmt.Sprintf("m%02d-%080d", i, 0)), 1)
	}
	before := s.Stats().Signals[1]
	if n := s.enforceRetention(time.Now()); n != 0 {
		t.Fatalf("deleted %d fresh segments", n)
	}
	n := s.enforceRetention(time.Now().Add(2 * time.Hour))
	after := s.Stats().Signals[1]
	if n != before.Segments-1 || after.Segments != 1 {
		t.Fatalf("deleted %d of %d segments; %d left", n, before.Segments, after.Segments)
	}
	segs, _ := listSegments(filepath.Join(dir, "metrics"))
	if len(segs) != 1 {
		t.Fatalf("%d segment files left", len(segs))
	}
	if err := s.Write(context.Background(), storage.Metrics, []byte("still writable"), 1); err != nil {
		t.Fatal(err)
	}
}

func TestStats(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	s, err := Open(dir, Options{MaxSegmentSize: 500, Compression: CompressionZstd})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		s.Write(context.Background(), storage.Traces, []byte(fmt.Sprintf("t%02d-%0100d", i, i)), 3)
	}
	s.Write(context.Background(), storage.Logs, []byte("one log"), 1)
	end := time.Now()
	st := s.Stats()
	tr := st.Signals[0]
	if tr.Signal != storage.Traces || tr.Records != 30 || tr.Items != 90 || tr.Segments < 2 {
		t.Fatalf("traces: %+v", tr)
	}
	if tr.Oldest.Before(start) || tr.Newest.After(end) || tr.Newest.Before(tr.Oldest) {
		t.Fatalf("time range %v..%v outside %v..%v", tr.Oldest, tr.Newest, start, end)
	}
	if m := st.Signals[1]; m.Records != 0 || !m.Oldest.IsZero() {
		t.Fatalf("metrics: %+v", m)
	}
	if l := st.Signals[2]; l.Records != 1 || l.Items != 1 {
		t.Fatalf("logs: %+v", l)
	}
	// ReadStats, from the files alone and while the store is open, agrees.
	off, err := ReadStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range off.Signals {
		a, b := st.Signals[i], off.Signals[i]
		if a.Records != b.Records || a.Items != b.Items || a.Bytes != b.Bytes || a.Segments != b.Segments ||
			!a.Oldest.Equal(b.Oldest) || !a.Newest.Equal(b.Newest) {
			t.Fatalf("%s: Stats %+v, ReadStats %+v", a.Signal, a, b)
		}
	}
	s.Close()
	// And after a restart, Open's summaries agree too.
	s, _ = Open(dir, Options{})
	defer s.Close()
	if got := s.Stats().Signals[0]; got.Records != 30 || got.Items != 90 || !got.Oldest.Equal(tr.Oldest) {
		t.Fatalf("after reopen: %+v", got)
	}
}
