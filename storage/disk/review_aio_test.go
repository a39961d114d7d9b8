package disk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestOpenCloseReleasesAIO: a directly written log sets up an AIO
// context and an eventfd at its first commit (aio_linux.go), and maps
// batch buffers; opening a store, committing and closing it many times
// leaves the process's descriptors, AIO rings ("[aio]" mappings) and
// mappings as they were, and the system's aio-nr too.
func TestOpenCloseReleasesAIO(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{MaxSegmentSize: 64 << 10})
	s.Close()
	count := func() (fds, rings, maps, aioNr int) {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip(err)
		}
		m, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skip(err)
		}
		nr := -1
		if b, err := os.ReadFile("/proc/sys/fs/aio-nr"); err == nil {
			nr, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		return len(ents), bytes.Count(m, []byte("[aio]")), bytes.Count(m, []byte("\n")), nr
	}
	cycle := func(i int) {
		s := openDirect(t, dir, Options{MaxSegmentSize: 64 << 10})
		// A small record, and once in a while a large one.
		n := 100
		if i%10 == 0 {
			n = 1 << 20
		}
		if err := s.Write(context.Background(), storage.Traces, make([]byte, n), 1); err != nil {
			t.Fatal(err)
		}
		if s.logs[storage.Traces].aio == nil && !s.logs[storage.Traces].noAIO {
			t.Fatal("a direct commit did not set up AIO")
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	cycle(1)
	fds, rings, maps, nr := count()
	// 60 cycles (each a few fsyncs): a leak of one descriptor, ring or
	// mapping per store shows; 2,000 cycles (130 s) showed none.
	const n = 60
	for i := range n {
		cycle(i)
	}
	fds2, rings2, maps2, nr2 := count()
	t.Logf("fds %d -> %d, [aio] rings %d -> %d, mappings %d -> %d, aio-nr %d -> %d", fds, fds2, rings, rings2, maps, maps2, nr, nr2)
	if fds2 > fds {
		t.Errorf("%d descriptors after %d stores opened and closed, %d before", fds2, n, fds)
	}
	if rings2 > rings {
		t.Errorf("%d AIO rings mapped after %d stores opened and closed, %d before", rings2, n, rings)
	}
	// The runtime maps memory of its own meanwhile: slack well below a
	// leak of one mapping per store (or per 10).
	if maps2 > maps+20 {
		t.Errorf("%d mappings after %d stores opened and closed, %d before", maps2, n, maps)
	}
	// aio-nr is the system's: other processes move it, not by n.
	if nr >= 0 && nr2 > nr+n/4 {
		t.Errorf("aio-nr %d after %d stores opened and closed, %d before", nr2, n, nr)
	}
}

// TestGoodZeroRecordKept: a good record holding whole zero blocks is a
// record (its CRC holds), in the newest segment written in place as
// anywhere: recovery keeps it and what follows.
func TestGoodZeroRecordKept(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{})
	for i := range 6 {
		body := []byte(fmt.Sprintf("rec-%d ", i))
		body = append(body, make([]byte, (i+1)*blockSize)...)
		if err := s.Write(context.Background(), storage.Traces, body, 1); err != nil {
			t.Fatal(err)
		}
	}
	crashed := filepath.Join(t.TempDir(), "crashed")
	snapshotDir(t, dir, crashed)
	s.Close()
	s2, err := Open(crashed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	names, ces := scanWithErrors(t, crashed, storage.Traces)
	if len(names) != 6 || len(ces) != 0 {
		t.Fatalf("records %q, damage %v: want 6 records and no damage", names, ces)
	}
}

// TestDamageInZeroRecordKept: a client's request may hold a run of zeros
// a block long (an attribute of zero bytes; records are not compressed by
// default), so an acknowledged record can overlap a whole zero block. If
// a flipped bit then spoils that record in the newest segment, the bad
// record is damage, not a commit torn by a power loss (the records after
// it were acknowledged): recovery keeps them, and readers report the
// damage, as for any other flipped bit (TestDamageInPreallocatedSegmentKept).
//
// In a compressed segment the zeros are a match in a zstd frame, so a
// flipped bit there is damage too.
func TestDamageInZeroRecordKept(t *testing.T) {
	for _, c := range []Compression{CompressionNone, CompressionZstd} {
		t.Run(fmt.Sprintf("compression-%d", c), func(t *testing.T) { damageInZeroRecordKept(t, c) })
	}
}

func damageInZeroRecordKept(t *testing.T, c Compression) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{Compression: c})
	var offsets []int64
	for i := range 10 {
		offsets = append(offsets, s.logs[storage.Traces].size)
		body := []byte(fmt.Sprintf("rec-%d %s", i, strings.Repeat("d", 900)))
		if i == 3 {
			body = append(body, make([]byte, 3*blockSize)...)
		}
		if err := s.Write(context.Background(), storage.Traces, body, 1); err != nil {
			t.Fatal(err)
		}
	}
	names, ces := recoverDamaged(t, s, dir, func(b []byte) { b[offsets[3]+min(100, (offsets[4]-offsets[3])/2)] ^= 1 })
	if len(names) != 9 || names[3] != "rec-4 d" || names[8] != "rec-9 d" {
		t.Fatalf("acknowledged records after a damaged record of zeros: %v (damage reported: %v)", names, ces)
	}
	if len(ces) != 1 || ces[0].Offset != offsets[3] {
		t.Fatalf("damage reported: %v, want one region at %d", ces, offsets[3])
	}
}

// TestDirectLogInBubble: in a testing/synctest bubble, a directly written
// log's flusher waits for its commit in the network poller (aio_linux.go),
// where the bubble does not take it for durably blocked: the bubble's
// clock then stands still until the disk answers, and nothing hangs.
// Writers, synctest.Wait, a sleep on the bubble's clock and Close all
// return, and the records are there.
func TestDirectLogInBubble(t *testing.T) {
	dir := t.TempDir()
	openDirect(t, dir, Options{}).Close()
	synctest.Test(t, func(t *testing.T) {
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				for j := range 5 {
					if err := s.Write(context.Background(), storage.Traces, []byte(fmt.Sprintf("b%d-%d %s", i, j, strings.Repeat("x", 3000))), 1); err != nil {
						t.Error(err)
					}
				}
			})
		}
		synctest.Wait()
		time.Sleep(time.Minute)
		wg.Wait()
		if l := s.logs[storage.Traces]; !l.direct || (l.aio == nil && !l.noAIO) {
			t.Errorf("direct %v, AIO %v: the commits did not go through a direct write", l.direct, l.aio != nil)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
	if ids := scanIDs(t, dir, storage.Traces); len(ids) != 20 {
		t.Fatalf("%d records, want 20", len(ids))
	}
}

// TestCrashDuringRoll: a crash while the log moves to a new segment
// leaves the new segment with its header alone, the newest; the segment
// before it was cut at its last record, or, if that cut was lost, still
// holds the zeros preallocated after it. Either way every acknowledged
// record is found after recovery, no reader reports damage, and the
// writes after it go on.
func TestCrashDuringRoll(t *testing.T) {
	for _, cutLost := range []bool{false, true} {
		t.Run(fmt.Sprintf("cut-lost=%v", cutLost), func(t *testing.T) {
			dir := t.TempDir()
			s := openDirect(t, dir, Options{MaxSegmentSize: 64 << 10})
			l := s.logs[storage.Traces]
			crashed := filepath.Join(t.TempDir(), "crashed")
			var acked []string
			var prev string // the segment the roll closed
			l.rolled = func() {
				if prev != "" {
					return
				}
				prev = filepath.Join(crashed, storage.Traces.String(), segmentName(l.seq-1))
				snapshotDir(t, dir, crashed)
			}
			for i := 0; prev == ""; i++ {
				id := fmt.Sprintf("r-%03d", i)
				if err := s.Write(context.Background(), storage.Traces, []byte(id+" "+strings.Repeat("r", 9000)), 1); err != nil {
					t.Fatal(err)
				}
				if prev == "" {
					acked = append(acked, id)
				}
			}
			s.Close()
			if cutLost {
				// The cut of the closed segment never reached the
				// disk: the zeros preallocated after its records.
				f, err := os.OpenFile(prev, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				st, _ := f.Stat()
				if _, err := f.Write(make([]byte, blockSize-int(st.Size()%blockSize)+blockSize)); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			ents, _ := os.ReadDir(filepath.Join(crashed, storage.Traces.String()))
			for _, e := range ents {
				if fi, err := e.Info(); err == nil {
					t.Logf("after the crash: %s, %d bytes", e.Name(), fi.Size())
				}
			}
			s2, err := Open(crashed, Options{MaxSegmentSize: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			if err := s2.Write(context.Background(), storage.Traces, []byte("after "+strings.Repeat("a", 100)), 1); err != nil {
				t.Fatal(err)
			}
			s2.Close()
			got, ces := scanWithErrors(t, crashed, storage.Traces)
			if len(ces) != 0 {
				t.Errorf("damage reported: %v", ces)
			}
			if len(got) != len(acked)+1 || got[len(got)-1] != "after a" {
				t.Fatalf("found %d records %q, want the %d acknowledged and the one after", len(got), got, len(acked))
			}
			for i, id := range acked {
				if got[i] != id+" r" {
					t.Fatalf("record %d is %q, want %s", i, got[i], id)
				}
			}
		})
	}
}

// TestCloseDuringCommits: Close while writers commit large records
// (batch buffers in mappings of their own, a commit in flight through
// AIO): Close waits for the commit in flight before it unmaps the
// buffers and closes the AIO context; every acknowledged record is found
// after, and a write after Close is refused, not a fault.
func TestCloseDuringCommits(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var acked []string
	started := make(chan struct{}, 16)
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("w%d-%03d", w, i)
				body := append([]byte(id+" "), make([]byte, 600<<10+i*4096)...)
				err := s.Write(context.Background(), storage.Traces, body, 1)
				if err != nil {
					if !errors.Is(err, storage.ErrClosed) {
						t.Errorf("%s: %v", id, err)
					}
					return
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
				select {
				case started <- struct{}{}:
				default:
				}
			}
		})
	}
	for range 8 {
		<-started
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	l := s.logs[storage.Traces]
	if l.aio != nil {
		t.Fatal("Close left the AIO context")
	}
	sameSet(t, scanIDs(t, dir, storage.Traces), acked)
	t.Logf("%d records acknowledged before Close", len(acked))
}

// TestZeroedSectorAtHeaderKept: a sector of acknowledged data that reads
// as zeros (a disk's fault) where a record header starts, in the newest
// segment written in place, with data after it in the same block. A
// commit torn by a power loss leaves its lost blocks whole, zeros to the
// block's end (the first block lost holds its acknowledged head and the
// zeros preallocated after it); this does not, so it is damage: the
// records after it are kept, and readers report it.
func TestZeroedSectorAtHeaderKept(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{})
	var offsets []int64
	for i := range 10 {
		offsets = append(offsets, s.logs[storage.Traces].size)
		if err := s.Write(context.Background(), storage.Traces, []byte(fmt.Sprintf("rec-%d %s", i, strings.Repeat("z", 900))), 1); err != nil {
			t.Fatal(err)
		}
	}
	k := -1
	for i := 2; i < 8; i++ {
		if offsets[i]%blockSize <= blockSize/2 {
			k = i
			break
		}
	}
	if k < 0 {
		t.Fatalf("no record starts in the first half of a block: %v", offsets)
	}
	names, ces := recoverDamaged(t, s, dir, func(b []byte) { clear(b[offsets[k] : offsets[k]+512]) })
	if len(names) != 9 || names[k] != fmt.Sprintf("rec-%d z", k+1) || names[8] != "rec-9 z" {
		t.Fatalf("acknowledged records after a zeroed sector at record %d: %v (damage reported: %v)", k, names, ces)
	}
	if len(ces) != 1 || ces[0].Offset != offsets[k] {
		t.Fatalf("damage reported: %v, want one region at %d", ces, offsets[k])
	}
}
