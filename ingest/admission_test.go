package ingest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

func TestAdmissionLimits(t *testing.T) {
	a := newAdmission(AdmissionConfig{RequestLimit: 100, WaitingLimit: 50, MaxWait: time.Second}, time.Second)
	ctx := context.Background()
	if st := a.acquire(ctx, 101, false); st == nil || st.Code != grpcwire.ResourceExhausted || st.RetryDelay != 0 {
		t.Fatalf("too large: %v", st)
	}
	if st := a.acquire(ctx, 90, false); st != nil {
		t.Fatal(st)
	}
	if st := a.tryAcquire(20); st == nil || st.Code != grpcwire.Unavailable {
		t.Fatalf("grow past the budget: %v", st)
	}
	// Two waiters fit in the waiting limit; a third is refused at once.
	results := make(chan *grpcwire.Status, 2)
	order := make(chan int64, 2)
	var wg sync.WaitGroup
	for _, n := range []int64{20, 30} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := a.acquire(ctx, n, false)
			if st == nil {
				order <- n
			}
			results <- st
		}()
		time.Sleep(50 * time.Millisecond) // 20 queues before 30
	}
	if st := a.acquire(ctx, 10, false); st == nil || st.Code != grpcwire.Unavailable || st.RetryDelay < 750*time.Millisecond || st.RetryDelay > 1250*time.Millisecond {
		t.Fatalf("over the waiting limit: %+v", st)
	}
	// Freeing 25 makes room for one of them: the newest (30), by LIFO.
	a.release(25)
	if first := <-order; first != 30 {
		t.Fatalf("admitted %d first, want the newest (30)", first)
	}
	a.release(65)
	wg.Wait()
	close(results)
	for st := range results {
		if st != nil {
			t.Fatal(st)
		}
	}
	if in, waiting, _ := a.snapshot(); in != 50 || waiting != 0 {
		t.Fatalf("in flight %d, waiting %d", in, waiting)
	}
}

func TestAdmissionWaitBoundedByDeadline(t *testing.T) {
	a := newAdmission(AdmissionConfig{RequestLimit: 10, WaitingLimit: 10, MaxWait: time.Hour}, time.Second)
	a.acquire(context.Background(), 10, false)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if st := a.acquire(ctx, 5, false); st == nil || st.Code != grpcwire.DeadlineExceeded {
		t.Fatalf("got %v", st)
	}
	if _, waiting, _ := a.snapshot(); waiting != 0 {
		t.Fatalf("abandoned waiter still counted: %d", waiting)
	}
}
