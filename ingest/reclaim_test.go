package ingest

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// spareHolder is a transport's spare state for the reclaim tests: what it
// holds with HoldSpareState, let go by its reclaimer.
type spareHolder struct {
	p     *Pipeline
	held  atomic.Int64
	calls atomic.Int64
}

func (h *spareHolder) keep(n int64) bool {
	if !h.p.HoldSpareState(n) {
		return false
	}
	h.held.Add(n)
	return true
}

func (h *spareHolder) reclaim() bool {
	h.calls.Add(1)
	n := h.held.Swap(0)
	if n == 0 {
		return false
	}
	h.p.ReleaseStreamState(n)
	return true
}

func newReclaimPipeline(limit int64) (*Pipeline, *spareHolder) {
	p := &Pipeline{adm: newAdmission(AdmissionConfig{RequestLimit: limit, WaitingLimit: limit, MaxWait: time.Minute}, time.Second)}
	h := &spareHolder{p: p}
	p.AddReclaimer(h.reclaim)
	return p, h
}

// TestReclaimBeforeWaiting: spare state (HoldSpareState) never makes a
// request wait or be refused: a request that finds the budget full of
// spares takes their room back at once, as does a stream's own state and a
// decompressed request's growth; the reclaims are counted.
func TestReclaimBeforeWaiting(t *testing.T) {
	p, h := newReclaimPipeline(1000)
	a := p.adm
	if !h.keep(400) {
		t.Fatal("a spare that fits was not kept")
	}
	// The budget has 600 left; a request of 900 must not wait.
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if st := a.acquire(ctx, 900, false); st != nil {
		t.Fatalf("a request that fits once the spares are let go was refused: %v", st)
	}
	if h.held.Load() != 0 || p.StreamStateHeld() != 0 {
		t.Fatalf("the spares were not let go: %d held, %d stream state", h.held.Load(), p.StreamStateHeld())
	}
	a.release(900)

	// A stream's own state reclaims the state half (500 here).
	if !h.keep(400) {
		t.Fatal("a spare was not kept")
	}
	if !p.HoldStreamState(300) {
		t.Fatal("a stream's state was refused while spares held the room")
	}
	p.ReleaseStreamState(300)

	// A decompressed request's growth (tryAcquire) reclaims too.
	if !h.keep(400) {
		t.Fatal("a spare was not kept")
	}
	if st := a.tryAcquire(800); st != nil {
		t.Fatalf("growth refused while spares held the room: %v", st)
	}
	a.release(800)
	if _, _, st := a.snapshot(); st.Reclaims != 3 || st.RefusedGrow != 0 || st.Waited != 0 {
		t.Fatalf("reclaims %d, refused growth %d, waits %d; want 3, 0, 0", st.Reclaims, st.RefusedGrow, st.Waited)
	}
}

// TestSpareRefusedWhileRequestsWait: while a request waits for the budget,
// no spare is kept (it would take the room the waiter is owed), and the
// waiter is admitted when the budget frees.
func TestSpareRefusedWhileRequestsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, h := newReclaimPipeline(1000)
		a := p.adm
		if st := a.acquire(context.Background(), 1000, false); st != nil {
			t.Fatal(st)
		}
		admitted := make(chan struct{})
		go func() {
			if st := a.acquire(context.Background(), 500, false); st != nil {
				t.Error(st)
			}
			close(admitted)
		}()
		synctest.Wait() // the request waits
		if h.keep(10) {
			t.Fatal("a spare was kept while a request waited for the budget")
		}
		a.release(1000)
		<-admitted
		if !h.keep(10) {
			t.Fatal("a spare that fits was refused with nobody waiting")
		}
	})
}

// TestReclaimerRemoved: an unregistered reclaimer is not called again, and
// a budget with no spares does not count reclaims.
func TestReclaimerRemoved(t *testing.T) {
	p := &Pipeline{adm: newAdmission(AdmissionConfig{RequestLimit: 1000, WaitingLimit: 1000, MaxWait: time.Millisecond}, time.Second)}
	h := &spareHolder{p: p}
	remove := p.AddReclaimer(h.reclaim)
	if st := p.adm.acquire(context.Background(), 1000, false); st != nil {
		t.Fatal(st)
	}
	if p.HoldStreamState(10) {
		t.Fatal("state held over a full budget")
	}
	if h.calls.Load() != 1 {
		t.Fatalf("reclaimer called %d times, want 1", h.calls.Load())
	}
	remove()
	if p.HoldStreamState(10) {
		t.Fatal("state held over a full budget")
	}
	if h.calls.Load() != 1 {
		t.Fatalf("a removed reclaimer was called (%d calls)", h.calls.Load())
	}
	if _, _, st := p.adm.snapshot(); st.Reclaims != 0 {
		t.Fatalf("%d reclaims counted with nothing to let go", st.Reclaims)
	}
}
