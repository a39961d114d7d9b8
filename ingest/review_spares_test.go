package ingest

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The review of streamspares (session 13): the spares' account under
// pressure, racing everything that takes or returns budget.

// TestReviewSparesUnderPressure: streams that take and return their state
// (HoldStreamState, which reclaims), streams that end and leave spares
// (Put) or start and take one (Get), requests that wait for the budget
// (acquire) or grow without waiting (tryAcquire), both of which reclaim,
// all at once in a budget a few spares fill: no charge is lost or
// returned twice (the budget's inFlight and state come back to nothing
// once everything is let go), the spares never exceed their bound, and no
// request is refused while spares could have made room for it (a request
// that fits the budget without any spare is admitted at once: the
// budget's streams and requests here never hold more than that together).
func TestReviewSparesUnderPressure(t *testing.T) {
	const (
		unit  = 1 << 10
		limit = 64 * unit
	)
	p := &Pipeline{adm: newAdmission(AdmissionConfig{RequestLimit: limit, WaitingLimit: limit, MaxWait: time.Minute}, time.Second)}
	zstd := NewSpares[[]byte](p, testMaxSpares)
	cols := NewSpares[[]byte](p, testMaxSpares)
	p.AddReclaimer(func() bool {
		z := zstd.DropAll()
		return cols.DropAll() || z
	})
	// Streams' own state and requests together hold at most 8 × 4
	// units, half the budget; the spares may fill the other half (state
	// is at most half) and more than their half is asked of them (4 × 6
	// + 4 × 8 units): a taker finds no room only for the spares, which
	// go first, and never needs to wait.
	for range testMaxSpares {
		zstd.Put(nil, 6*unit)
	}
	cols.Put(nil, 8*unit) // state is full: half the budget
	if _, c := zstd.Held(); c != testMaxSpares*6*unit {
		t.Fatalf("prefill: %d", c)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 400 {
				switch (g + i) % 6 {
				case 0: // a stream starts with a spare or a new decoder, then ends
					if !p.HoldStreamState(2 * unit) {
						t.Errorf("a stream's state refused with room for it but for spares")
						continue
					}
					b := make([]byte, 0, 8) // a stream that found none
					p.ReleaseStreamState(2 * unit)
					zstd.Put(b, 6*unit)
				case 1:
					// a stream takes a spare with its charge
					// (Take, the spare dearer than the
					// stream's state), or charges its own
					b, ok := cols.Take(context.Background(), 2*unit)
					if !ok && !p.HoldStreamState(2*unit) {
						t.Errorf("a stream's state refused with room for it but for spares")
						continue
					}
					p.ReleaseStreamState(2 * unit)
					cols.Put(b, 8*unit)
				case 2: // a request admitted at once, the spares reclaimed
					if st := p.adm.acquire(context.Background(), 4*unit, false); st != nil {
						t.Errorf("a request refused with room for it but for spares: %v", st)
						continue
					}
					p.adm.release(4 * unit)
				case 3: // a request's decompression grows
					if st := p.adm.tryAcquire(3 * unit); st != nil {
						t.Errorf("a growth refused with room for it but for spares: %v", st)
						continue
					}
					p.adm.release(3 * unit)
				case 4: // another stream ends
					cols.Put(make([]byte, 0, 8), 8*unit)
				case 5:
					if n, _ := cols.Held(); n > testMaxSpares {
						t.Errorf("%d spares kept", n)
					}
				}
			}
		})
	}
	wg.Wait()
	nz, cz := zstd.Held()
	nc, cc := cols.Held()
	if held := p.StreamStateHeld(); held != cz+cc {
		t.Fatalf("%d+%d spares charged %d+%d, stream state %d", nz, nc, cz, cc, held)
	}
	zstd.Close()
	cols.Close()
	p.adm.mu.Lock()
	inFlight, state, waiting := p.adm.inFlight, p.adm.state, p.adm.waiting
	p.adm.mu.Unlock()
	if inFlight != 0 || state != 0 || waiting != 0 {
		t.Fatalf("after everything was let go the budget holds %d (state %d, waiting %d)", inFlight, state, waiting)
	}
	if p.adm.stats.Reclaims == 0 {
		t.Fatal("no spare was ever in anyone's way: the test puts no pressure")
	}
	t.Logf("reclaims %d", p.adm.stats.Reclaims)
}

// TestReviewSparesGetReturnsCharge: a spare's charge and the stream's own
// are separate, each returned once: a stream that takes a spare holds its
// own charge only; one that finds its own charge refused has had the
// spares dropped first, and holds nothing.
func TestReviewSparesGetReturnsCharge(t *testing.T) {
	const limit = 1000
	p := &Pipeline{adm: newAdmission(AdmissionConfig{RequestLimit: limit, WaitingLimit: limit, MaxWait: time.Minute}, time.Second)}
	s := NewSpares[int](p, testMaxSpares)
	p.AddReclaimer(s.DropAll)
	for i := range 4 {
		if !s.Put(i, 100) {
			t.Fatal("not kept")
		}
	}
	// State may take half the budget (500): 400 of spares and a stream
	// of 200 do not fit together; the spares go, the stream is served.
	if !p.HoldStreamState(200) {
		t.Fatal("a stream refused for the spares' room")
	}
	if n, c := s.Held(); n != 0 || c != 0 {
		t.Fatalf("%d spares kept (%d) after a stream needed their room", n, c)
	}
	if _, ok := s.Get(); ok {
		t.Fatal("a spare after DropAll")
	}
	if held := p.StreamStateHeld(); held != 200 {
		t.Fatalf("stream state %d, want the stream's 200", held)
	}
	p.ReleaseStreamState(200)
	if p.adm.inFlight != 0 || p.StreamStateHeld() != 0 {
		t.Fatalf("inFlight %d, state %d after all was returned", p.adm.inFlight, p.StreamStateHeld())
	}
}

// TestReviewSparesTake: a stream that takes a spare with Take holds the
// spare's charge as its own, so it finds its spare even when the state's
// half of the budget is full of spares (Get then HoldStreamState found no
// room, reclaimed every spare, and took none); a spare kept at another
// cost has the difference charged or returned, and is not taken when the
// difference does not fit. Every charge is returned once.
func TestReviewSparesTake(t *testing.T) {
	const limit = 1000
	p := &Pipeline{adm: newAdmission(AdmissionConfig{RequestLimit: limit, WaitingLimit: limit, MaxWait: time.Minute}, time.Second)}
	s := NewSpares[int](p, testMaxSpares)
	p.AddReclaimer(s.DropAll)
	if !p.HoldStreamState(100) { // a stream of its own
		t.Fatal("refused")
	}
	for i := range 4 {
		if !s.Put(i, 100) {
			t.Fatal("not kept")
		}
	}
	// The state's half (500) is full: a new stream takes a spare.
	if v, ok := s.Take(context.Background(), 100); !ok || v != 3 {
		t.Fatalf("Take with the state's half full: %d, %v", v, ok)
	}
	if n, c := s.Held(); n != 3 || c != 300 || p.StreamStateHeld() != 500 {
		t.Fatalf("%d spares kept (%d), state %d: want 3 (300), 500", n, c, p.StreamStateHeld())
	}
	// Cheaper than its charge: the difference returned.
	if _, ok := s.Take(context.Background(), 60); !ok || p.StreamStateHeld() != 460 {
		t.Fatalf("Take(60) of a spare of 100: state %d, want 460", p.StreamStateHeld())
	}
	// Dearer: the difference charged (reclaiming the other spares).
	if _, ok := s.Take(context.Background(), 140); !ok || p.StreamStateHeld() != 500 {
		t.Fatalf("Take(140) of a spare of 100: state %d, want 500", p.StreamStateHeld())
	}
	// Dearer than the budget's half: not taken, its charge returned.
	if _, ok := s.Take(context.Background(), 400); ok {
		t.Fatal("a spare taken with a charge over the state's half")
	}
	if n, c := s.Held(); n != 0 || c != 0 || p.StreamStateHeld() != 400 {
		t.Fatalf("%d spares kept (%d), state %d: want none, the streams' 400", n, c, p.StreamStateHeld())
	}
	if _, ok := s.Take(context.Background(), 100); ok {
		t.Fatal("a spare taken from none")
	}
	for _, c := range []int64{100, 100, 60, 140} {
		p.ReleaseStreamState(c)
	}
	if p.adm.inFlight != 0 || p.StreamStateHeld() != 0 {
		t.Fatalf("inFlight %d, state %d after all was returned", p.adm.inFlight, p.StreamStateHeld())
	}
	var nilSpares *Spares[int]
	if _, ok := nilSpares.Take(context.Background(), 1); ok {
		t.Fatal("a nil Spares gave a value")
	}
}
