package forward

import (
	"context"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// Window tracks the records of one log that were sent and are not yet
// durably behind the destination's cursor, in log order, so that a cursor
// only ever moves past a contiguous run of finished (acknowledged, or
// dead-lettered) records: acknowledgements come out of order, and a crash
// must not skip a record still in flight.
//
// A bounded window (NewBoundedWindow) is also the bound of what a crash
// resends: Room waits while limit records are held, a record being held
// from Add until a commit of the cursor covers it (Committed), so after a
// crash at most limit records (the destination's in-flight window) are
// sent again, acknowledged or not. It is safe for concurrent use; Room
// and Add are called by one goroutine.
type Window struct {
	mu       sync.Mutex
	queue    []*Slot       // unfinished, or finished after an unfinished one; in log order
	handled  disk.Position // everything before it is finished
	limit    int
	added    int64         // records added, ever
	finished int64         // records the finished run has passed, ever
	commit   int64         // records a commit covers, ever
	advanced chan struct{} // a token when handled moves: a commit is due
	freed    chan struct{} // a token when a commit frees room for Add
	idle     chan struct{} // a token when every record added is finished
}

// Slot is one record in a Window.
type Slot struct {
	next disk.Position // position after the record
	t    time.Time     // its receive time
	done bool
}

// NewBoundedWindow returns a window whose records start at pos and that
// holds at most limit records not yet committed (Room); 0 means no limit.
func NewBoundedWindow(pos disk.Position, limit int) *Window {
	return &Window{handled: pos, limit: limit, advanced: make(chan struct{}, 1), freed: make(chan struct{}, 1), idle: make(chan struct{}, 1)}
}

// Room waits while the window holds its limit of uncommitted records; it
// fails only when ctx ends first. The goroutine that Adds calls it before
// each Add.
func (w *Window) Room(ctx context.Context) error {
	for {
		w.mu.Lock()
		room := w.limit == 0 || w.added-w.commit < int64(w.limit)
		w.mu.Unlock()
		if room {
			return nil
		}
		select {
		case <-w.freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Add appends the record that ends at next, received at t.
func (w *Window) Add(next disk.Position, t time.Time) *Slot {
	s := &Slot{next: next, t: t}
	w.mu.Lock()
	w.queue = append(w.queue, s)
	w.added++
	w.mu.Unlock()
	return s
}

// Finish marks s finished and moves Position past every finished record
// at the front; when it moved, Advanced receives a token.
func (w *Window) Finish(s *Slot) {
	w.mu.Lock()
	s.done = true
	n := 0
	for n < len(w.queue) && w.queue[n].done {
		w.handled = w.queue[n].next
		n++
	}
	w.queue = w.queue[n:]
	w.finished += int64(n)
	idle := len(w.queue) == 0
	w.mu.Unlock()
	if n > 0 {
		signal(w.advanced)
	}
	if idle {
		signal(w.idle)
	}
}

// Idle has a token when every record added was finished since the token
// was last taken; the token may be stale (records added since), so a
// waiter checks Unfinished again.
func (w *Window) Idle() <-chan struct{} { return w.idle }

// Advanced has a token when Position moved since the token was last
// taken: advances that come while a commit is under way coalesce into one
// token, and the next commit takes the latest Position.
func (w *Window) Advanced() <-chan struct{} { return w.advanced }

// ToCommit returns how far a cursor may be committed (the position after
// the finished run) and the mark to pass to Committed once it is.
func (w *Window) ToCommit() (disk.Position, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.handled, w.finished
}

// Committed records that a commit of ToCommit's position, which returned
// mark, is durable: its records no longer count against the limit.
func (w *Window) Committed(mark int64) {
	w.mu.Lock()
	if mark <= w.commit {
		w.mu.Unlock()
		return
	}
	w.commit = mark
	w.mu.Unlock()
	signal(w.freed)
}

// signal leaves a token in c (capacity 1) unless one is there.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Position is the position after the last record of the finished run:
// how far a cursor may be committed.
func (w *Window) Position() disk.Position {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.handled
}

// Oldest returns the receive time of the first unfinished record, zero if
// every record is finished.
func (w *Window) Oldest() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.queue {
		if !s.done {
			return s.t
		}
	}
	return time.Time{}
}

// Unfinished counts the records added and not finished.
func (w *Window) Unfinished() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, s := range w.queue {
		if !s.done {
			n++
		}
	}
	return n
}
