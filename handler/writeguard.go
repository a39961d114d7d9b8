package handler

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// DefaultResponseWriteTimeout bounds how long a response may wait for the
// client to take it. Responses and stream acknowledgements are tens of
// bytes and a healthy client reads them as they come (its own pipeline
// waits on them); one that takes none for 10 s has stopped reading. The
// request is stored and its budget released before its response is
// written, so resetting the stream loses nothing and frees its goroutine,
// its stream slot and, for export streams, their request slots.
const DefaultResponseWriteTimeout = 10 * time.Second

// writeGuards reset a request's stream (HTTP/2) or close its connection
// (HTTP/1.1) when a response write stays blocked past the write timeout:
// without them, a client that never opens its flow-control window would
// hold the handler's goroutine forever, since net/http's own write timeouts
// are off by default (they cost a deadline per write; see -write-timeout).
//
// Handlers take a guard for the response, mark the start and end of each
// write, flush the response themselves, and give the guard back: what
// net/http writes after the handler returns is then only the trailers,
// which flow control does not hold. One watchdog goroutine per Handler
// checks every guard four times per timeout, so a write is given between
// the timeout and 1.25 times it. A write costs two atomic stores and a
// clock read: no timer, no allocation, and no message to net/http's
// connection goroutine (a write deadline per response would be two).
type writeGuards struct {
	timeout  time.Duration
	timeouts *metrics.Counter
	// read makes these guards watch request reads instead
	// (newReadGuards).
	read bool

	mu    sync.Mutex
	all   []*writeGuard // every guard made: the watchdog's list
	free  []*writeGuard
	start sync.Once
	stop  chan struct{}
}

// A writeGuard guards the response writes of one request or stream.
type writeGuard struct {
	// writeStart is when the write in progress began (UnixNano), 0 when
	// none is.
	writeStart atomic.Int64

	mu    sync.Mutex
	call  *grpcwire.Call      // what to reset, for a gRPC call
	w     http.ResponseWriter // or for an OTLP/HTTP response
	fired bool
}

func newWriteGuards(timeout time.Duration, timeouts *metrics.Counter) *writeGuards {
	return &writeGuards{timeout: timeout, timeouts: timeouts, stop: make(chan struct{})}
}

// newReadGuards returns guards for unary gRPC request reads: a guard that
// fires expires the call's read (grpcwire.Call.ExpireRead), which answers
// DEADLINE_EXCEEDED, as the per-call read deadline it replaces did
// (exportUnary). The refusal is counted as such, not here.
func newReadGuards(timeout time.Duration) *writeGuards {
	gs := newWriteGuards(timeout, nil)
	gs.read = true
	return gs
}

// get returns a guard for the response of call (gRPC) or w (OTLP/HTTP),
// or nil when the timeout is disabled.
func (gs *writeGuards) get(call *grpcwire.Call, w http.ResponseWriter) *writeGuard {
	if gs.timeout <= 0 {
		return nil
	}
	gs.start.Do(func() { go gs.watch() })
	gs.mu.Lock()
	var g *writeGuard
	if n := len(gs.free); n > 0 {
		g = gs.free[n-1]
		gs.free = gs.free[:n-1]
	} else {
		g = &writeGuard{}
		gs.all = append(gs.all, g)
	}
	gs.mu.Unlock()
	g.mu.Lock()
	g.call, g.w, g.fired = call, w, false
	g.mu.Unlock()
	return g
}

// put gives g back; after it returns the watchdog no longer touches the
// response. It reports whether the guard fired.
func (gs *writeGuards) put(g *writeGuard) (fired bool) {
	if g == nil {
		return false
	}
	g.writeStart.Store(0)
	g.mu.Lock()
	fired = g.fired
	g.call, g.w = nil, nil
	g.mu.Unlock()
	gs.mu.Lock()
	gs.free = append(gs.free, g)
	gs.mu.Unlock()
	return fired
}

// begin and end mark a write; g may be nil.
func (g *writeGuard) begin() {
	if g != nil {
		g.writeStart.Store(time.Now().UnixNano())
	}
}

func (g *writeGuard) end() {
	if g != nil {
		g.writeStart.Store(0)
	}
}

// watch is the watchdog, until close(gs.stop).
func (gs *writeGuards) watch() {
	t := time.NewTicker(gs.timeout / 4)
	defer t.Stop()
	var all []*writeGuard
	for {
		select {
		case <-gs.stop:
			return
		case <-t.C:
		}
		gs.mu.Lock()
		all = append(all[:0], gs.all...)
		gs.mu.Unlock()
		now := time.Now().UnixNano()
		for _, g := range all {
			if start := g.writeStart.Load(); start != 0 && now-start >= int64(gs.timeout) {
				g.fire(start, gs.timeouts, gs.read)
			}
		}
	}
}

// fire abandons the response whose write began at start, unless that
// write has ended (or the guard moved on) meanwhile.
func (g *writeGuard) fire(start int64, timeouts *metrics.Counter, read bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fired || g.writeStart.Load() != start {
		return
	}
	switch {
	case g.call != nil && read:
		g.call.ExpireRead()
	case g.call != nil:
		g.call.ResetStream()
	case g.w != nil:
		// A write deadline in the past fails the blocked write: net/http
		// resets the HTTP/2 stream, or closes the HTTP/1.1 connection.
		_ = http.NewResponseController(g.w).SetWriteDeadline(time.Unix(1, 0))
	default:
		return
	}
	g.fired = true
	if timeouts != nil {
		timeouts.Inc()
	}
}

// writeUnaryResponse writes a unary gRPC call's response message and OK
// status, flushing the message under a write guard.
func (h *Handler) writeUnaryResponse(call *grpcwire.Call, msg []byte) error {
	g := h.guards.get(call, nil)
	g.begin()
	err := call.WriteResponse(msg)
	call.Flush()
	h.guards.put(g)
	return err
}
