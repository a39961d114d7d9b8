package disk

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// writeIDs writes records "id-<from>"... "id-<to-1>" of 200 bytes each.
func writeIDs(t *testing.T, s *Store, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		p := make([]byte, 200)
		copy(p, fmt.Sprintf("id-%04d", i))
		if err := s.Write(context.Background(), storage.Logs, p, 1); err != nil {
			t.Fatal(err)
		}
	}
}

// nextGap reads c to the end and returns the first record read, how many
// were read and the GapErrors met.
func nextGap(t *testing.T, c *Consumer) (first string, n int, gaps []*GapError) {
	return readGaps(t, c)
}

// readGaps is nextGap for records that need not be text.
func readGaps(t *testing.T, c *Consumer) (first string, n int, gaps []*GapError) {
	t.Helper()
	for {
		r, err := c.Next()
		if err == io.EOF {
			return first, n, gaps
		}
		var g *GapError
		if errors.As(err, &g) {
			gaps = append(gaps, g)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && len(r.Data) >= 7 {
			first = string(r.Data[:7])
		}
		n++
	}
}

// TestConsumerReportsRetentionGap is finding 15 of issue 21 at the source:
// a consumer (not holding) commits after 25 of 100 records, retention
// deletes segments it has not read, and a consumer opened later with the
// same name (as `replay -cursor` is) reports exactly the records it lost,
// then continues with the first one kept. Starting a new consumer at the
// oldest retained record is no gap.
func TestConsumerReportsRetentionGap(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxSegmentSize: 2048, MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writeIDs(t, s, 0, 100)
	c, err := OpenConsumer(dir, "replay", storage.Logs)
	if err != nil {
		t.Fatal(err)
	}
	for range 25 {
		if _, err := c.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// Everything older than now+2h is past the age limit: retention
	// deletes every closed segment.
	if s.enforceRetention(time.Now().Add(2*time.Hour)) == 0 {
		t.Fatal("retention deleted nothing")
	}
	kept := 0
	Scan(dir, storage.Logs, func(Record) error { kept++; return nil })
	if st := s.Stats().Signals[2]; st.Signal != storage.Logs || st.DeletedRecords != int64(100-kept) {
		t.Fatalf("stats: %d records deleted, want %d (otlplite_storage_deleted_records_total)", st.DeletedRecords, 100-kept)
	}
	c, err = OpenConsumer(dir, "replay", storage.Logs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first, n, gaps := nextGap(t, c)
	if len(gaps) != 1 || gaps[0].Records != int64(75-kept) {
		t.Fatalf("gaps %v, want one of %d records (75 after the cursor, %d kept)", gaps, 75-kept, kept)
	}
	if n != kept || first != fmt.Sprintf("id-%04d", 100-kept) {
		t.Fatalf("after the gap read %d records from %s, want the %d kept from id-%04d", n, first, kept, 100-kept)
	}
	t.Logf("%v", gaps[0])
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, _ = OpenConsumer(dir, "replay", storage.Logs)
	if _, n, gaps := nextGap(t, c); len(gaps) != 0 || n != 0 {
		t.Fatalf("committed past the gap, reopened: %d records, gaps %v", n, gaps)
	}
	// One reader per cursor: a second is refused while it is open.
	if _, err := OpenConsumer(dir, "replay", storage.Logs); !errors.Is(err, ErrConsumerInUse) {
		t.Fatalf("a second open of an open consumer: %v, want ErrConsumerInUse", err)
	}
	c.Close()

	fresh, err := OpenConsumer(dir, "new", storage.Logs)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, n, gaps := nextGap(t, fresh); len(gaps) != 0 || n != kept {
		t.Fatalf("a new consumer: %d records, gaps %v (want %d, none)", n, gaps, kept)
	}

	// The count survives a commit made behind the reader (CommitTo, as
	// forwarding commits) and a restart of the store.
	writeIDs(t, s, 100, 160)
	c2, err := OpenConsumer(dir, "replay", storage.Logs)
	if err != nil {
		t.Fatal(err)
	}
	var mid Position
	for i := range 10 {
		if _, err := c2.Next(); err != nil {
			t.Fatal(err)
		}
		if i == 4 {
			mid = c2.Position()
		}
	}
	if err := c2.CommitTo(mid); err != nil {
		t.Fatal(err)
	}
	c2.Close()
	s.Close()
	s, err = Open(dir, Options{MaxSegmentSize: 2048, MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s.enforceRetention(time.Now().Add(2 * time.Hour))
	kept = 0
	Scan(dir, storage.Logs, func(Record) error { kept++; return nil })
	c3, err := OpenConsumer(dir, "replay", storage.Logs)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	_, n, gaps = nextGap(t, c3)
	// 60 records after the committed position, 5 of them before mid.
	if len(gaps) != 1 || gaps[0].Records+int64(n) != 55 || n != kept {
		t.Fatalf("after CommitTo and a restart: gaps %v, read %d, kept %d; want gap + read = 55", gaps, n, kept)
	}
}

// TestCommitNeedsNoNewFile: once a cursor exists, a commit writes it in
// place, so it succeeds where no file can be created (what a full disk
// refuses; TestCommitOnFullDisk fills a real one). Each commit leaves a
// valid cursor; a torn slot leaves the one before.
func TestCommitNeedsNoNewFile(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, Options{}, storage.Logs, 10, 50)
	c, err := OpenConsumerAt(dir, "c", storage.Logs, StartOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cdir := filepath.Join(dir, "cursors", "logs")
	if err := os.Chmod(cdir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(cdir, 0o755)
	if f, err := os.Create(filepath.Join(cdir, "probe")); err == nil {
		f.Close()
		os.Remove(filepath.Join(cdir, "probe"))
		t.Log("running as root: a read-only directory does not stop file creation here; TestCommitOnFullDisk covers it")
	}
	path := filepath.Join(cdir, "c.cursor")
	var prev posValue
	for i := range 10 {
		if _, err := c.Next(); err != nil {
			t.Fatal(err)
		}
		if err := c.Commit(); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		v, _, err := readPosFile(path)
		if err != nil || v.pos != c.Position() || v.ordinal != int64(i+1) {
			t.Fatalf("after commit %d the cursor reads %+v, %v; want %+v ordinal %d", i, v, err, c.Position(), i+1)
		}
		// Tear the slot just written: the file reads as the commit before.
		if i > 0 {
			b, _ := os.ReadFile(path)
			_, slot, _, _ := decodePos(b)
			b[slot*posSlotSize+20] ^= 0xff
			if got, _, _, ok := decodePos(b); !ok || got != prev {
				t.Fatalf("a torn slot reads as %+v (ok %v), want the previous %+v", got, ok, prev)
			}
		}
		prev = posValue{pos: c.Position(), ordinal: int64(i + 1)}
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatal("temporary cursor file left behind")
	}
}

// TestVersion1Cursor: a cursor written by a binary before position files
// (32 bytes) is read, counted and upgraded in place by the next commit; if
// its segment was deleted before it is opened, the gap is reported with an
// unknown count.
func TestVersion1Cursor(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, Options{MaxSegmentSize: 1024}, storage.Logs, 40, 100)
	seqs, _ := listSegmentSeqs(filepath.Join(dir, "logs"))
	path := filepath.Join(dir, "cursors", "logs", "old.cursor")
	writeV1 := func(pos Position) {
		var b [32]byte
		copy(b[:8], v1CursorMagic[:])
		binary.LittleEndian.PutUint64(b[8:16], pos.Segment)
		binary.LittleEndian.PutUint64(b[16:24], uint64(pos.Offset))
		binary.LittleEndian.PutUint32(b[24:28], crc32.Checksum(b[:24], castagnoli))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, b[:], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The start of the second segment.
	writeV1(Position{Segment: seqs[1], Offset: segmentHeaderSize})
	c, err := OpenConsumer(dir, "old", storage.Logs)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := c.Next()
	perSeg := int64(0)
	Scan(dir, storage.Logs, func(r Record) error {
		if r.Segment == segmentName(seqs[0]) {
			perSeg++
		}
		return nil
	})
	if c.r.ord != perSeg+1 {
		t.Fatalf("ordinal after the first record: %d, want %d", c.r.ord, perSeg+1)
	}
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if b, _ := os.ReadFile(path); len(b) != posFileSize {
		t.Fatalf("upgraded cursor is %d bytes", len(b))
	}
	c, _ = OpenConsumer(dir, "old", storage.Logs)
	r, err := c.Next()
	if err != nil || string(r.Data[:7]) == string(first.Data[:7]) {
		t.Fatalf("after the upgrade: %q, %v", r.Data[:7], err)
	}
	c.Close()

	// A version-1 cursor in a segment retention deleted.
	s, err := Open(dir, Options{MaxSegmentSize: 1024, MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writeV1(Position{Segment: seqs[1], Offset: segmentHeaderSize})
	s.enforceRetention(time.Now().Add(2 * time.Hour))
	c, _ = OpenConsumer(dir, "old", storage.Logs)
	defer c.Close()
	_, _, gaps := nextGap(t, c)
	if len(gaps) != 1 || gaps[0].Records != -1 {
		t.Fatalf("gaps %v, want one of unknown size", gaps)
	}
}

// TestStartEndConsumerReportsGap: a consumer that began at the end of the
// log (forwarding's start=now) reports a gap like any other.
func TestStartEndConsumerReportsGap(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxSegmentSize: 2048, MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writeIDs(t, s, 0, 20)
	// The instance that created the cursor reads on (as a forwarder
	// does), after retention deleted what arrived since.
	c, err := OpenConsumerAt(dir, "now", storage.Logs, StartEnd)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	writeIDs(t, s, 20, 60)
	s.enforceRetention(time.Now().Add(2 * time.Hour))
	kept := 0
	Scan(dir, storage.Logs, func(Record) error { kept++; return nil })
	_, n, gaps := nextGap(t, c)
	if len(gaps) != 1 || gaps[0].Records != int64(40-kept) || n != kept {
		t.Fatalf("gaps %v, read %d; want a gap of %d and the %d kept", gaps, n, 40-kept, kept)
	}
}

// TestGapAcrossUpgrade: segments deleted by a binary from before retention
// marks were never counted; a version-1 cursor in one of them still
// reports a gap (of unknown size) once a store with retention has opened
// the directory, rather than skipping silently.
func TestGapAcrossUpgrade(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, Options{MaxSegmentSize: 1024}, storage.Logs, 40, 100)
	seqs, _ := listSegmentSeqs(filepath.Join(dir, "logs"))
	var b [32]byte
	copy(b[:8], v1CursorMagic[:])
	binary.LittleEndian.PutUint64(b[8:16], seqs[1])
	binary.LittleEndian.PutUint64(b[16:24], segmentHeaderSize)
	binary.LittleEndian.PutUint32(b[24:28], crc32.Checksum(b[:24], castagnoli))
	path := filepath.Join(dir, "cursors", "logs", "old.cursor")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, b[:], 0o644); err != nil {
		t.Fatal(err)
	}
	// The old binary's retention.
	for _, seq := range seqs[:3] {
		os.Remove(filepath.Join(dir, "logs", segmentName(seq)))
	}
	s, err := Open(dir, Options{MaxSegmentSize: 1024, MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := OpenConsumer(dir, "old", storage.Logs)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, n, gaps := nextGap(t, c); len(gaps) != 1 || gaps[0].Records != -1 || n == 0 {
		t.Fatalf("gaps %v, %d records read; want one gap of unknown size, then the rest", gaps, n)
	}
	// A new consumer starts at the oldest record there is: no gap.
	fresh, err := OpenConsumer(dir, "fresh", storage.Logs)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, _, gaps := nextGap(t, fresh); len(gaps) != 0 {
		t.Fatalf("a new consumer: gaps %v", gaps)
	}
}
