package server

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/internal/connstate"
)

// fakeConn is a net.Conn for connTracker tests: only Close is used.
type fakeConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *fakeConn) Close() error { c.closed.Store(true); return nil }

// acceptFakeConns registers n connections with tr as net/http would when
// accepting them (ConnContext, then StateNew) and returns them with their
// connection contexts.
func acceptFakeConns(tr *connTracker, n int) ([]*fakeConn, []context.Context) {
	conns := make([]*fakeConn, n)
	ctxs := make([]context.Context, n)
	for i := range conns {
		conns[i] = &fakeConn{}
		ctxs[i] = tr.connContext(context.Background(), conns[i])
		tr.track(conns[i], http.StateNew)
	}
	return conns, ctxs
}

// TestMaxConnectionAgeJitterPerConnection: connections accepted at the same
// instant get different deadlines within ±10% of the max age, and every
// request on a connection gets the same answer (close or not) at a given
// time: the one its deadline gives. With the jitter drawn per request,
// repeated requests during the jitter window disagreed.
func TestMaxConnectionAgeJitterPerConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const age = time.Minute
		tr := newConnTracker(age, 20*time.Second, metrics.NewSet())
		start := time.Now()
		conns, ctxs := acceptFakeConns(tr, 64)
		deadlines := make([]time.Time, len(conns))
		distinct := map[time.Time]bool{}
		for i, c := range conns {
			d, ok := ctxs[i].Value(connDeadlineKey{}).(time.Time)
			if !ok {
				t.Fatal("no deadline in the connection context")
			}
			if lo, hi := start.Add(age*9/10), start.Add(age*11/10); d.Before(lo) || d.After(hi) {
				t.Fatalf("deadline %v after accept, want %v to %v", d.Sub(start), lo.Sub(start), hi.Sub(start))
			}
			tr.mu.Lock()
			tracked := tr.conns[c].deadline
			tr.mu.Unlock()
			if !tracked.Equal(d) {
				t.Fatalf("closeExpired sees deadline %v, requests see %v", tracked.Sub(start), d.Sub(start))
			}
			deadlines[i] = d
			distinct[d] = true
		}
		if len(distinct) != len(conns) {
			t.Fatalf("%d connections accepted together share %d deadlines", len(conns), len(distinct))
		}

		h := tr.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		closes := func(ctx context.Context) bool {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "POST", "/", nil))
			return rec.Header().Get("Connection") == "close"
		}
		sawMixed := false
		for off := age * 85 / 100; off <= age*115/100; off += age / 100 {
			time.Sleep(time.Until(start.Add(off)))
			n := 0
			for i, ctx := range ctxs {
				want := time.Now().After(deadlines[i])
				for range 8 {
					if got := closes(ctx); got != want {
						t.Fatalf("at %v, connection with deadline %v: close=%v, want %v", off, deadlines[i].Sub(start), got, want)
					}
				}
				if want {
					n++
				}
			}
			sawMixed = sawMixed || (n > 0 && n < len(ctxs))
		}
		if !sawMixed {
			t.Fatal("all connections crossed their deadline in the same step")
		}
	})
}

// TestCloseExpiredUsesConnectionDeadline: closeExpired closes each
// connection on the first tick after its own deadline plus grace, not
// after the largest possible jittered age.
func TestCloseExpiredUsesConnectionDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const age, grace = time.Minute, 20 * time.Second
		tick := grace / 4 // closeExpired's period for this grace
		tr := newConnTracker(age, grace, metrics.NewSet())
		start := time.Now()
		conns, ctxs := acceptFakeConns(tr, 64)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { tr.closeExpired(ctx); close(done) }()
		defer func() { cancel(); <-done }() // also on t.Fatal: the bubble must end with no goroutines
		sawMixed := false
		for time.Since(start) <= age*11/10+grace+tick {
			time.Sleep(tick)
			synctest.Wait() // closeExpired has handled this tick
			n := 0
			for i, c := range conns {
				d := ctxs[i].Value(connDeadlineKey{}).(time.Time)
				want := time.Now().After(d.Add(grace))
				if got := c.closed.Load(); got != want {
					t.Fatalf("at %v, connection with deadline %v and grace %v: closed=%v, want %v", time.Since(start), d.Sub(start), grace, got, want)
				}
				if want {
					n++
				}
			}
			sawMixed = sawMixed || (n > 0 && n < len(conns))
		}
		if !sawMixed {
			t.Fatal("all connections were closed on the same tick")
		}
	})
}

// TestShedQuietOrder: ShedQuiet sheds only busy connections whose streams
// sent nothing for quietMin, tokenless ones first, never the caller's own,
// never one younger than quietMin, and never one holding no unit of the
// stream bound (at the connection limit, any); shedUnauthenticated keeps
// tokenless connections within their share, shedding the quietest.
func TestShedQuietOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewSet()
		tr := newConnTracker(0, 0, reg)
		conns, ctxs := acceptFakeConns(tr, 4)
		cs := make([]*connstate.Conn, len(ctxs))
		for i, ctx := range ctxs {
			cs[i] = connstate.FromContext(ctx)
			if cs[i] == nil {
				t.Fatal("no connstate.Conn in the connection context")
			}
			tr.track(conns[i], http.StateActive)
			cs[i].AddUnits(1)
		}
		cs[0].SetAuthenticated()
		cs[1].SetAuthenticated()
		cs[3].SetAuthenticated()
		if tr.ShedQuiet(nil) {
			t.Fatal("shed a connection younger than quietMin")
		}
		time.Sleep(2 * quietMin)
		cs[1].NoteData(time.Now().UnixNano())                // sending: never shed
		cs[3].NoteData(time.Now().Add(-quietMin).UnixNano()) // quiet, less than conn 0
		// conn 2 never authenticated: first, unless it is the caller's.
		if !tr.ShedQuiet(cs[2]) || !conns[0].closed.Load() {
			t.Fatal("want the quietest authenticated connection shed when the tokenless one is the caller's")
		}
		if !tr.ShedQuiet(nil) || !conns[2].closed.Load() {
			t.Fatal("want the tokenless connection shed first")
		}
		if !tr.ShedQuiet(nil) || !conns[3].closed.Load() || conns[1].closed.Load() {
			t.Fatal("want the quiet connection shed, not the sending one")
		}
		if tr.ShedQuiet(nil) {
			t.Fatal("shed a connection whose streams are sending")
		}
		// A connection whose request the pipeline is working on is
		// not quiet, however long ago its client sent.
		time.Sleep(2 * quietMin)
		cs[1].AddBusy(1)
		if tr.ShedQuiet(nil) || conns[1].closed.Load() {
			t.Fatal("shed a connection whose request is being served")
		}
		cs[1].AddBusy(-1)
		// One whose requests all wait for a unit (it holds none) is
		// queuing, not holding streams idle: the handler does not shed
		// it; at the connection limit it is a connection like any other.
		cs[1].AddUnits(-1)
		if tr.ShedQuiet(nil) || conns[1].closed.Load() {
			t.Fatal("shed for a unit a connection that holds none")
		}
		cs[1].AddUnits(1)
		if !tr.ShedQuiet(nil) || !conns[1].closed.Load() {
			t.Fatal("want the quiet connection shed once its request is served")
		}
		c5, _ := acceptFakeConns(tr, 1)
		tr.track(c5[0], http.StateActive)
		time.Sleep(2 * quietMin)
		if tr.ShedQuiet(nil) {
			t.Fatal("shed for a unit a connection that holds none")
		}
		if !tr.shedQuiet(anyConn) || !c5[0].closed.Load() {
			t.Fatal("want a quiet connection holding no unit shed at the connection limit")
		}
		if got := reg.GetOrCreateCounter(`otlplite_connections_dropped_total{reason="shed_quiet"}`).Get(); got != 5 {
			t.Errorf("shed_quiet counter %d, want 5", got)
		}

		// The tokenless share: 8 new tokenless connections, share 4.
		tr2 := newConnTracker(0, 0, metrics.NewSet())
		var more []*fakeConn
		for range 8 {
			c, _ := acceptFakeConns(tr2, 1)
			more = append(more, c[0])
			tr2.shedUnauthenticated(4)
			time.Sleep(time.Millisecond)
		}
		closed := 0
		for i, c := range more {
			if c.closed.Load() {
				closed++
				if i >= 4 {
					t.Errorf("connection %d shed, want the oldest (quietest) ones", i)
				}
			}
		}
		if closed != 4 {
			t.Errorf("%d of 8 tokenless connections shed, want 4 (share 4)", closed)
		}
	})
}
