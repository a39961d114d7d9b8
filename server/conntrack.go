package server

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/metrics"
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
type connTracker struct {
	maxAge, grace time.Duration
	open          *metrics.Gauge
	accepted      *metrics.Counter

	mu    sync.Mutex
	conns map[net.Conn]time.Time // deadline; zero when maxAge <= 0
}

// connDeadlineKey is the connection context key for its deadline, for wrap:
// a handler sees the request's context, not its net.Conn.
type connDeadlineKey struct{}

func newConnTracker(maxAge, grace time.Duration, reg *metrics.Registry) *connTracker {
	return &connTracker{
		maxAge:   maxAge,
		grace:    grace,
		open:     reg.Gauge("otlplite_open_connections", "Client connections open on the OTLP listeners.").With(),
		accepted: reg.Counter("otlplite_connections_total", "Client connections accepted on the OTLP listeners.").With(),
		conns:    map[net.Conn]time.Time{},
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
	t.conns[c] = d
	t.mu.Unlock()
	return context.WithValue(ctx, connDeadlineKey{}, d)
}

func (t *connTracker) track(c net.Conn, state http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch state {
	case http.StateNew:
		if _, ok := t.conns[c]; !ok {
			// No ConnContext (or no max age): closeExpired still needs a
			// deadline, though wrap cannot see it.
			var d time.Time
			if t.maxAge > 0 {
				d = t.deadline()
			}
			t.conns[c] = d
		}
		t.open.Add(1)
		t.accepted.Inc()
	case http.StateHijacked, http.StateClosed:
		if _, ok := t.conns[c]; ok {
			delete(t.conns, c)
			t.open.Add(-1)
		}
	}
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
		for c, d := range t.conns {
			if now.After(d.Add(t.grace)) {
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
