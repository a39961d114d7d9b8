package disk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// openDirect opens a SyncAlways store in dir whose traces log writes
// directly (direct.go), or skips the test where the filesystem refuses
// O_DIRECT.
func openDirect(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !s.logs[storage.Traces].direct {
		s.Close()
		t.Skipf("skipping: the filesystem of %s refuses O_DIRECT", dir)
	}
	return s
}

// snapshotDir copies the regular files of src (recursively) to dst: what a
// crash at this moment leaves on the disk, since every acknowledged write
// is on stable storage and the page cache shows what the disk holds.
func snapshotDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if strings.HasSuffix(path, ".lock") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scanIDs returns the ids (the payload up to its first space) of every
// record of signal, failing on any reported damage.
func scanIDs(t *testing.T, dir string, sig storage.Signal) []string {
	t.Helper()
	var ids []string
	err := Scan(dir, sig, func(r Record) error {
		id, _, _ := strings.Cut(string(r.Data), " ")
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return ids
}

// newestSegment returns the path of the newest segment of sig under dir.
func newestSegment(t *testing.T, dir string, sig storage.Signal) string {
	t.Helper()
	seqs, err := listSegmentSeqs(filepath.Join(dir, sig.String()))
	if err != nil || len(seqs) == 0 {
		t.Fatalf("no segment: %v", err)
	}
	return filepath.Join(dir, sig.String(), segmentName(seqs[len(seqs)-1]))
}

// TestDirectCrashKeepsAcknowledged: a crash after OKs leaves the segment
// being written with zeros preallocated after its last record. Reopened,
// the store finds every acknowledged record and nothing else, reports no
// damage, cuts the zeros, and appends after the last record; with
// garbage in the preallocated tail (a write torn by the crash) as well.
func TestDirectCrashKeepsAcknowledged(t *testing.T) {
	for _, tail := range []string{"zeros", "garbage"} {
		t.Run(tail, func(t *testing.T) {
			dir := t.TempDir()
			s := openDirect(t, dir, Options{})
			defer s.Close()
			var mu sync.Mutex
			var acked []string
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 50 {
						id := fmt.Sprintf("w%d-%03d", w, i)
						p := id + " " + strings.Repeat("x", (i*997+w*131)%9000)
						if err := s.Write(context.Background(), storage.Traces, []byte(p), 1); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						acked = append(acked, id)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			l := s.logs[storage.Traces]
			st, err := os.Stat(newestSegment(t, dir, storage.Traces))
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() <= l.size || st.Size()%blockSize != 0 {
				t.Fatalf("segment of %d bytes, records end at %d: want a preallocated tail of whole blocks", st.Size(), l.size)
			}
			// The crash: the disk as it is now, the store never closed.
			crashed := filepath.Join(t.TempDir(), "crashed")
			snapshotDir(t, dir, crashed)
			seg := newestSegment(t, crashed, storage.Traces)
			if tail == "garbage" {
				// Half a record after the last one, as a write the
				// crash cut short leaves: a header and bytes that do
				// not match its CRC.
				f, err := os.OpenFile(seg, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				junk := appendRecord(nil, 1, 1, []byte(strings.Repeat("torn ", 300)))
				junk = junk[:len(junk)/2]
				if _, err := f.WriteAt(junk, l.size); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}

			s2, err := Open(crashed, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if st, err := os.Stat(seg); err != nil || st.Size() != l.size {
				t.Fatalf("recovery left the crashed segment at %v bytes (%v), want it cut at its last record, %d", st.Size(), err, l.size)
			}
			got := scanIDs(t, crashed, storage.Traces)
			if len(got) != len(acked) {
				t.Fatalf("found %d records after the crash, %d were acknowledged", len(got), len(acked))
			}
			sameSet(t, got, acked)
			for i := range 20 {
				id := fmt.Sprintf("after-%02d", i)
				if err := s2.Write(context.Background(), storage.Traces, []byte(id+" "+strings.Repeat("y", i*300)), 1); err != nil {
					t.Fatal(err)
				}
				acked = append(acked, id)
			}
			if err := s2.Close(); err != nil {
				t.Fatal(err)
			}
			got = scanIDs(t, crashed, storage.Traces)
			sameSet(t, got, acked)
			if last := got[len(got)-1]; last != "after-19" {
				t.Fatalf("the last record is %s, want the last one appended", last)
			}
			// A clean close cuts the zeros: the segment ends with its
			// last record.
			st, err = os.Stat(newestSegment(t, crashed, storage.Traces))
			if err != nil {
				t.Fatal(err)
			}
			if info, err := summarizeSegment(newestSegment(t, crashed, storage.Traces), 0, uint8(storage.Traces)); err != nil || info.bytes != st.Size() {
				t.Fatalf("closed segment: %d bytes, records end at %d (%v)", st.Size(), info.bytes, err)
			}
		})
	}
}

// sameSet fails unless got and want hold the same ids, each once.
func sameSet(t *testing.T, got, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	for _, id := range want {
		if seen[id] != 1 {
			t.Fatalf("record %s found %d times", id, seen[id])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("found %d records, want %d", len(got), len(want))
	}
}

// TestReaderSeesInPlaceWrites: a Reader that has caught up with a
// segment written in place (preallocated: it does not grow) returns each
// record as soon as its Write has returned, never an EOF from what it
// read of the zeros before.
func TestReaderSeesInPlaceWrites(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{})
	defer s.Close()
	r := NewReader(dir, storage.Traces, Position{})
	defer r.Close()
	for i := range 300 {
		p := fmt.Sprintf("rec-%03d %s", i, strings.Repeat("z", i*29%3000))
		if err := s.Write(context.Background(), storage.Traces, []byte(p), 1); err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("record %d, written: %v", i, err)
		}
		if string(rec.Data) != p {
			t.Fatalf("record %d reads %.12q", i, rec.Data)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after record %d: %v, want EOF", i, err)
		}
	}
	// Stats and ReadStats count the records' bytes, not the zeros.
	live, read := s.Stats(), mustReadStats(t, dir)
	if live.Signals[0].Bytes != read.Signals[0].Bytes || live.Signals[0].Records != 300 || read.Signals[0].Records != 300 {
		t.Fatalf("Stats %+v, ReadStats %+v", live.Signals[0], read.Signals[0])
	}
}

func mustReadStats(t *testing.T, dir string) Stats {
	t.Helper()
	st, err := ReadStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDiskFullDuringPreallocation: the disk fills when the log must
// extend its preallocated zeros. The write that needs them is refused as
// unavailable and not stored, with the reason; nothing acknowledged is
// damaged; once space returns the next writes are stored, and every
// acknowledged record is read back, once.
func TestDiskFullDuringPreallocation(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{})
	defer s.Close()
	var acked []string
	write := func(id string, n int) error {
		err := s.Write(context.Background(), storage.Traces, []byte(id+" "+strings.Repeat("p", n)), 1)
		if err == nil {
			acked = append(acked, id)
		}
		return err
	}
	// Records up to the end of the first preallocation, less a block.
	l := s.logs[storage.Traces]
	for i := 0; l.size < preallocChunk-2*blockSize; i++ {
		if err := write(fmt.Sprintf("a-%04d", i), min(64<<10, int(preallocChunk-2*blockSize-l.size))); err != nil {
			t.Fatal(err)
		}
	}
	free := simulateFull(t)
	// The next 64 KiB need more than is preallocated.
	err := write("refused", 64<<10)
	if !errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, storage.ErrNotStored) ||
		!strings.Contains(err.Error(), "cannot preallocate") || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("write past the preallocation on a full disk: %v", err)
	}
	sameSet(t, scanIDs(t, dir, storage.Traces), acked)
	free()
	for i := range 10 {
		if err := write(fmt.Sprintf("b-%04d", i), 64<<10); err != nil {
			t.Fatalf("write once space returned: %v", err)
		}
	}
	if st := s.Stats().Signals[0]; st.WriteErrors != 1 || st.Records != int64(len(acked)) {
		t.Fatalf("stats: %d write errors, %d records; want 1 and %d", st.WriteErrors, st.Records, len(acked))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sameSet(t, scanIDs(t, dir, storage.Traces), acked)
}

// TestZeroTailOfClosedSegment: zeros after the last record of a closed
// segment (a cut that failed when it was closed) are not data: readers
// pass them without reporting damage. Zeros followed by records (a lost
// block) are damage: reported, and the records after them are read.
func TestZeroTailOfClosedSegment(t *testing.T) {
	for _, tc := range []struct {
		name    string
		after   bool // records after the zeros
		corrupt int
	}{{"tail", false, 0}, {"hole", true, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRecords(t, dir, Options{}, storage.Logs, 10, 300)
			first := newestSegment(t, dir, storage.Logs)
			f, err := os.OpenFile(first, os.O_RDWR|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(make([]byte, 3*blockSize+5)); err != nil {
				t.Fatal(err)
			}
			if tc.after {
				if _, err := f.Write(appendRecord(nil, 1e18, 1, []byte("rec-after-hole"))); err != nil {
					t.Fatal(err)
				}
			}
			f.Close()
			writeRecords(t, dir, Options{}, storage.Logs, 3, 300) // a later segment: the first is closed
			var n int
			var corrupt []error
			r := NewReader(dir, storage.Logs, Position{})
			defer r.Close()
			for {
				_, err := r.Next()
				if err == io.EOF {
					break
				}
				if errors.Is(err, ErrCorrupt) {
					corrupt = append(corrupt, err)
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			want := 13
			if tc.after {
				want++
			}
			if n != want || len(corrupt) != tc.corrupt {
				t.Fatalf("read %d records (want %d), damage %v (want %d reports)", n, want, corrupt, tc.corrupt)
			}
			if info, err := summarizeSegment(first, 1, uint8(storage.Logs)); err != nil || info.records != int64(want-3) {
				t.Fatalf("summary of the first segment: %+v, %v", info, err)
			}
		})
	}
}

// TestReadKeysPreallocated: the window of idempotency keys (RebuildDedup)
// is read from a segment being written, preallocated, and from the
// segment a crash left with its zeros: every key, each once, no damage.
func TestReadKeysPreallocated(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{})
	defer s.Close()
	ctx := context.Background()
	var want []string
	for i := range 40 {
		k := storage.StoredKey{Key: fmt.Sprintf("client/%02d", i), Fingerprint: uint64(i)}
		if err := s.WriteKeyed(ctx, storage.Traces, []byte(strings.Repeat("s", i*100)), 1, k); err != nil {
			t.Fatal(err)
		}
		want = append(want, k.Key)
	}
	readKeys := func(s *Store) []string {
		var got []string
		if err := s.ReadKeys(time.Now().Add(-time.Hour), func(k storage.StoredKey) error { got = append(got, k.Key); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := readKeys(s); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("keys of the live segment: %v", got)
	}
	crashed := filepath.Join(t.TempDir(), "crashed")
	snapshotDir(t, dir, crashed)
	s2, err := Open(crashed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := readKeys(s2); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("keys after the crash: %v", got)
	}
}
