package handler

import (
	"bytes"
	"context"
	"net/http"
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

// TestOverloadRefusalsPerProtocol fills the budget with a request held by
// the sink and checks each protocol's retryable refusal.
func TestOverloadRefusalsPerProtocol(t *testing.T) {
	sink := &gateSink{gate: make(chan struct{})}
	defer close(sink.gate)
	h := New(Config{Sink: sink, Logger: quietLogger(), RetryDelay: 2 * time.Second,
		Admission: AdmissionConfig{RequestLimit: 6000, WaitingLimit: 1, MaxWait: 10 * time.Millisecond}})
	c := startHandler(t, h)
	held := traceRequest(goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID)
	if len(held) < 3001 || len(held) > 5000 {
		t.Fatalf("held request is %d bytes", len(held))
	}
	go c.Invoke(context.Background(), traceExport, held) // waits in the sink, holding its bytes
	deadline := time.Now().Add(5 * time.Second)
	for sink.blocked.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	big := bytes.Clone(held) // does not fit beside the held one

	_, err := c.Invoke(context.Background(), traceExport, big)
	if st := statusOf(t, err); st.Code != grpcwire.Unavailable || st.RetryDelay <= 0 {
		t.Fatalf("gRPC: %+v", st)
	}
	resp, err := http.Post(c.BaseURL+"/v1/traces", "application/x-protobuf", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("HTTP: %d Retry-After=%q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	s := openStream(t, c, "ExportTraces")
	s.send(9, big)
	a, ok := s.recv()
	if !ok || a.id != 9 || a.code != resultRetryable || !a.hasDelay {
		t.Fatalf("stream: %+v", a)
	}
	// A request larger than the whole budget is refused as too large.
	huge := bytes.Repeat(big, 2)
	_, err = c.Invoke(context.Background(), traceExport, huge)
	if st := statusOf(t, err); st.Code != grpcwire.ResourceExhausted || st.RetryDelay != 0 {
		t.Fatalf("too large: %+v", st)
	}
	// On a stream it is not retryable either: resending cannot help.
	s.send(10, huge)
	if a, ok := s.recv(); !ok || a.id != 10 || a.code != resultNonRetryable || a.hasDelay {
		t.Fatalf("stream, too large: %+v", a)
	}
}
