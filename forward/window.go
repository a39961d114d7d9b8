package forward

import (
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// Window tracks the records of one log that were sent and are not finished
// (acknowledged, or dead-lettered), in log order, so that a cursor only
// ever moves past a contiguous run of finished records: acknowledgements
// come out of order, and a crash must not skip a record still in flight.
// It is safe for concurrent use.
type Window struct {
	mu      sync.Mutex
	queue   []*Slot       // in log order
	handled disk.Position // everything before it is finished
}

// Slot is one record in a Window.
type Slot struct {
	next disk.Position // position after the record
	t    time.Time     // its receive time
	done bool
}

// NewWindow returns a window whose records start at pos.
func NewWindow(pos disk.Position) *Window { return &Window{handled: pos} }

// Add appends the record that ends at next, received at t.
func (w *Window) Add(next disk.Position, t time.Time) *Slot {
	s := &Slot{next: next, t: t}
	w.mu.Lock()
	w.queue = append(w.queue, s)
	w.mu.Unlock()
	return s
}

// Finish marks s finished and moves Position past every finished record
// at the front.
func (w *Window) Finish(s *Slot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s.done = true
	n := 0
	for n < len(w.queue) && w.queue[n].done {
		w.handled = w.queue[n].next
		n++
	}
	w.queue = w.queue[n:]
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
