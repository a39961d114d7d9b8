package ingest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// A decoder panic fails its request with INTERNAL and leaves the worker,
// and the process, serving.
func TestCheckPoolRecoversPanic(t *testing.T) {
	p := newCheckPool()
	defer p.stop()
	var j checkJob
	boom := func([]byte, *otlpdecode.Options) (otlpdecode.Result, error) { panic("boom") }
	ok := func([]byte, *otlpdecode.Options) (otlpdecode.Result, error) { return otlpdecode.Result{Items: 1}, nil }
	for range 2 * cap(make([]int, 0, 8)) { // more jobs than workers
		if _, err := p.run(&j, boom, nil, nil); !errors.As(err, new(*decoderPanic)) {
			t.Fatalf("err %v, want a decoderPanic", err)
		}
		if res, err := p.run(&j, ok, nil, nil); err != nil || res.Items != 1 {
			t.Fatalf("after a panic: %v %v", res, err)
		}
	}
}

// Admission charges as bytes arrive, so a request may wait part way; those
// that already hold budget go before new ones when room frees up.
func TestAdmissionContinuingWaitersFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(AdmissionConfig{RequestLimit: 100, WaitingLimit: 1000, MaxWait: time.Minute}, time.Second)
		ctx := context.Background()
		if st := a.acquire(ctx, 100, false); st != nil {
			t.Fatal(st)
		}
		var mu sync.Mutex
		var order []string
		var wg sync.WaitGroup
		wait := func(name string, continuing bool) {
			wg.Go(func() {
				if st := a.acquire(ctx, 60, continuing); st != nil {
					t.Errorf("%s: %v", name, st)
					return
				}
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
			})
			synctest.Wait() // queued in this order
		}
		wait("new", false)
		wait("continuing", true)
		wait("newer", false)
		a.release(100) // room for one of them
		synctest.Wait()
		a.release(60)
		synctest.Wait()
		a.release(60)
		wg.Wait()
		if got := strings.Join(order, ","); got != "continuing,newer,new" {
			t.Fatalf("admitted %s, want continuing,newer,new", got)
		}
	})
}

// A declared size is only checked: one larger than the whole budget is
// refused at once, as not retryable, and nothing is charged for it.
func TestTicketDeclareChargesNothing(t *testing.T) {
	a := newAdmission(AdmissionConfig{RequestLimit: 100}, time.Second)
	tk := charge{a: a}
	if err := tk.Declare(100); err != nil {
		t.Fatal(err)
	}
	if in, _, _ := a.snapshot(); in != 0 {
		t.Fatalf("declaring charged %d", in)
	}
	err := tk.Declare(101)
	if st, ok := errors.AsType[*grpcwire.Status](err); !ok || st.Code != grpcwire.ResourceExhausted || st.RetryDelay != 0 {
		t.Fatalf("declare over the budget: %v", err)
	}
	if err := tk.Charge(context.Background(), 60); err != nil {
		t.Fatal(err)
	}
	if err := tk.Charge(context.Background(), 41); err == nil {
		t.Fatal("a request's own charge passed the whole budget")
	}
	tk.release()
	if in, _, _ := a.snapshot(); in != 0 {
		t.Fatalf("after release: %d", in)
	}
}
