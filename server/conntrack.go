package server

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// connTracker counts open connections and enforces Limits.MaxConnectionAge:
// once a connection is past its deadline (accept time plus a jittered max
// age), the next response on it carries "Connection: close", which
// net/http's HTTP/2 server turns into a GOAWAY — the client opens a new
// connection, possibly to another backend behind the balancer, while
// requests in flight finish. After the grace period a connection still
// open is closed.
//
// The jitter is drawn once per connection, when it is accepted. Drawn per
// request instead, connections opened together would still close together:
// every request redraws, so a busy connection is closed by one of its first
// requests past 0.9×age, whatever any single draw said.
//
// It also keeps the number of connections within Limits.MaxConnections and
// the process's descriptor limit (see connLimitListener): each connection
// is kept with its state, so the oldest idle one can be shed.
type connTracker struct {
	maxAge, grace time.Duration
	open          *metrics.Gauge
	accepted      *metrics.Counter
	shed, refused *metrics.Counter

	mu    sync.Mutex
	conns map[net.Conn]*trackedConn
}

// trackedConn is what the tracker knows of one connection.
type trackedConn struct {
	deadline time.Time // zero when maxAge <= 0
	state    http.ConnState
	since    time.Time // when it entered state
	shedding bool      // closed by shedIdle, not yet reported closed
}

// connDeadlineKey is the connection context key for its deadline, for wrap:
// a handler sees the request's context, not its net.Conn.
type connDeadlineKey struct{}

func newConnTracker(maxAge, grace time.Duration, set *metrics.Set) *connTracker {
	// otlplite_connections_dropped_total{reason}: client connections
	// closed to keep within -max-connections and the descriptor limit:
	// shed_idle, the oldest idle connection closed to make room for a new
	// one (its client reconnects; nothing was in flight); refused, a new
	// connection closed because every open one was busy.
	return &connTracker{
		maxAge:   maxAge,
		grace:    grace,
		open:     set.GetOrCreateGauge("otlplite_open_connections", nil), // client connections open on the OTLP listeners
		accepted: set.GetOrCreateCounter("otlplite_connections_total"),   // client connections accepted on the OTLP listeners
		shed:     set.GetOrCreateCounter(`otlplite_connections_dropped_total{reason="shed_idle"}`),
		refused:  set.GetOrCreateCounter(`otlplite_connections_dropped_total{reason="refused"}`),
		conns:    map[net.Conn]*trackedConn{},
	}
}

// deadline draws a connection's deadline: now plus the max age ±10%, to
// spread the reconnections of connections opened together.
func (t *connTracker) deadline() time.Time {
	return time.Now().Add(time.Duration(float64(t.maxAge) * (0.9 + rand.Float64()*0.2)))
}

// connContext is the server's ConnContext. net/http calls it once per
// accepted connection, before ConnState reports StateNew, so track finds
// the deadline recorded here and wrap and closeExpired use the same one.
func (t *connTracker) connContext(ctx context.Context, c net.Conn) context.Context {
	if t.maxAge <= 0 {
		return ctx
	}
	d := t.deadline()
	t.mu.Lock()
	t.conns[c] = &trackedConn{deadline: d, state: http.StateNew, since: time.Now()}
	t.mu.Unlock()
	return context.WithValue(ctx, connDeadlineKey{}, d)
}

func (t *connTracker) track(c net.Conn, state http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch state {
	case http.StateNew:
		tc, ok := t.conns[c]
		if !ok {
			// No ConnContext (or no max age): closeExpired still needs a
			// deadline, though wrap cannot see it.
			tc = &trackedConn{}
			if t.maxAge > 0 {
				tc.deadline = t.deadline()
			}
			t.conns[c] = tc
		}
		tc.state, tc.since = state, time.Now()
		t.open.Add(1)
		t.accepted.Inc()
	case http.StateActive, http.StateIdle:
		if tc, ok := t.conns[c]; ok {
			tc.state, tc.since = state, time.Now()
		}
	case http.StateHijacked, http.StateClosed:
		if _, ok := t.conns[c]; ok {
			delete(t.conns, c)
			t.open.Add(-1)
		}
	}
}

// count returns the connections open, those being shed included.
func (t *connTracker) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// shedIdle closes the connection that has been idle (no request or stream
// in flight, or no request yet) the longest, and reports whether there was
// one. Its client loses nothing and reconnects when it next sends.
func (t *connTracker) shedIdle() bool {
	t.mu.Lock()
	var oldest net.Conn
	var since time.Time
	for c, tc := range t.conns {
		if tc.shedding || (tc.state != http.StateIdle && tc.state != http.StateNew) {
			continue
		}
		if oldest == nil || tc.since.Before(since) {
			oldest, since = c, tc.since
		}
	}
	if oldest != nil {
		t.conns[oldest].shedding = true
	}
	t.mu.Unlock()
	if oldest == nil {
		return false
	}
	oldest.Close()
	t.shed.Inc()
	return true
}

func (t *connTracker) wrap(h http.Handler) http.Handler {
	if t.maxAge <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d, ok := r.Context().Value(connDeadlineKey{}).(time.Time); ok && time.Now().After(d) {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// closeExpired runs until ctx is done, closing connections past their
// deadline plus grace: those whose clients ignored the GOAWAY or kept a
// stream open past the grace period.
func (t *connTracker) closeExpired(ctx context.Context) {
	if t.maxAge <= 0 {
		return
	}
	tick := time.NewTicker(max(t.grace/4, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		var expired []net.Conn
		t.mu.Lock()
		for c, tc := range t.conns {
			if now.After(tc.deadline.Add(t.grace)) {
				expired = append(expired, c)
			}
		}
		t.mu.Unlock()
		// Close outside the lock: closing a TLS connection writes an
		// alert and can block for seconds on a stalled peer, and track
		// (every accept and close) needs the lock.
		for _, c := range expired {
			c.Close()
		}
	}
}

// connLimitListener keeps the connections within maxConns and within the
// process's file descriptor limit. At either limit it sheds the oldest
// idle connection to make room; when every connection is busy, a new one
// over maxConns is closed at once (an accept that fails for want of
// descriptors is left to net/http, which retries with back-off).
//
// Without it, connections that send a preface and nothing more hold their
// descriptors for the idle timeout (5 minutes, or as long as they answer
// pings): once the process runs out, no honest client, and no probe of the
// admin listener, can connect at all.
type connLimitListener struct {
	net.Listener
	t        *connTracker
	maxConns int // 0: only the descriptor limit
}

func (l connLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) && l.t.shedIdle() {
				continue // a descriptor is free again: take the waiting connection
			}
			return nil, err
		}
		if l.maxConns > 0 && l.t.count() >= l.maxConns && !l.t.shedIdle() {
			c.Close()
			l.t.refused.Inc()
			continue
		}
		return c, nil
	}
}
