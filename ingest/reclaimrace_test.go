package ingest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestNoSpareKeptWhileReclaiming: the reclaimers are called without the
// budget's lock, so a stream may end and keep a spare (HoldSpareState)
// while a request, a decompressed request's growth or a stream's state is
// making room: that spare must be refused, or it holds the room the
// reclaim just freed and the request waits behind idle spares (nothing
// reclaims again while it waits: release only admits), its growth or the
// stream's state is refused.
func TestNoSpareKeptWhileReclaiming(t *testing.T) {
	const limit, spare = 1000, 400
	for _, tc := range []struct {
		name string
		// held is what a request holds before; kept, the spares.
		held, kept int64
		// try takes the room and reports whether it had it at once.
		try func(t *testing.T, p *Pipeline, h *spareHolder) bool
	}{
		{"request, spares refilled", 300, spare, func(t *testing.T, p *Pipeline, h *spareHolder) bool {
			return admittedAtOnce(t, p.adm, 600)
		}},
		{"request waits, nothing to reclaim", 300, 0, func(t *testing.T, p *Pipeline, h *spareHolder) bool {
			// It waits for the request before it, and is admitted
			// when that one is done.
			res := make(chan bool, 1)
			go func() { res <- p.adm.acquire(context.Background(), 800, false) == nil }()
			synctest.Wait()
			p.adm.release(300)
			synctest.Wait()
			select {
			case ok := <-res:
				return ok
			default:
				p.ReleaseStreamState(h.held.Swap(0)) // let it end
				<-res
				return false
			}
		}},
		{"growth", 300, spare, func(t *testing.T, p *Pipeline, h *spareHolder) bool {
			return p.adm.tryAcquire(600) == nil
		}},
		{"stream state", 0, spare, func(t *testing.T, p *Pipeline, h *spareHolder) bool {
			return p.HoldStreamState(300)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, h := newReclaimPipeline(limit)
				if tc.held > 0 {
					if st := p.adm.acquire(context.Background(), tc.held, false); st != nil {
						t.Fatal(st)
					}
				}
				if tc.kept > 0 && !h.keep(tc.kept) {
					t.Fatal("a spare that fits was not kept")
				}
				// A stream of another goroutine ends during the
				// reclaim and keeps its decoder.
				first := true
				p.AddReclaimer(func() bool {
					if first {
						first = false
						done := make(chan struct{})
						go func() { h.keep(spare); close(done) }()
						<-done
					}
					return false
				})
				if !tc.try(t, p, h) {
					in, _, _ := p.adm.snapshot()
					t.Errorf("no room while idle spares held %d of the %d budget (in flight %d)", h.held.Load(), limit, in)
				}
			})
		})
	}
}

// admittedAtOnce acquires n (a new request) and reports whether it was
// admitted without waiting; one that waits is admitted when the
// spares go (the test's cleanup), or refused at MaxWait.
func admittedAtOnce(t *testing.T, a *admission, n int64) bool {
	t.Helper()
	res := make(chan bool, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		res <- a.acquire(ctx, n, false) == nil
	}()
	synctest.Wait()
	select {
	case ok := <-res:
		return ok
	default:
		<-res // refused at its deadline
		return false
	}
}

// TestReclaimBudgetOff: with the budget Off, spares take only the state
// half (nothing in flight), a stream's state reclaims them there, and
// requests, which are never made to wait or refused, never call the
// reclaimers.
func TestReclaimBudgetOff(t *testing.T) {
	p := &Pipeline{adm: newAdmission(AdmissionConfig{RequestLimit: 1000, Off: true}, time.Second)}
	h := &spareHolder{p: p}
	p.AddReclaimer(h.reclaim)
	if st := p.adm.acquire(context.Background(), 1000, false); st != nil {
		t.Fatal(st)
	}
	if st := p.adm.tryAcquire(1000); st != nil {
		t.Fatal(st)
	}
	if h.calls.Load() != 0 {
		t.Fatalf("requests called the reclaimers %d times with the budget off", h.calls.Load())
	}
	if !h.keep(400) {
		t.Fatal("a spare that fits the state half was not kept")
	}
	if !p.HoldStreamState(300) {
		t.Fatal("a stream's state was refused while spares held the state half")
	}
	if in, _, st := p.adm.snapshot(); in != 0 || st.Reclaims != 1 || h.held.Load() != 0 || p.StreamStateHeld() != 300 {
		t.Fatalf("in flight %d, reclaims %d, spares %d, state %d; want 0, 1, 0, 300", in, st.Reclaims, h.held.Load(), p.StreamStateHeld())
	}
}

// TestReclaimerPanics: a reclaimer that panics (a bug) does not take the
// budget down with it: the panic reaches the caller (net/http recovers a
// handler's), and the budget's lock and its count of reclaims under way
// are as before, so that requests, streams and spares go on.
func TestReclaimerPanics(t *testing.T) {
	p, h := newReclaimPipeline(1000)
	p.AddReclaimer(func() bool { panic("reclaimer bug") })
	if st := p.adm.acquire(context.Background(), 800, false); st != nil {
		t.Fatal(st)
	}
	for name, f := range map[string]func(){
		"stream state": func() { p.HoldStreamState(300) },
		"growth":       func() { p.adm.tryAcquire(300) },
		"request":      func() { p.adm.acquire(context.Background(), 300, false) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: the reclaimer's panic did not reach the caller", name)
				}
			}()
			f()
		}()
	}
	p.adm.release(800)
	if !h.keep(100) || !p.HoldStreamState(100) {
		t.Fatal("spares or state refused on an idle budget after a reclaimer panicked")
	}
	if st := p.adm.acquire(context.Background(), 800, false); st != nil {
		t.Fatalf("a request refused on a budget with room after a reclaimer panicked: %v", st)
	}
}

// TestReclaimCountsOnce: a request that reclaims is counted as any other,
// once: admitted at once (Admitted), or waiting (Waited) and then admitted,
// or refused (RefusedBusy); each reclaim that let go of state once.
func TestReclaimCountsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, h := newReclaimPipeline(1000)
		a := p.adm
		if st := a.acquire(context.Background(), 500, false); st != nil {
			t.Fatal(st)
		}
		if !h.keep(400) {
			t.Fatal("a spare that fits was not kept")
		}
		// Admitted at once, the spares let go for it.
		if st := a.acquire(context.Background(), 400, false); st != nil {
			t.Fatal(st)
		}
		// Waits (nothing to reclaim), and is admitted.
		done := make(chan struct{})
		go func() {
			if st := a.acquire(context.Background(), 300, false); st != nil {
				t.Error(st)
			}
			close(done)
		}()
		synctest.Wait()
		a.release(400)
		<-done
		// Waits and is refused: its deadline has passed.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if st := a.acquire(ctx, 900, false); st == nil {
			t.Fatal("a request admitted over a full budget")
		}
		if _, _, st := a.snapshot(); st.Admitted != 3 || st.Waited != 2 || st.RefusedBusy != 1 || st.Reclaims != 1 {
			t.Fatalf("admitted %d, waited %d, refused %d, reclaims %d; want 3, 2, 1, 1", st.Admitted, st.Waited, st.RefusedBusy, st.Reclaims)
		}
	})
}
