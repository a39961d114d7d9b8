package forward

import (
	"context"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// TestWindowHoldsUntilCommitted: a record counts against the limit from
// Add until a commit covers it, not merely until it is finished, so a
// crash resends at most the limit; out-of-order finishes move the
// position only past the in-order run; advances coalesce into one token.
func TestWindowHoldsUntilCommitted(t *testing.T) {
	w := NewBoundedWindow(disk.Position{Segment: 1}, 2)
	ctx := context.Background()
	if err := w.Room(ctx); err != nil {
		t.Fatal(err)
	}
	a := w.Add(disk.Position{Segment: 1, Offset: 10}, time.Time{})
	if err := w.Room(ctx); err != nil {
		t.Fatal(err)
	}
	b := w.Add(disk.Position{Segment: 1, Offset: 20}, time.Time{})
	full, cancel := context.WithCancel(ctx)
	cancel()
	if err := w.Room(full); err == nil {
		t.Fatal("Room found room for a third record in a window of 2")
	}
	w.Finish(b) // out of order: nothing to commit yet
	select {
	case <-w.Advanced():
		t.Fatal("a finish after an unfinished record signalled an advance")
	default:
	}
	if p := w.Position(); p.Offset != 0 {
		t.Fatalf("position %v moved past the unfinished record", p)
	}
	w.Finish(a)
	<-w.Advanced() // one token for the run of two
	pos, mark := w.ToCommit()
	if pos.Offset != 20 || mark != 2 {
		t.Fatalf("ToCommit = %v, %d; want offset 20, mark 2", pos, mark)
	}
	// Finished but not committed: still held.
	if err := w.Room(full); err == nil {
		t.Fatal("Room found room while the finished records were not committed")
	}
	room := make(chan error)
	go func() { room <- w.Room(ctx) }()
	w.Committed(mark)
	if err := <-room; err != nil {
		t.Fatal(err)
	}
	w.Add(disk.Position{Segment: 1, Offset: 30}, time.Time{})
	if n := w.Unfinished(); n != 1 {
		t.Fatalf("Unfinished = %d, want 1", n)
	}
}
