package disk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestPowerLossMidCommit: a power loss in the middle of a direct group
// commit into a preallocated segment keeps some of its blocks and loses
// others (they land in any order), so records that were never
// acknowledged can follow a hole of zeros. Recovery takes the hole for
// the end of the log: every acknowledged record is found, none of the
// failed commit's records after the hole is, and no reader reports
// damage. The hole is where a record header would be (the batch's first
// block lost) or inside a record (a later block lost).
//
// A hole inside a record is taken for a lost write only in a compressed
// segment (segmentReader.lostBlock): in an uncompressed one the record
// may hold a client's zeros, so it is damage, and the records of the torn
// commit after it may be found (never acknowledged: at least once), but
// every acknowledged record is, first and in order.
func TestPowerLossMidCommit(t *testing.T) {
	for _, c := range []Compression{CompressionZstd, CompressionNone} {
		for _, lost := range []int{0, 1, 2} {
			t.Run(fmt.Sprintf("compression-%d/block-%d-lost", c, lost), func(t *testing.T) {
				powerLossMidCommit(t, c, lost)
			})
		}
	}
}

// tornFill is n bytes of b, or, in a compressed segment, n bytes that
// zstd cannot shrink (the torn batch must span several blocks).
func tornFill(c Compression, b byte, n int) string {
	if c == CompressionNone {
		return strings.Repeat(string(b), n)
	}
	out := make([]byte, n)
	x := uint32(b) * 2654435761
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = 'a' + byte(x%26)
	}
	return string(out)
}

func powerLossMidCommit(t *testing.T, c Compression, lost int) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{Compression: c})
	defer s.Close()
	l := s.logs[storage.Traces]
	ctx := context.Background()
	var acked []string
	for i := range 5 {
		id := fmt.Sprintf("acked-%d", i)
		if err := s.Write(ctx, storage.Traces, []byte(id+" "+tornFill(c, 'a', 700*i)), 1); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, id)
	}

	// The next commit (one record) waits in the fault layer until the
	// batch after it holds six records; that batch's commit is the one
	// the power loss interrupts.
	hold, release := make(chan struct{}), make(chan struct{})
	crashed := filepath.Join(t.TempDir(), "crashed")
	var commits int
	var hole int64 // where the lost block starts
	commit := func(f *os.File, b []byte, off int64) error {
		commits++
		switch commits {
		case 1:
			close(hold)
			<-release
			_, err := f.WriteAt(b, off)
			return err
		case 2:
			if len(b) < (lost+2)*blockSize {
				return fmt.Errorf("the torn batch is %d bytes, want more than %d blocks", len(b), lost+1)
			}
			// Every block lands but one; the disk is then as the
			// power loss leaves it.
			// (The first block rewrites the acknowledged bytes of
			// its head too: lost, it holds them still.)
			hole = max(off+int64(lost*blockSize), l.size)
			for blk := 0; blk*blockSize < len(b); blk++ {
				if blk == lost {
					continue
				}
				p := b[blk*blockSize : min(len(b), (blk+1)*blockSize)]
				if _, err := f.WriteAt(p, off+int64(blk*blockSize)); err != nil {
					return err
				}
			}
			snapshotDir(t, dir, crashed)
			return syscall.EIO
		}
		_, err := f.WriteAt(b, off)
		return err
	}
	simulatedCommit.Store(&commit)
	t.Cleanup(func() { simulatedCommit.Store(nil) })

	first := make(chan error, 1)
	go func() { first <- s.Write(ctx, storage.Traces, []byte("acked-held "+tornFill(c, 'h', 100)), 1) }()
	<-hold
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			// Never acknowledged: the commit fails.
			if err := s.Write(ctx, storage.Traces, []byte(fmt.Sprintf("torn-%d %s", i, tornFill(c, byte('t'+i), 1500))), 1); err == nil {
				t.Errorf("torn-%d: acknowledged", i)
			}
		})
	}
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		l.mu.Lock()
		n := l.cur.records
		l.mu.Unlock()
		if n == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 6 records in the batch", n)
		}
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	acked = append(acked, "acked-held")
	wg.Wait()
	if _, err := os.Stat(crashed); err != nil {
		t.Fatalf("the torn commit did not run: %v", err)
	}

	s2, err := Open(crashed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	// A hole inside an uncompressed record is damage (lostBlock): the
	// records after it are kept and readers report it.
	strict := c != CompressionNone || lost == 0
	var got []string
	err = Scan(crashed, storage.Traces, func(r Record) error {
		id, _, _ := strings.Cut(string(r.Data), " ")
		got = append(got, id)
		if strict && r.Offset >= hole {
			t.Errorf("%s at %d, after the hole at %d: a record the lost block kept from being acknowledged", id, r.Offset, hole)
		}
		return nil
	})
	if err != nil && (strict || !errors.Is(err, ErrCorrupt)) {
		t.Fatalf("a reader reports damage after the power loss: %v", err)
	}
	// The acknowledged records, then at most the torn batch's records
	// that landed whole before its hole: never one after it.
	if len(got) < len(acked) {
		t.Fatalf("found %v, want the acknowledged %v first", got, acked)
	}
	for i, id := range acked {
		if got[i] != id {
			t.Fatalf("record %d is %s, want %s (found %v)", i, got[i], id, got)
		}
	}
	torn := got[len(acked):]
	for _, id := range torn {
		if !strings.HasPrefix(id, "torn-") {
			t.Fatalf("unexpected record %s after the acknowledged ones", id)
		}
	}
	// Whatever the writers' order in the batch, the records found of
	// it lie before the lost block: with block 0 lost, none.
	if lost == 0 && len(torn) > 0 {
		t.Fatalf("found %v of a commit whose first block was lost", torn)
	}
	t.Logf("lost block %d: found %d of the torn batch's 6 records", lost, len(torn))
}

// TestDamageInPreallocatedSegmentKept: in a segment written in place,
// only a hole of zeros ends the log at recovery (TestPowerLossMidCommit).
// A bad record that no block of zeros explains (a flipped bit) is damage
// in acknowledged data, as in any segment: the records after it are
// kept, and readers report the damage.
func TestDamageInPreallocatedSegmentKept(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{})
	var offsets []int64
	for i := range 10 {
		offsets = append(offsets, s.logs[storage.Traces].size)
		if err := s.Write(context.Background(), storage.Traces, []byte(fmt.Sprintf("rec-%d %s", i, strings.Repeat("d", 900))), 1); err != nil {
			t.Fatal(err)
		}
	}
	names, ces := recoverDamaged(t, s, dir, func(b []byte) { b[offsets[3]+100] ^= 1 })
	if len(ces) != 1 || ces[0].Offset != offsets[3] {
		t.Fatalf("damage reported: %v, want one region at %d", ces, offsets[3])
	}
	if len(names) != 9 || names[3] != "rec-4 d" || names[8] != "rec-9 d" {
		t.Fatalf("records after the damage: %v", names)
	}
}

// recoverDamaged takes dir as a crash leaves it (a snapshot, s never
// closed before it), lets damage change the bytes of the snapshot's newest
// traces segment, recovers the snapshot (Open, Close) and returns what a
// reader then finds there: the records' names and the damage reported.
// s is closed.
func recoverDamaged(t *testing.T, s *Store, dir string, damage func(b []byte)) ([]string, []*CorruptError) {
	t.Helper()
	crashed := filepath.Join(t.TempDir(), "crashed")
	snapshotDir(t, dir, crashed)
	s.Close()
	seg := newestSegment(t, crashed, storage.Traces)
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	damage(b)
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(crashed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	return scanWithErrors(t, crashed, storage.Traces)
}
