package disk

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// simulateFull turns the fault layer's full disk on until the test ends or
// the returned func frees it.
func simulateFull(t *testing.T) (free func()) {
	t.Helper()
	simulatedFull.Store(true)
	t.Cleanup(func() { simulatedFull.Store(false) })
	return func() { simulatedFull.Store(false) }
}

// TestSimulatedFullDisk is the disk-full contract of issue 21 (finding 12)
// through the fault-injecting file layer, so that it holds where no tmpfs
// can be mounted (TestCommitOnFullDisk and TestFullDiskOneSegment are the
// same on a real full filesystem): a lagging holding consumer commits
// while no write may allocate, retention then deletes what it passed, the
// only segment included, and writes resume.
func TestSimulatedFullDisk(t *testing.T) {
	for _, segSize := range []int64{8 << 10, DefaultMaxSegmentSize} {
		name := "small-segments"
		if segSize == DefaultMaxSegmentSize {
			name = "one-segment"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{MaxSegmentSize: segSize, MaxAge: time.Hour, HoldPrefix: "fwd."})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c, err := OpenConsumerAt(dir, "fwd.a", storage.Traces, StartOldest)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			payload := make([]byte, 1000)
			for range 50 {
				if err := s.Write(context.Background(), storage.Traces, payload, 1); err != nil {
					t.Fatal(err)
				}
			}
			free := simulateFull(t)
			// What the log preallocated before the disk filled takes
			// writes still, as on any filesystem (direct.go): the
			// disk is full for the log once that is used.
			slack := 0
			for ; slack < preallocChunk/len(payload)+10; slack++ {
				if s.Write(context.Background(), storage.Traces, payload, 1) != nil {
					break
				}
			}
			refused := 1
			for range 9 {
				err := s.Write(context.Background(), storage.Traces, payload, 1)
				if err == nil {
					continue // the last block's slack
				}
				if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), "no space left on device") {
					t.Fatalf("write on a full disk: %v", err)
				}
				// The refusal promises the record is not in the log (a
				// tenant's quota gives back what it charged for it):
				// the reads below find only the accepted ones.
				if !errors.Is(err, storage.ErrNotStored) {
					t.Fatalf("write refused on a full disk does not say nothing was stored: %v", err)
				}
				refused++
			}
			if refused < 5 {
				t.Fatalf("only %d of 10 writes refused on a full disk", refused)
			}
			n := 0 // records read back
			defer func(accepted int) {
				if t.Failed() {
					return
				}
				if want := 50 + slack + accepted; n != want {
					t.Errorf("read %d records, want the %d accepted (a write refused as not stored is in the log)", n, want)
				}
			}(10 - refused)
			for {
				_, err := c.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
				if err := c.Commit(); err != nil {
					t.Fatalf("commit %d on a full disk: %v", n, err)
				}
			}
			if deleted := s.enforceRetention(time.Now().Add(2 * time.Hour)); deleted == 0 {
				t.Fatal("retention deleted nothing after the consumer committed")
			}
			free() // what the deletions gave back
			if err := s.Write(context.Background(), storage.Traces, payload, 1); err != nil {
				t.Fatalf("write after retention freed space: %v", err)
			}
		})
	}
}

// TestNewConsumerOnFullDisk: a consumer created while the disk is full (a
// destination added to a server restarted on a full disk) opens all the
// same, reads, and gets its cursor with the first commit that finds space.
func TestNewConsumerOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, Options{}, storage.Logs, 10, 50)
	free := simulateFull(t)
	c, err := OpenConsumerAt(dir, "fwd.new", storage.Logs, StartOldest)
	if err != nil {
		t.Fatalf("a new consumer on a full disk: %v", err)
	}
	defer c.Close()
	if _, err := c.Next(); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(); err == nil {
		t.Fatal("a commit created a cursor on a full disk")
	}
	free()
	if err := c.Commit(); err != nil {
		t.Fatalf("commit once space returned: %v", err)
	}
	if names, _ := ConsumerNames(dir, storage.Logs, "fwd."); len(names) != 1 {
		t.Fatalf("cursors %v", names)
	}
}
