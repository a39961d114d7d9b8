package disk

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestReaderWaitsForDirectWriteInFlight: a direct write is one pwrite of
// many blocks, which the block layer may split into requests that land in
// any order, and a reader's buffered read of the range while it is in
// flight may see a later block new and an earlier one still zero. A
// record whose body is not all there yet, followed by a complete record,
// is then a write in progress, not damage: the reader must wait for it
// (io.EOF), and read it once the write has landed, never skip it as
// corrupt.
func TestReaderWaitsForDirectWriteInFlight(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{})
	defer s.Close()
	if err := s.Write(context.Background(), storage.Traces, []byte("rec-0 acked"), 1); err != nil {
		t.Fatal(err)
	}
	r := NewReader(dir, storage.Traces, Position{})
	defer r.Close()
	if rec, err := r.Next(); err != nil || string(rec.Data) != "rec-0 acked" {
		t.Fatalf("first record: %q, %v", rec.Data, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("caught up: %v, want EOF", err)
	}

	// The next batch, two records, as the writer would lay it down after
	// rec-0: the first spans three blocks, the second follows it.
	l := s.logs[storage.Traces]
	at := l.size
	now := time.Now().UnixNano()
	batch := appendRecord(nil, now, 1, []byte("rec-1 "+strings.Repeat("a", 3*blockSize)))
	second := len(batch)
	batch = appendRecord(batch, now, 1, []byte("rec-2 after"))
	f, err := os.OpenFile(newestSegment(t, dir, storage.Traces), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The writer has preallocated zeros past the batch, then sent it. In
	// flight: the block with rec-1's header and the one with rec-2 have
	// landed, rec-1's middle block has not (zeros).
	if err := f.Truncate(alignUp(at+int64(len(batch))) + preallocChunk); err != nil {
		t.Fatal(err)
	}
	hole := alignUp(at+1) + blockSize // a block inside rec-1's body
	if _, err := f.WriteAt(batch[:hole-at], at); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(batch[hole-at+blockSize:], hole+blockSize); err != nil {
		t.Fatal(err)
	}
	if int64(second) <= hole-at+blockSize {
		t.Fatalf("bad layout: rec-2 at %d is inside the hole", second)
	}
	rec, err := r.Next()
	if err != io.EOF {
		t.Fatalf("during the write: %q, %v; want EOF (a write in progress)", rec.Data, err)
	}
	// The write lands.
	if _, err := f.WriteAt(batch, at); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rec-1", "rec-2"} {
		rec, err := r.Next()
		if err != nil || !strings.HasPrefix(string(rec.Data), want+" ") {
			t.Fatalf("after the write: %.8q, %v; want %s", rec.Data, err, want)
		}
	}
}
