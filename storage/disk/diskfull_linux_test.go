package disk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// mountSmallTmpfs mounts a size-limited tmpfs for the test, or skips the
// test where mounting is not permitted (not root, no CAP_SYS_ADMIN).
func mountSmallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("skipping: cannot mount a size-limited tmpfs (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("cannot unmount %s: %v", dir, err)
		}
	})
	return dir
}

// TestDiskFull fills a 4 MiB filesystem: every refused write wraps
// storage.ErrUnavailable, the failures include failed segment rolls, no
// acknowledged record is damaged, and once space is freed writing resumes
// without a restart.
func TestDiskFull(t *testing.T) {
	for _, c := range []Compression{CompressionNone, CompressionZstd} {
		t.Run(c.String(), func(t *testing.T) {
			mnt := mountSmallTmpfs(t, "4m")
			filler := filepath.Join(mnt, "filler")
			if err := os.WriteFile(filler, make([]byte, 1<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(mnt, "data")
			s, err := Open(dir, Options{MaxSegmentSize: 200 << 10, Compression: c})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			payload := make([]byte, 30<<10)
			var acked []string
			var reasons []string
			write := func(i int) error {
				// Distinct, poorly compressible payloads so zstd fills the
				// disk too.
				x := uint64(i)*0x9E3779B97F4A7C15 + 1
				for j := range payload {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					payload[j] = byte(x)
				}
				id := fmt.Sprintf("id-%05d", i)
				copy(payload, id)
				err := s.Write(context.Background(), storage.Traces, payload, 1)
				if err == nil {
					acked = append(acked, id)
				}
				return err
			}
			i := 0
			failures := 0
			for ; i < 1000 && failures < 20; i++ {
				if err := write(i); err != nil {
					if !errors.Is(err, storage.ErrUnavailable) {
						t.Fatalf("write %d: want ErrUnavailable, got %v", i, err)
					}
					reasons = append(reasons, err.Error())
					failures++
				}
			}
			if failures == 0 {
				t.Fatal("the disk never filled")
			}
			all := strings.Join(reasons, "\n")
			if !strings.Contains(all, "no space left on device") {
				t.Fatalf("failures do not say the disk is full:\n%s", all)
			}
			t.Logf("%d acknowledged, %d refused; first refusals:\n%s", len(acked), failures, strings.Join(reasons[:3], "\n"))
			checkAcked(t, dir, acked)

			// Free space: writes succeed again by themselves.
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			for k := 0; k < 2; k++ {
				if err := write(i); err != nil {
					t.Fatalf("write after freeing space: %v", err)
				}
				i++
			}
			// Take every free page: the next write fails, and the roll to
			// a new segment that follows a failure cannot even write the
			// segment header (or its first block), so it leaves no file
			// open; each later write retries the roll.
			last := filepath.Join(mnt, "last-page")
			f, err := os.Create(last)
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := f.Write(make([]byte, 512)); err != nil {
					break
				}
			}
			f.Close()
			// What the log preallocated before takes writes still
			// (direct.go); the first write past it is refused.
			for n := 0; n <= preallocChunk/len(payload); n++ {
				if err := write(i); err != nil {
					if !errors.Is(err, storage.ErrUnavailable) {
						t.Fatalf("write with no free page: %v", err)
					}
					failures++
					break
				}
				i++
			}
			for k := 0; k < 3; k++ {
				err := write(i)
				if !errors.Is(err, storage.ErrUnavailable) {
					t.Fatalf("write with no free page: %v", err)
				}
				// A failed roll, or (the cut of the failed write
				// gave back the zeros preallocated after the last
				// record, room for a new segment's header) a new
				// segment that cannot be preallocated.
				if msg := err.Error(); k > 0 && !strings.Contains(msg, "cannot write segment header") && !strings.Contains(msg, "cannot create segment") && !strings.Contains(msg, "cannot preallocate") {
					t.Fatalf("write after a failure: want a failed roll, got %v", err)
				}
				failures++
			}
			checkAcked(t, dir, acked)
			if err := os.Remove(last); err != nil {
				t.Fatal(err)
			}
			before := len(acked)
			for k := 0; k < 10; k++ {
				if err := write(i + k); err != nil {
					t.Fatalf("write after freeing space: %v", err)
				}
			}
			if len(acked) != before+10 {
				t.Fatal("writes after freeing space not acknowledged")
			}
			if st := s.Stats().Signals[0]; st.WriteErrors != int64(failures) || st.Records != int64(len(acked)) {
				t.Fatalf("stats: %d write errors (want %d), %d records (want %d)", st.WriteErrors, failures, st.Records, len(acked))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			checkAcked(t, dir, acked)
			// And the store reopens cleanly.
			s2, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			s2.Close()
			checkAcked(t, dir, acked)
		})
	}
}

// checkAcked scans dir and requires exactly the acknowledged ids, in order,
// with no damage reported.
func checkAcked(t *testing.T, dir string, acked []string) {
	t.Helper()
	var got []string
	err := Scan(dir, storage.Traces, func(r Record) error {
		got = append(got, string(r.Data[:8]))
		return nil
	})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if strings.Join(got, ",") != strings.Join(acked, ",") {
		t.Fatalf("stored %d records, acknowledged %d:\nstored %v\nacked  %v", len(got), len(acked), got, acked)
	}
}

// fillDisk takes every free byte of the filesystem holding dir with a file
// it returns the path of.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, n := range []int{1 << 16, 512, 1} {
		for {
			if _, err := f.Write(make([]byte, n)); err != nil {
				break
			}
		}
	}
	return path
}

// TestCommitOnFullDisk is finding 12 of issue 21 at the source: a holding
// consumer lags, the log fills the disk and every free byte is taken; the
// consumer catches up and its commit succeeds (on main it needed a new
// temporary file: ENOSPC, and the cursor held every segment against
// max-age for good); retention then deletes what it has passed, and
// writes succeed again without a restart. Nothing acknowledged is lost.
func TestCommitOnFullDisk(t *testing.T) {
	mnt := mountSmallTmpfs(t, "1m")
	dir := filepath.Join(mnt, "data")
	s, err := Open(dir, Options{MaxSegmentSize: 64 << 10, MaxAge: time.Hour, HoldPrefix: "fwd."})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := OpenConsumerAt(dir, "fwd.a", storage.Traces, StartOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	payload := make([]byte, 4<<10)
	acked := 0
	for {
		copy(payload, fmt.Sprintf("id-%05d", acked))
		if err := s.Write(context.Background(), storage.Traces, payload, 1); err != nil {
			if !errors.Is(err, storage.ErrUnavailable) {
				t.Fatal(err)
			}
			break
		}
		acked++
	}
	fillDisk(t, mnt)
	// The lagging consumer catches up and commits, on a disk without a
	// free byte.
	read := 0
	for {
		_, err := c.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		read++
		if read%10 == 0 {
			if err := c.Commit(); err != nil {
				t.Fatalf("commit after %d records on a full disk: %v", read, err)
			}
		}
	}
	if err := c.Commit(); err != nil {
		t.Fatalf("commit on a full disk: %v", err)
	}
	if read != acked {
		t.Fatalf("read %d of %d acknowledged records", read, acked)
	}
	// Every segment is past max-age and committed: retention frees the
	// disk, and the store accepts writes again by itself.
	if n := s.enforceRetention(time.Now().Add(2 * time.Hour)); n == 0 {
		t.Fatal("retention deleted nothing after the commit")
	}
	if err := s.Write(context.Background(), storage.Traces, payload, 1); err != nil {
		t.Fatalf("write after retention freed space: %v", err)
	}
	t.Logf("%d records filled the disk; the consumer committed them all on a full disk", acked)
}

// TestOpenOnFullDisk: a store restarted on a full disk opens (on main it
// failed: recovery could not create the new segment, nor could retention
// or forwarding then run to free it); writes are refused as unavailable
// while it is full and succeed once space returns, and retention deletes
// on a full disk.
func TestOpenOnFullDisk(t *testing.T) {
	mnt := mountSmallTmpfs(t, "1m")
	dir := filepath.Join(mnt, "data")
	// Written without retention first: there is no retention mark yet,
	// and the full disk cannot take one when the store reopens with it.
	s, err := Open(dir, Options{MaxSegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenConsumerAt(dir, "c", storage.Traces, StartOldest)
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 4<<10)
	acked := 0
	for s.Write(context.Background(), storage.Traces, payload, 1) == nil {
		acked++
	}
	s.Close()
	for range 5 {
		c.Next()
	}
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	opts := Options{MaxSegmentSize: 64 << 10, MaxAge: time.Hour}
	filler := fillDisk(t, mnt)
	s, err = Open(dir, opts)
	if err != nil {
		t.Fatalf("open on a full disk: %v", err)
	}
	defer s.Close()
	if err := s.Write(context.Background(), storage.Traces, payload, 1); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("write on a full disk: %v, want ErrUnavailable", err)
	}
	if n := s.enforceRetention(time.Now().Add(2 * time.Hour)); n == 0 {
		t.Fatal("retention deleted nothing on a full disk")
	}
	// The mark was created with the space the first deletion freed: a
	// consumer behind retention counts exactly what it lost.
	c, err = OpenConsumer(dir, "c", storage.Traces)
	if err != nil {
		t.Fatal(err)
	}
	_, read, gaps := readGaps(t, c)
	c.Close()
	if len(gaps) != 1 || gaps[0].Records+int64(read) != int64(acked-5) {
		t.Fatalf("gaps %v and %d records read, want a gap of the %d records after the cursor less those kept", gaps, read, acked-5)
	}
	if err := s.Write(context.Background(), storage.Traces, payload, 1); err != nil {
		t.Fatalf("write after retention freed space: %v", err)
	}
	os.Remove(filler)
	n := 0
	if err := Scan(dir, storage.Traces, func(Record) error { n++; return nil }); err != nil || n < 1 || n >= acked {
		// The last segment written before the restart is kept: with no
		// new segment it is the one retention treats as being written.
		t.Fatalf("%d records (%v) after retention deleted most of the %d old ones and one was written", n, err, acked)
	}
}

// TestFullDiskOneSegment: the disk fills before the first segment reaches
// its size, so the log is one segment, and the roll that follows a failed
// write cannot create the next. That segment is no longer being written:
// retention deletes it once it expires (on main it counted as the active
// segment, never deleted, and the store refused writes for good).
func TestFullDiskOneSegment(t *testing.T) {
	mnt := mountSmallTmpfs(t, "1m")
	dir := filepath.Join(mnt, "data")
	s, err := Open(dir, Options{MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	payload := make([]byte, 4<<10)
	failed := 0
	for failed < 3 {
		if err := s.Write(context.Background(), storage.Traces, payload, 1); err != nil {
			failed++
		}
	}
	fillDisk(t, mnt)
	if st := s.Stats().Signals[0]; st.Segments != 1 {
		t.Fatalf("%d segments, want the one the disk filled", st.Segments)
	}
	if n := s.enforceRetention(time.Now().Add(2 * time.Hour)); n != 1 {
		t.Fatalf("retention deleted %d segments, want the expired one no longer written", n)
	}
	if err := s.Write(context.Background(), storage.Traces, payload, 1); err != nil {
		t.Fatalf("write after retention freed the disk: %v", err)
	}
}
