package stefreceiver

import (
	"sync"

	"github.com/otlp-lite/otlp-lite/ingest"
)

// maxSpares bounds what a Receiver keeps of ended streams for the next
// ones, of each kind (spareDecoders, spareBuffers): a stream's zstd
// decoder (StateCostZstd, its 8 MiB window allocated and cleared on a
// stream's first block) and its request buffer (up to MaxRequestBytes and
// a record, grown by doublings over a stream's first requests). Streams
// end and start together when clients rotate them (MaxStreamBytes,
// dictionaries) or reconnect: a client's next stream starts
// milliseconds after its last one ended, so a few spares serve the
// clients that rotate at once, and more would only be memory kept for
// streams that may never come. At most 4 decoders (36 MiB) and 4 buffers
// (about 18 MiB at the default MaxRequestBytes) are kept, each charged to
// the admission budget while it waits (spares).
const maxSpares = 4

// spares keeps up to maxSpares values of ended streams (zstd decoders,
// request buffers) for the next streams. Each is charged to the
// pipeline's budget with HoldSpareState for as long as it waits, as the
// streams' own state is: a spare the budget has no room for, or kept while
// requests wait for the budget, is not kept (it is left to the garbage
// collector); a stream that finds no room for its own state has the spares
// dropped first (dropAll), and so does any request or stream of any
// transport that finds the budget full (the Receiver registers dropSpares
// with Pipeline.AddReclaimer), so that kept spares never refuse or delay
// anyone. It is safe for concurrent use.
//
// They replace a sync.Pool, which kept idle decoders uncharged until a
// collection, and lost them at every other collection: on a stream of
// 8,192-point frames the collector runs every few requests, so most
// streams made their decoder anew.
type spares[T any] struct {
	p    *ingest.Pipeline
	mu   sync.Mutex
	kept []spare[T]
	// closed: the Receiver shut down, nothing more is kept.
	closed bool
}

type spare[T any] struct {
	v    T
	cost int64
}

// put keeps v, of cost bytes, for a later get, and reports whether it did:
// not when maxSpares are kept, or the budget has no room for its charge.
func (s *spares[T]) put(v T, cost int64) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.kept) >= maxSpares || !s.p.HoldSpareState(cost) {
		return false
	}
	s.kept = append(s.kept, spare[T]{v, cost})
	return true
}

// get takes a kept value, its charge returned (the stream that takes it
// charges its own state), or reports false when none is kept.
func (s *spares[T]) get() (T, bool) {
	var zero T
	if s == nil {
		return zero, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.kept)
	if n == 0 {
		return zero, false
	}
	sp := s.kept[n-1]
	s.kept[n-1] = spare[T]{}
	s.kept = s.kept[:n-1]
	s.p.ReleaseStreamState(sp.cost)
	return sp.v, true
}

// dropAll lets every kept value go, its charge returned, and reports
// whether any was kept.
func (s *spares[T]) dropAll() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropLocked()
}

// dropLocked is dropAll with s.mu held.
func (s *spares[T]) dropLocked() bool {
	for i, sp := range s.kept {
		s.p.ReleaseStreamState(sp.cost)
		s.kept[i] = spare[T]{}
	}
	dropped := len(s.kept) > 0
	s.kept = s.kept[:0]
	return dropped
}

// close lets every kept value go and keeps no more, in one critical
// section: a put between the two would keep its value, charged, for the
// Receiver's life.
func (s *spares[T]) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked()
	s.closed = true
}

// held returns how many values are kept and what they are charged.
func (s *spares[T]) held() (n int, cost int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range s.kept {
		cost += sp.cost
	}
	return len(s.kept), cost
}

// sparesHeld returns what the Receiver's spares are charged.
func (r *Receiver) sparesHeld() int64 {
	_, d := r.decoders.held()
	_, b := r.buffers.held()
	return d + b
}
