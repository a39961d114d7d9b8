package ingest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// reserveAdmission is a budget of 100 bytes, 60 of which a holder takes,
// and a stream's ticket holding 30 wire bytes: a reserve of 20 for its
// decoded message does not fit until the holder lets go.
func reserveAdmission(t *testing.T, cfg AdmissionConfig) (a *admission, holder, stream *charge) {
	t.Helper()
	cfg.RequestLimit = 100
	if cfg.MaxWait == 0 {
		cfg.MaxWait = 5 * time.Second
	}
	a = newAdmission(cfg, time.Second)
	holder, stream = &charge{a: a}, &charge{a: a}
	if err := holder.Charge(context.Background(), 60); err != nil {
		t.Fatal(err)
	}
	if err := stream.Charge(context.Background(), 30); err != nil {
		t.Fatal(err)
	}
	return a, holder, stream
}

// TestReserveWaitsForRoom: where Grow refuses at once, Reserve waits for
// room, its stream's window charged to the waiting budget (parked) for the
// wait; it goes before a new request that came after it (a continuing
// charge), and nothing stays waiting or parked once it is admitted.
func TestReserveWaitsForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, holder, stream := reserveAdmission(t, AdmissionConfig{WaitingLimit: 1000, StreamWindow: 100})
		if err := stream.Grow(20); err == nil {
			t.Fatal("Grow took 20 bytes of a full budget")
		}
		reserved := make(chan error, 1)
		go func() { reserved <- stream.Reserve(context.Background(), 20) }()
		synctest.Wait()
		if _, waiting, st := a.snapshot(); waiting != 20+100 || st.Parked != 100 || st.Waited != 1 {
			t.Fatalf("waiting %d, parked %d, waits %d; want the 20 bytes and the 100-byte window waiting", waiting, st.Parked, st.Waited)
		}
		// A new request of 20 bytes arriving now queues behind it.
		later := &charge{a: a}
		admitted := make(chan error, 1)
		go func() { admitted <- later.Charge(context.Background(), 20) }()
		synctest.Wait()
		holder.release() // 60 free: the reserve first, then the new request
		if err := <-reserved; err != nil {
			t.Fatal(err)
		}
		if err := <-admitted; err != nil {
			t.Fatal(err)
		}
		if stream.held != 50 {
			t.Fatalf("stream ticket holds %d, want its 30 wire bytes and 20 reserved", stream.held)
		}
		if in, waiting, st := a.snapshot(); in != 70 || waiting != 0 || st.Parked != 0 {
			t.Fatalf("in flight %d, waiting %d, parked %d", in, waiting, st.Parked)
		}
		stream.release()
		later.release()
		if in, _, _ := a.snapshot(); in != 0 {
			t.Fatalf("%d bytes left in flight", in)
		}
	})
}

// TestReserveBounded: a reserve that room never comes for is refused as
// Charge's wait is, when the admission's MaxWait passes (UNAVAILABLE, to
// be retried) or its context ends (DEADLINE_EXCEEDED: the stream is gone,
// or the server shuts down), leaving nothing waiting or parked; one whose
// window and bytes do not fit the waiting budget is refused at once,
// without waiting; one that passes the whole budget can never be admitted
// (RESOURCE_EXHAUSTED, not retried).
func TestReserveBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _, stream := reserveAdmission(t, AdmissionConfig{WaitingLimit: 1000, StreamWindow: 100, MaxWait: 5 * time.Second})
		start := time.Now()
		err := stream.Reserve(context.Background(), 20)
		if st, ok := err.(*grpcwire.Status); !ok || st.Code != grpcwire.Unavailable || st.RetryDelay <= 0 {
			t.Fatalf("got %v, want UNAVAILABLE with a retry delay", err)
		}
		if waited := time.Since(start); waited != 5*time.Second {
			t.Fatalf("waited %v, want MaxWait", waited)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- stream.Reserve(ctx, 20) }()
		synctest.Wait()
		cancel()
		if st, ok := (<-done).(*grpcwire.Status); !ok || st.Code != grpcwire.DeadlineExceeded {
			t.Fatalf("got %v, want DEADLINE_EXCEEDED", st)
		}
		if in, waiting, st := a.snapshot(); in != 90 || waiting != 0 || st.Parked != 0 || stream.held != 30 {
			t.Fatalf("in flight %d, waiting %d, parked %d, ticket %d", in, waiting, st.Parked, stream.held)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		_, _, stream := reserveAdmission(t, AdmissionConfig{WaitingLimit: 110, StreamWindow: 100})
		start := time.Now()
		if st, ok := stream.Reserve(context.Background(), 20).(*grpcwire.Status); !ok || st.Code != grpcwire.Unavailable || time.Since(start) != 0 {
			t.Fatalf("got %v after %v, want UNAVAILABLE at once", st, time.Since(start))
		}
		if st, ok := stream.Reserve(context.Background(), 71).(*grpcwire.Status); !ok || st.Code != grpcwire.ResourceExhausted {
			t.Fatalf("got %v, want RESOURCE_EXHAUSTED", st)
		}
	})
}
