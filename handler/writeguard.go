package handler

import (
	"net/http"
	"sync"
	"time"

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

// A writeGuard resets a request's stream (HTTP/2) or closes its connection
// (HTTP/1.1) when a response write stays blocked past the write timeout:
// without it, a client that never opens its flow-control window would hold
// the handler's goroutine forever, since net/http's own write timeouts are
// off by default (they cost a deadline per write; see -write-timeout).
//
// Handlers arm a guard before writing a response, flush the response
// themselves, and disarm it: what net/http writes after the handler
// returns is then only the trailers, which flow control does not hold.
// Guards are pooled with their timers, so a response costs a timer reset
// and stop, no allocation and no message to the connection goroutine.
type writeGuard struct {
	timer *time.Timer
	mu    sync.Mutex
	call  *grpcwire.Call      // what to reset, when armed for a gRPC call
	w     http.ResponseWriter // or for an OTLP/HTTP response
	fired bool
	m     *handlerMetrics
}

// armWriteGuard starts guarding the response of call (gRPC) or w
// (OTLP/HTTP); it returns nil when the timeout is disabled.
func (h *Handler) armWriteGuard(call *grpcwire.Call, w http.ResponseWriter) *writeGuard {
	if h.writeTimeout <= 0 {
		return nil
	}
	g, _ := h.guards.Get().(*writeGuard)
	if g == nil {
		g = &writeGuard{m: h.m}
		g.timer = time.AfterFunc(time.Hour, g.fire)
	}
	g.mu.Lock()
	g.call, g.w, g.fired = call, w, false
	g.mu.Unlock()
	g.timer.Reset(h.writeTimeout)
	return g
}

// disarm stops guarding. After it returns, the guard no longer touches
// the response. It reports whether the guard fired.
func (h *Handler) disarmWriteGuard(g *writeGuard) bool {
	if g == nil {
		return false
	}
	stopped := g.timer.Stop()
	g.mu.Lock()
	fired := g.fired
	g.call, g.w = nil, nil
	g.mu.Unlock()
	if stopped {
		// A guard whose timer went off is not reused: its fire may
		// still be about to run, and must not find a later response.
		h.guards.Put(g)
	}
	return fired
}

func (g *writeGuard) fire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.call != nil:
		g.call.ResetStream()
	case g.w != nil:
		// A write deadline in the past fails the blocked write: net/http
		// resets the HTTP/2 stream, or closes the HTTP/1.1 connection.
		_ = http.NewResponseController(g.w).SetWriteDeadline(time.Unix(1, 0))
	default:
		return // disarmed as it fired
	}
	g.fired = true
	g.m.writeTimeouts.Inc()
}

// writeUnaryResponse writes a unary gRPC call's response message and OK
// status, flushing the message under a write guard.
func (h *Handler) writeUnaryResponse(call *grpcwire.Call, msg []byte) error {
	g := h.armWriteGuard(call, nil)
	err := call.WriteResponse(msg)
	call.Flush()
	h.disarmWriteGuard(g)
	return err
}

// watchAckWrites guards an export stream's acknowledgements: it resets the
// stream when one acknowledgement write has been blocked for the write
// timeout. Unlike a writeGuard per ack, it costs nothing per write (a
// timestamp): it checks every timeout/2, so a write is given between
// timeout and 1.5 x timeout. The returned func stops it.
func (s *exportStreamState) watchAckWrites(timeout time.Duration) (stop func()) {
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	t = time.AfterFunc(timeout/2, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		if start := s.writeStart.Load(); start != 0 && time.Since(time.Unix(0, start)) >= timeout {
			s.h.m.writeTimeouts.Inc()
			s.h.log.Debug("stream reset: the client took no acknowledgement in time", "peer", s.call.Request().RemoteAddr, "timeout", timeout)
			s.call.ResetStream()
			return
		}
		t.Reset(timeout / 2)
	})
	return func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		t.Stop()
	}
}
