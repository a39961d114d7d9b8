package disk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// drain reads c to io.EOF and returns the payloads.
func drain(t *testing.T, next func() (Record, error)) []string {
	t.Helper()
	var got []string
	for {
		r, err := next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, string(r.Data))
	}
}

func TestConsumerResumesFromCommit(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxSegmentSize: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(from, to int) {
		for i := from; i < to; i++ {
			if err := s.Write(context.Background(), storage.Traces, []byte(fmt.Sprintf("r%02d", i)), 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(0, 10)

	c, err := OpenConsumer(dir, "fwd", storage.Traces)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		r, err := c.Next()
		if err != nil || string(r.Data) != fmt.Sprintf("r%02d", i) {
			t.Fatalf("Next %d = %q, %v", i, r.Data, err)
		}
	}
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	c.Next() // r04 read but not committed: a crash here re-reads it
	c.Close()

	c, err = OpenConsumer(dir, "fwd", storage.Traces)
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, c.Next)
	if len(got) != 6 || got[0] != "r04" || got[5] != "r09" {
		t.Fatalf("after reopen: %v", got)
	}
	// Caught up: new writes show up on the next call.
	write(10, 13)
	if got := drain(t, c.Next); len(got) != 3 || got[0] != "r10" {
		t.Fatalf("after more writes: %v", got)
	}
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	if c.Committed() != c.Position() {
		t.Fatal("Committed != Position after Commit")
	}
	c.Close()

	// Another name starts from the beginning; the first is unaffected.
	other, _ := OpenConsumer(dir, "audit", storage.Traces)
	if got := drain(t, other.Next); len(got) != 13 {
		t.Fatalf("second consumer read %d", len(got))
	}
	other.Close()
	c, _ = OpenConsumer(dir, "fwd", storage.Traces)
	if got := drain(t, c.Next); len(got) != 0 {
		t.Fatalf("committed consumer re-read %v", got)
	}
	c.Close()
	// Cursors do not follow the store across signals.
	m, _ := OpenConsumer(dir, "fwd", storage.Metrics)
	if got := drain(t, m.Next); len(got) != 0 {
		t.Fatalf("metrics consumer read %v", got)
	}
	m.Close()
}

func TestConsumerNameAndCursorChecks(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"", ".hidden", "a/b", "sp ace", string(make([]byte, 129))} {
		if _, err := OpenConsumer(dir, name, storage.Logs); err == nil {
			t.Errorf("OpenConsumer accepted name %q", name)
		}
	}
	if _, err := OpenConsumer(dir, "ok", storage.Signal(9)); err == nil {
		t.Error("OpenConsumer accepted an unknown signal")
	}
	writeRecords(t, dir, Options{}, storage.Logs, 3, 10)
	c, _ := OpenConsumer(dir, "c-1.x_y", storage.Logs)
	c.Next()
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	path := filepath.Join(dir, "cursors", "logs", "c-1.x_y.cursor")
	b, err := os.ReadFile(path)
	if err != nil || len(b) != posFileSize {
		t.Fatalf("cursor file: %d bytes, %v", len(b), err)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatal("temporary cursor file left behind")
	}
	b[12] ^= 1
	os.WriteFile(path, b, 0o644)
	if _, err := OpenConsumer(dir, "c-1.x_y", storage.Logs); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("damaged cursor: %v", err)
	}
}

// TestConsumerAfterRetention: the segment a cursor points into is deleted;
// the consumer continues with the oldest remaining segment.
func TestConsumerAfterRetention(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, Options{MaxSegmentSize: 100}, storage.Logs, 10, 40)
	c, _ := OpenConsumer(dir, "slow", storage.Logs)
	c.Next()
	c.Commit()
	c.Close()
	seqs, _ := listSegmentSeqs(filepath.Join(dir, "logs"))
	for _, seq := range seqs[:3] {
		os.Remove(filepath.Join(dir, "logs", segmentName(seq)))
	}
	c, _ = OpenConsumer(dir, "slow", storage.Logs)
	defer c.Close()
	got := drain(t, c.Next)
	if len(got) == 0 || got[0][:7] != "rec-003" || got[len(got)-1][:7] != "rec-009" {
		t.Fatalf("after retention: %d records, first %.7s", len(got), got[0])
	}
}

// TestReaderFollowsConcurrentWriter tails a log while writers append and
// segments roll: the reader must see every record exactly once, in order
// per writer, and never report corruption for a write in progress.
func TestReaderFollowsConcurrentWriter(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{MaxSegmentSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				p := fmt.Sprintf("w%d-%04d-%0*d", w, i, i%200, 0)
				if err := s.Write(context.Background(), storage.Traces, []byte(p), 1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	r := NewReader(dir, storage.Traces, Position{})
	defer r.Close()
	last := make([]int, writers)
	for i := range last {
		last[i] = -1
	}
	seen := 0
	finished := false
	for seen < writers*each {
		rec, err := r.Next()
		if err == io.EOF {
			if finished {
				t.Fatalf("caught up with %d of %d records after the writers finished", seen, writers*each)
			}
			select {
			case <-done:
				finished = true
			default:
			}
			continue
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		var w, i int
		fmt.Sscanf(string(rec.Data), "w%d-%d-", &w, &i)
		if i != last[w]+1 {
			t.Fatalf("writer %d: record %d after %d", w, i, last[w])
		}
		last[w] = i
		seen++
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the end: %v", err)
	}
}
