package handler

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/otlp-lite/otlp-lite/internal/connstate"
)

// maxGateWait bounds how long a new request or stream waits for a free
// unit when MaxStreams are in use: while it waits the quietest connection
// is shed (connstate.Conn.ShedQuiet) and its streams return their units,
// which takes milliseconds; a second is ample, and well within an honest
// client's deadline.
const maxGateWait = time.Second

// streamGate bounds the requests and streams in progress
// (AdmissionConfig.MaxStreams): a counting semaphore whose full state
// sheds the quietest connection for the newcomer (so streams that send
// nothing cannot keep honest clients out), and refuses, as retryable, when
// too many already wait.
type streamGate struct {
	sem        chan struct{}
	waiters    atomic.Int32
	maxWaiters int32
	maxWait    time.Duration
	// refused counts requests and streams refused for want of a unit;
	// waited those that waited for one.
	refused, waited atomic.Int64
}

func newStreamGate(n int, maxWait time.Duration) *streamGate {
	return &streamGate{
		sem: make(chan struct{}, n),
		// A waiter is a goroutine and a stream too: at most as many
		// as the units may wait (one per connection), beyond that
		// refusal is at once.
		maxWaiters: int32(n),
		maxWait:    min(maxWait, maxGateWait),
	}
}

// tryAcquire takes a unit for a request or stream of connection cs if one
// is free.
func (g *streamGate) tryAcquire(cs *connstate.Conn) bool {
	select {
	case g.sem <- struct{}{}:
		cs.AddUnits(1)
		return true
	default:
		return false
	}
}

// acquire takes a unit for a request or stream of connection cs, or waits
// for one (asking cs's server to shed its quietest connection) up to
// maxWait or ctx; it reports whether it got one. Only one request or
// stream per connection waits; the connection's others are refused at
// once: a flood of streams on a few connections cannot fill the wait
// queue ahead of honest newcomers, and with one waiter per connection the
// waiters are bounded by the connection limit as well as by maxWaiters.
func (g *streamGate) acquire(ctx context.Context, cs *connstate.Conn) bool {
	if g.tryAcquire(cs) {
		return true
	}
	if cs.AddWaiting(1) > 1 {
		cs.AddWaiting(-1)
		g.refused.Add(1)
		return false
	}
	defer cs.AddWaiting(-1)
	if g.waiters.Add(1) > g.maxWaiters {
		g.waiters.Add(-1)
		g.refused.Add(1)
		return false
	}
	defer g.waiters.Add(-1)
	g.waited.Add(1)
	// Shed now, and again every reshedEvery while no unit frees up:
	// a connection becomes quiet enough to shed (server.quietMin) while
	// we wait.
	cs.ShedQuiet()
	timer := time.NewTimer(g.maxWait)
	defer timer.Stop()
	tick := time.NewTicker(reshedEvery)
	defer tick.Stop()
	for {
		select {
		case g.sem <- struct{}{}:
			cs.AddUnits(1)
			return true
		case <-tick.C:
			cs.ShedQuiet()
			continue
		case <-timer.C:
		case <-ctx.Done():
		}
		g.refused.Add(1)
		return false
	}
}

// reshedEvery is how often a waiter for a unit asks again for a quiet
// connection to be shed.
const reshedEvery = 200 * time.Millisecond

// release returns a unit taken for connection cs.
func (g *streamGate) release(cs *connstate.Conn) {
	cs.AddUnits(-1)
	<-g.sem
}

// inUse returns the units taken.
func (g *streamGate) inUse() int { return len(g.sem) }
