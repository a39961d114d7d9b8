package disk

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// burst stores writers records of size bytes (payload's first) at
// once, each waiting for its commit.
func burst(t *testing.T, s *Store, writers, size int) {
	t.Helper()
	payload := bigPayload[:size]
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			if err := s.Write(context.Background(), storage.Traces, payload, 1); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// bigPayload is burst's records.
var bigPayload = make([]byte, 2<<20)

// allocated is what the process has allocated since Go started.
func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// TestBatchBufferReused: a log that commits ten 2 MB records at a time
// (issue 23's unary clients, 10 in flight) reuses its batch buffers
// instead of allocating them again at every commit, grown a quarter at
// a time (84 MB allocated per 20 MB committed before: a buffer over 16
// MiB was dropped after its commit).
func TestBatchBufferReused(t *testing.T) {
	if testing.Short() {
		t.Skip("fsyncs")
	}
	s, err := Open(t.TempDir(), Options{Sync: SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 4 { // the buffers grow to what the batches need
		burst(t, s, 10, 2<<20)
	}
	const rounds = 8
	before := allocated()
	for range rounds {
		burst(t, s, 10, 2<<20)
	}
	// The writers' goroutines, the batches and their channels: a few
	// KiB a round; and a buffer of 2 to 26 MiB grown again when the
	// writers make a batch larger than those seen so far (ten at once
	// after batches of five: rare once warm, but the scheduler
	// decides). Before: 84 MB a round.
	if got := (allocated() - before) / rounds; got > 16<<20 {
		t.Fatalf("%d bytes allocated per burst of 20 MiB once warm, want at most 16 MiB", got)
	}
}

// TestDirectCommitMovesInPlace: a direct commit whose batch was laid out
// for another offset (the segment rolled, or the log's first batch after
// the segment header) moves its records within its own buffer instead of
// allocating a new one.
func TestDirectCommitMovesInPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("fsyncs")
	}
	// A segment takes one record: every commit but the first starts a
	// segment, where the batch laid out after the previous one is not.
	s := openDirect(t, t.TempDir(), Options{Sync: SyncAlways, MaxSegmentSize: 1 << 20})
	defer s.Close()
	payload := make([]byte, 900<<10)
	for i := range payload {
		payload[i] = byte(i)
	}
	ctx := context.Background()
	for range 3 {
		if err := s.Write(ctx, storage.Traces, payload, 1); err != nil {
			t.Fatal(err)
		}
	}
	const writes = 8
	before := allocated()
	for range writes {
		if err := s.Write(ctx, storage.Traces, payload, 1); err != nil {
			t.Fatal(err)
		}
	}
	if got := (allocated() - before) / writes; got > 64<<10 {
		t.Fatalf("%d bytes allocated per commit into a new segment, want at most 64 KiB (a record is 900 KiB)", got)
	}
	s.Close()
	n := 0
	err := Scan(s.dir, storage.Traces, func(r Record) error {
		if len(r.Data) != len(payload) || r.Data[12345] != payload[12345] {
			t.Errorf("record %d read back as %d bytes", n, len(r.Data))
		}
		n++
		return nil
	})
	if err != nil || n != 3+writes {
		t.Fatalf("Scan: %d records, %v; want %d", n, err, 3+writes)
	}
}

// TestBatchBuffersGivenBack holds the memory a burst leaves in a log's
// batch buffers: while smaller batches follow, the burst's buffers go
// once none has needed them for shrinkAfter; after idleRelease without
// commits both buffers go; and nothing acknowledged is lost.
func TestBatchBuffersGivenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		s, err := Open(dir, Options{Sync: SyncNone})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		l := s.logs[storage.Traces]
		const size = 1 << 20
		stored := 0
		for range 3 {
			burst(t, s, 8, size)
			stored += 8
		}
		// Kept while the burst goes on, within the bound: two buffers
		// of about the batch a burst makes.
		if got := l.bufferBytes(); got < 2*size || got > 2*maxKeptBuffer {
			t.Fatalf("a log holds %d bytes of batch buffers during a burst of 8 MiB batches, want 2 MiB to 64 MiB", got)
		}
		// Smaller batches, more often than idleRelease: the burst's
		// buffers go after shrinkAfter.
		for range 2 * shrinkAfter / time.Second {
			burst(t, s, 1, 10<<10)
			stored++
			if got := l.bufferBytes(); got < size {
				break
			}
			time.Sleep(time.Second)
		}
		burst(t, s, 1, 10<<10) // the buffer of the batch written with the last
		stored++
		if got := l.bufferBytes(); got > 4*minBuffer {
			t.Fatalf("a log holds %d bytes of batch buffers %v after its last large batch, want at most %d", got, 2*shrinkAfter, 4*minBuffer)
		}
		// Another burst, then nothing: both buffers go after idleRelease.
		burst(t, s, 8, size)
		stored += 8
		synctest.Wait()
		if got := l.bufferBytes(); got < size {
			t.Fatalf("a log holds %d bytes of batch buffers right after a burst, want its buffers kept", got)
		}
		time.Sleep(idleRelease)
		synctest.Wait()
		if got := l.bufferBytes(); got > minBuffer {
			t.Fatalf("an idle log holds %d bytes of batch buffers %v after its burst, want at most %d", got, idleRelease, minBuffer)
		}
		// And it writes on.
		burst(t, s, 2, size)
		stored += 2
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := Scan(dir, storage.Traces, func(Record) error { n++; return nil }); err != nil || n != stored {
			t.Fatalf("Scan: %d records, %v; want %d", n, err, stored)
		}
	})
}

// TestBatchSizer: the size grows at once to a quarter more than a batch
// that needs more, holds while batches of every size between come (a
// steady load's), falls after shrinkAfter without a batch needing half
// of it, and stays within [minBuffer, maxKeptBuffer].
func TestBatchSizer(t *testing.T) {
	var s batchSizer
	t0 := time.Unix(1000, 0)
	if got := s.want(); got != minBuffer {
		t.Fatalf("a new log's size is %d, want %d", got, minBuffer)
	}
	const mb = 2 << 20
	s.note(10*mb, t0)
	big := s.want()
	if big < 10*mb+10*mb/4 || big > maxKeptBuffer {
		t.Fatalf("after a batch of %d bytes the size is %d, want a quarter more", 10*mb, big)
	}
	// A minute of batches of one to ten requests: the size holds.
	for i := range 600 {
		s.note((1+i%10)*mb, t0.Add(time.Duration(i)*100*time.Millisecond))
		if got := s.want(); got != big {
			t.Fatalf("after batch %d of %d bytes the size is %d, want %d kept", i, (1+i%10)*mb, got, big)
		}
	}
	// Small batches only: the size falls after shrinkAfter, not before.
	t1 := t0.Add(time.Minute)
	for d := time.Duration(0); d < shrinkAfter; d += time.Second {
		s.note(100<<10, t1.Add(d))
	}
	if got := s.want(); got != big {
		t.Fatalf("%v after the last large batch the size is %d, want %d kept", shrinkAfter, got, big)
	}
	s.note(100<<10, t1.Add(shrinkAfter))
	if got := s.want(); got != sizeFor(100<<10) || s.keeps(big) {
		t.Fatalf("%v after the last large batch the size is %d (keeps %d: %v), want %d", shrinkAfter, got, big, s.keeps(big), sizeFor(100<<10))
	}
	// Bounded: a batch over maxKeptBuffer sizes the buffers to the bound,
	// and its own buffer is not kept.
	s.note(3*maxKeptBuffer, t1.Add(time.Hour))
	if got := s.want(); got != maxKeptBuffer || s.keeps(3*maxKeptBuffer) {
		t.Fatalf("after a batch of %d bytes the size is %d, keeps it %v; want %d and not kept", 3*maxKeptBuffer, got, s.keeps(3*maxKeptBuffer), maxKeptBuffer)
	}
}
