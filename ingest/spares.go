package ingest

import (
	"context"
	"sync"
)

// Spares keeps up to a bound of values that ended streams leave for the
// next streams (zstd decoders, columns decoders, request buffers): what a
// stream costs to set up, and what streams that end and start together
// (clients rotating them, or reconnecting) would otherwise allocate anew
// and leave to the garbage collector. Each is charged to the pipeline's
// budget with HoldSpareState for as long as it waits, as the streams' own
// state is: a spare the budget has no room for, or kept while requests
// wait for the budget, is not kept (it is left to the garbage collector);
// a stream that finds no room for its own state has the spares dropped
// first (DropAll), and so does any request or stream of any transport that
// finds the budget full (the owner registers DropAll, or a function that
// calls it, with Pipeline.AddReclaimer), so that kept spares never refuse
// or delay anyone. It is safe for concurrent use.
//
// A value put must hold nothing of its stream that the next may read (a
// decoder reset, a buffer cut to nothing): the spares are shared by every
// client of their owner.
//
// They replace a sync.Pool, which kept idle values uncharged until a
// collection, and lost them at every other collection: on a stream of
// 8,192-item requests the collector runs every few requests, so most
// streams made their decoder anew.
type Spares[T any] struct {
	p   *Pipeline
	max int
	mu  sync.Mutex
	// kept are the values waiting, each with its charge.
	kept []spare[T]
	// closed: Close was called, nothing more is kept.
	closed bool
}

type spare[T any] struct {
	v    T
	cost int64
}

// NewSpares returns Spares charged to p that keep at most max values (the
// owner states why that many: a few serve the clients that rotate at
// once, more would only be memory kept for streams that may never come).
func NewSpares[T any](p *Pipeline, max int) *Spares[T] {
	return &Spares[T]{p: p, max: max}
}

// Put keeps v, of cost bytes, for a later Get, and reports whether it did:
// not when the bound is reached, Close was called, or the budget has no
// room for its charge. A nil Spares keeps nothing.
func (s *Spares[T]) Put(v T, cost int64) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.kept) >= s.max || !s.p.HoldSpareState(cost) {
		return false
	}
	s.kept = append(s.kept, spare[T]{v, cost})
	return true
}

// Get takes a kept value, its charge returned (the stream that takes it
// charges its own state), or reports false when none is kept.
func (s *Spares[T]) Get() (T, bool) {
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

// Take takes a kept value with its charge, which the caller then holds as
// a HoldStreamStateFor charge of cost for the tenant of ctx
// (ReleaseStreamStateFor returns it), or reports false when none is kept.
// A stream that starts with a spare so charges nothing anew: with Get, it
// held its own state's charge first, and when the state's half of the
// budget was full of spares, that charge reclaimed them all, the one it
// would have taken too (the spares then never served under pressure).
// cost is what the caller charges for the value; a spare kept at another
// cost has the difference charged (HoldStreamState, which may reclaim the
// other spares) or returned, and is left to the garbage collector, its
// charge returned, when the difference does not fit. A kept spare belongs
// to no tenant; a tenant whose share has no room for cost takes none, and
// none is taken from the others for it. With no tenant in ctx (or
// tenancy off) only the budget is charged.
func (s *Spares[T]) Take(ctx context.Context, cost int64) (T, bool) {
	var zero T
	if s == nil {
		return zero, false
	}
	ts, ok := s.p.holdTenantState(ctx, cost)
	if !ok {
		return zero, false
	}
	v, ok := s.take(cost)
	if !ok {
		ts.releaseState(cost)
	}
	return v, ok
}

// take is Take of a non-nil Spares.
func (s *Spares[T]) take(cost int64) (T, bool) {
	var zero T
	s.mu.Lock()
	n := len(s.kept)
	if n == 0 {
		s.mu.Unlock()
		return zero, false
	}
	sp := s.kept[n-1]
	s.kept[n-1] = spare[T]{}
	s.kept = s.kept[:n-1]
	s.mu.Unlock()
	switch {
	case sp.cost > cost:
		s.p.ReleaseStreamState(sp.cost - cost)
	case sp.cost < cost && !s.p.HoldStreamState(cost-sp.cost):
		s.p.ReleaseStreamState(sp.cost)
		return zero, false
	}
	return sp.v, true
}

// DropAll lets every kept value go, its charge returned, and reports
// whether any was kept.
func (s *Spares[T]) DropAll() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropLocked()
}

// dropLocked is DropAll with s.mu held.
func (s *Spares[T]) dropLocked() bool {
	for i, sp := range s.kept {
		s.p.ReleaseStreamState(sp.cost)
		s.kept[i] = spare[T]{}
	}
	dropped := len(s.kept) > 0
	s.kept = s.kept[:0]
	return dropped
}

// Close lets every kept value go and keeps no more, in one critical
// section: a Put between the two would keep its value, charged, for the
// owner's life.
func (s *Spares[T]) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked()
	s.closed = true
}

// Held returns how many values are kept and what they are charged.
func (s *Spares[T]) Held() (n int, cost int64) {
	if s == nil {
		return 0, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range s.kept {
		cost += sp.cost
	}
	return len(s.kept), cost
}
