package disk

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
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

// failDirectWrites makes the fault layer refuse writes to a file open
// for direct writes with EINVAL (a filesystem or device that takes the
// O_DIRECT open and refuses the writes) until the test ends: all of them,
// or (recordsOnly) those of records, not of the preallocated zeros.
func failDirectWrites(t *testing.T, recordsOnly bool) {
	t.Helper()
	mode := int32(1)
	if recordsOnly {
		mode = 2
	}
	simulatedNoDirect.Store(mode)
	t.Cleanup(func() { simulatedNoDirect.Store(0) })
}

// TestDirectWriteRefused: the filesystem refuses direct writes with
// EINVAL, at the first write of a segment or in the middle of one (the
// preallocated zeros already written). Every write is stored all the
// same, through the page cache; the segment, closed, ends at its last
// record; everything is read back, once, without damage.
func TestDirectWriteRefused(t *testing.T) {
	for _, tc := range []struct {
		before      int
		recordsOnly bool
	}{{0, false}, {0, true}, {5, false}, {5, true}} {
		before := tc.before
		t.Run(fmt.Sprintf("after-%d/records-only-%v", before, tc.recordsOnly), func(t *testing.T) {
			dir := t.TempDir()
			s := openDirect(t, dir, Options{})
			defer s.Close()
			var want []string
			write := func(id string) {
				t.Helper()
				if err := s.Write(context.Background(), storage.Traces, []byte(id+" "+strings.Repeat("d", 5000)), 1); err != nil {
					t.Fatalf("write %s: %v", id, err)
				}
				want = append(want, id)
			}
			for i := range before {
				write(fmt.Sprintf("direct-%d", i))
			}
			failDirectWrites(t, tc.recordsOnly)
			for i := range 5 {
				write(fmt.Sprintf("buffered-%d", i))
			}
			if l := s.logs[storage.Traces]; l.direct || !l.noDirect {
				t.Fatalf("still writing directly after EINVAL: direct %v, noDirect %v", l.direct, l.noDirect)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			path := newestSegment(t, dir, storage.Traces)
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			info, err := summarizeSegment(path, 1, uint8(storage.Traces))
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() != info.bytes {
				t.Fatalf("closed segment is %d bytes, its records end at %d: the preallocated zeros were left", st.Size(), info.bytes)
			}
			if st := s.Stats().Signals[0]; st.WriteErrors != 0 {
				t.Fatalf("%d write errors", st.WriteErrors)
			}
			sameSet(t, scanIDs(t, dir, storage.Traces), want)
		})
	}
}

// TestWalkKeysPreallocated: the keys of a segment whose records are
// followed by preallocated zeros (the live one, or one a crash left) are
// read from the frames, as those of a closed segment, not by reading
// every record whole as for damage.
func TestWalkKeysPreallocated(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{})
	defer s.Close()
	for i := range 20 {
		k := storage.StoredKey{Key: fmt.Sprintf("client/%02d", i), Fingerprint: uint64(i)}
		if err := s.WriteKeyed(context.Background(), storage.Traces, []byte(strings.Repeat("k", 1000)), 1, k); err != nil {
			t.Fatal(err)
		}
	}
	path := newestSegment(t, dir, storage.Traces)
	if st, err := os.Stat(path); err != nil || st.Size() <= s.logs[storage.Traces].size {
		t.Fatalf("no preallocated zeros after the records: %v", err)
	}
	seg, err := openSegment(path, 1, uint8(storage.Traces), make([]byte, 64<<10), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.close()
	keys, ok := walkKeys(seg, storage.Traces, 0)
	if !ok || len(keys) != 20 {
		t.Fatalf("walkKeys: %d keys, ok %v; want 20, true", len(keys), ok)
	}
}

// failingReaderAt is a segment whose bytes from failAt on cannot be read
// (a bad sector: EIO).
type failingReaderAt struct {
	b      []byte
	failAt int64
}

func (f failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.failAt {
		n := max(0, int(f.failAt-off))
		copy(p, f.b[off:off+int64(n)])
		return n, syscall.EIO
	}
	return copy(p, f.b[off:]), nil
}

// TestZeroRunUnreadable: a run of zeros in a closed segment (a lost
// block) whose rest cannot be read is not an end of the records: the
// reader must not take it for a preallocated tail and pass the rest of
// the segment in silence, nor walkKeys or the summary count it whole.
func TestZeroRunUnreadable(t *testing.T) {
	b := appendSegmentHeader(nil, uint8(storage.Traces), CompressionNone)
	b = appendRecord(b, time.Now().UnixNano(), 1, []byte("before"))
	zeros := int64(len(b))
	b = append(b, make([]byte, 600<<10)...) // longer than a window
	b = appendRecord(b, time.Now().UnixNano(), 1, []byte("after the lost block"))
	src := failingReaderAt{b: b, failAt: zeros + 400<<10}
	size := func() (int64, error) { return int64(len(b)), nil }
	seg, err := newSegmentReader(src, size, nil, "seg", 1, uint8(storage.Traces), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if seg.zeroFrom(zeros) {
		t.Fatal("zeroFrom: zeros to the end, across an unreadable region")
	}
	if _, ok := walkKeys(seg, storage.Traces, 0); ok {
		t.Fatal("walkKeys: complete, across an unreadable region")
	}
}
