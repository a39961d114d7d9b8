package ingest

import (
	"context"
	"sync"
	"testing"
	"time"
)

// testMaxSpares is the bound of the tests' Spares.
const testMaxSpares = 4

// A stream ending as its owner shuts down: the spare it puts back is
// either refused (Close came first) or let go by Close, never kept and
// charged afterwards. (close once let the spares go and then, in a
// second critical section, stopped keeping more: a put between the two
// kept its spare, charged, for the owner's life.)
func TestSparesShutdownRacingPut(t *testing.T) {
	pl := New(Config{Sink: &countingSink{}, Logger: quietLog()})
	for i := range 2000 {
		s := NewSpares[int](pl, testMaxSpares)
		start := make(chan struct{})
		done := make(chan struct{})
		go func() {
			<-start
			s.Put(i, 1<<10)
			close(done)
		}()
		s.Put(-1, 1<<10) // something for Close to let go
		close(start)
		s.Close()
		<-done
		if n, cost := s.Held(); n != 0 || cost != 0 {
			t.Fatalf("round %d: %d spares kept, %d bytes charged, after Close", i, n, cost)
		}
		if held := pl.StreamStateHeld(); held != 0 {
			t.Fatalf("round %d: %d bytes of stream state charged after Close", i, held)
		}
	}
}

// Many streams ending and starting at once (Put, Get, DropAll from many
// goroutines): never more than the bound kept, each charged once, and
// every charge returned once they are let go.
func TestSparesConcurrent(t *testing.T) {
	pl := New(Config{Sink: &countingSink{}, Logger: quietLog()})
	s := NewSpares[[]byte](pl, testMaxSpares)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 300 {
				switch (g + i) % 5 {
				case 0, 1:
					s.Put(make([]byte, 0, 16<<10), 16<<10)
				case 2, 3:
					if b, ok := s.Get(); ok && cap(b) != 16<<10 {
						t.Errorf("a spare of %d bytes, want %d", cap(b), 16<<10)
					}
				case 4:
					s.DropAll()
				}
				if n, cost := s.Held(); n > testMaxSpares || cost != int64(n)*16<<10 {
					t.Errorf("%d spares kept, charged %d", n, cost)
				}
			}
		})
	}
	wg.Wait()
	n, cost := s.Held()
	if held := pl.StreamStateHeld(); held != cost {
		t.Fatalf("%d spares charged %d, stream state %d", n, cost, held)
	}
	s.DropAll()
	if held := pl.StreamStateHeld(); held != 0 {
		t.Fatalf("stream state %d charged with no spare", held)
	}
}

// Spares never take room anyone needs: a full Spares keeps no more (the
// bound), a spare the budget has no room for is not kept, and a request
// that fits the budget only without the spares is admitted at once, the
// spares let go (their owner's reclaimer), every charge returned.
func TestSparesBoundedAndYield(t *testing.T) {
	const limit, cost = 1000, 100
	p := &Pipeline{adm: newAdmission(AdmissionConfig{RequestLimit: limit, WaitingLimit: limit, MaxWait: time.Minute}, time.Second)}
	s := NewSpares[int](p, testMaxSpares)
	p.AddReclaimer(s.DropAll)
	for i := range testMaxSpares + 2 {
		s.Put(i, cost)
	}
	if n, c := s.Held(); n != testMaxSpares || c != testMaxSpares*cost || p.StreamStateHeld() != c {
		t.Fatalf("%d spares kept, charged %d, stream state %d: want %d, %d", n, c, p.StreamStateHeld(), testMaxSpares, testMaxSpares*cost)
	}
	if s.Put(-1, limit) {
		t.Fatal("a spare kept beyond the budget")
	}
	if v, ok := s.Get(); !ok || v != testMaxSpares-1 {
		t.Fatalf("Get: %d, %v", v, ok)
	}
	if st := p.adm.acquire(context.Background(), limit-cost, false); st != nil {
		t.Fatalf("a request that fits without the spares: %v", st)
	}
	if n, c := s.Held(); n != 0 || c != 0 {
		t.Fatalf("%d spares kept, charged %d, after a request needed their room", n, c)
	}
	if s.Put(1, 2*cost) {
		t.Fatal("a spare kept in a full budget")
	}
	p.adm.release(limit - cost)
	if held := p.StreamStateHeld(); held != 0 {
		t.Fatalf("stream state %d charged with no spare", held)
	}
}
