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

	"github.com/otlp-lite/otlp-lite/internal/connstate"
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
	// shedQuietC counts busy connections shed because their streams sent
	// nothing (or they never presented a token); shedShare those shed to
	// keep tokenless connections within their share.
	shedQuietC, shedShare *metrics.Counter

	mu    sync.Mutex
	conns map[net.Conn]*trackedConn
}

// trackedConn is what the tracker knows of one connection.
type trackedConn struct {
	deadline time.Time // zero when maxAge <= 0
	state    http.ConnState
	since    time.Time // when it entered state
	shedding bool      // closed by shedIdle, not yet reported closed
	// cs is what the handler tells of the connection: whether it
	// authenticated and when its requests last sent body bytes.
	cs *connstate.Conn
}

// quietMin is how long a busy connection's streams must have sent no body
// bytes before it may be shed to make room (unless it never presented a
// token, then at once): long enough that a request part way through its
// body is never cut, short enough that a flood of streams that send
// nothing (HEADERS only, a health Watch) gives way within an honest
// client's patience.
const quietMin = time.Second

// unauthShareDiv sets the share of the connection limit that connections
// which have not presented valid credentials (new ones, health-only ones)
// may hold: a quarter. Past it the quietest of them is shed, so they can
// never fill the limit and lock out authenticated clients, while load
// balancers' health probes and new connections on their way to their first
// request still fit in hundreds.
const unauthShareDiv = 4

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
		// shed_quiet: a busy connection whose streams sent nothing for
		// quietMin (tokenless ones first), shed for a new connection or
		// when the handler's stream bound was full; shed_unauthenticated:
		// the quietest tokenless connection, past its share.
		shedQuietC: set.GetOrCreateCounter(`otlplite_connections_dropped_total{reason="shed_quiet"}`),
		shedShare:  set.GetOrCreateCounter(`otlplite_connections_dropped_total{reason="shed_unauthenticated"}`),
		conns:      map[net.Conn]*trackedConn{},
	}
}

// deadline draws a connection's deadline: now plus the max age ±10%, to
// spread the reconnections of connections opened together.
func (t *connTracker) deadline() time.Time {
	return time.Now().Add(time.Duration(float64(t.maxAge) * (0.9 + rand.Float64()*0.2)))
}

// connContext is the server's ConnContext. net/http calls it once per
// accepted connection, before ConnState reports StateNew, so track finds
// the deadline and state recorded here and wrap and closeExpired use the
// same deadline. The context carries the connection's connstate.Conn, for
// the handler.
func (t *connTracker) connContext(ctx context.Context, c net.Conn) context.Context {
	now := time.Now()
	tc := &trackedConn{state: http.StateNew, since: now, cs: connstate.New(now, t)}
	ctx = connstate.NewContext(ctx, tc.cs)
	if t.maxAge > 0 {
		tc.deadline = t.deadline()
		ctx = context.WithValue(ctx, connDeadlineKey{}, tc.deadline)
	}
	t.mu.Lock()
	t.conns[c] = tc
	t.mu.Unlock()
	return ctx
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
			tc = &trackedConn{cs: connstate.New(time.Now(), nil)}
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
			now := time.Now()
			if state == http.StateActive && tc.state != http.StateActive {
				// A request begins on a connection that had none: it
				// counts as sending until its body is due, so a client
				// whose first request waits for a handler (the
				// process busy with a flood) is not taken for quiet.
				tc.cs.NoteData(now.UnixNano())
			}
			tc.state, tc.since = state, now
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
	return t.shed1(func(tc *trackedConn) (int64, bool) {
		return tc.since.UnixNano(), tc.state == http.StateIdle || tc.state == http.StateNew
	}, t.shed)
}

// ShedQuiet implements connstate.Shedder for the handler, which calls it
// when its process-wide stream bound is full: it sheds the quietest
// connection (shedQuiet) among those holding a unit of the bound, other
// than except. One whose requests all wait for a unit is not shed: that
// would free no unit, and its client is queuing for its turn, not holding
// streams idle (under a flood an honest client's request can wait more
// than quietMin for its unit).
func (t *connTracker) ShedQuiet(except *connstate.Conn) bool {
	return t.shedQuiet(func(tc *trackedConn) bool { return tc.cs != except && tc.cs.HoldsUnits() })
}

// shedQuiet sheds the busy connection (one with requests or streams in
// progress) whose streams sent no body bytes for at least quietMin, among
// those eligible — one that never authenticated first, then the one quiet
// the longest — and reports whether it shed one. What a shed connection
// had in flight is refused (its client resends: nothing it was told is
// stored is lost); what it held — streams, their goroutines, flow-control
// buffers — is freed. A connection younger than quietMin is never shed
// here: an honest client's request on a new connection is still on its
// way to its first body byte.
//
// connLimitListener calls it at the connection limit after shedIdle (every
// connection eligible), the handler through ShedQuiet, so that streams
// which send nothing cannot keep an honest client out.
func (t *connTracker) shedQuiet(eligible func(*trackedConn) bool) bool {
	cutoff := time.Now().Add(-quietMin).UnixNano()
	if t.shed1(func(tc *trackedConn) (int64, bool) {
		last := tc.cs.LastData()
		return last, tc.state == http.StateActive && last <= cutoff && !tc.cs.Busy() && !tc.cs.Authenticated() && eligible(tc)
	}, t.shedQuietC) {
		return true
	}
	return t.shed1(func(tc *trackedConn) (int64, bool) {
		last := tc.cs.LastData()
		return last, tc.state == http.StateActive && last <= cutoff && !tc.cs.Busy() && eligible(tc)
	}, t.shedQuietC)
}

// anyConn makes every connection eligible for shedQuiet.
func anyConn(*trackedConn) bool { return true }

// shedUnauthenticated keeps the connections that have not authenticated
// within share: past it, the quietest of them is shed. It is called for
// each accepted connection, and scans the connections only when they are
// more than share.
func (t *connTracker) shedUnauthenticated(share int) {
	if t.count() <= share {
		return
	}
	t.mu.Lock()
	n := 0
	for _, tc := range t.conns {
		if !tc.shedding && !tc.cs.Authenticated() {
			n++
		}
	}
	t.mu.Unlock()
	if n > share {
		t.shed1(func(tc *trackedConn) (int64, bool) {
			return tc.cs.LastData(), !tc.cs.Authenticated()
		}, t.shedShare)
	}
}

// shed1 closes the connection with the smallest key among those eligible,
// counting it in c, and reports whether there was one.
func (t *connTracker) shed1(key func(*trackedConn) (int64, bool), c *metrics.Counter) bool {
	t.mu.Lock()
	var victim net.Conn
	var best int64
	for conn, tc := range t.conns {
		if tc.shedding {
			continue
		}
		k, ok := key(tc)
		if ok && (victim == nil || k < best) {
			victim, best = conn, k
		}
	}
	if victim != nil {
		t.conns[victim].shedding = true
	}
	t.mu.Unlock()
	if victim == nil {
		return false
	}
	victim.Close()
	c.Inc()
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
// idle connection to make room (at maxConns, failing that, a quiet or
// tokenless one: connTracker.ShedQuiet); when every connection is busy and
// sending, a new one over maxConns is closed at once (an accept that fails for want of
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
		if l.maxConns > 0 && l.t.count() >= l.maxConns && !l.t.shedIdle() && !l.t.shedQuiet(anyConn) {
			// Counted before the close: whoever sees the close (a client, a
			// test scraping the metric next) sees the count too.
			l.t.refused.Inc()
			c.Close()
			continue
		}
		if l.maxConns > 0 {
			l.t.shedUnauthenticated(max(l.maxConns/unauthShareDiv, 1))
		}
		return c, nil
	}
}
