package handler

import (
	"context"
	"sync"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// heldSink blocks every Write until release is closed, and reports each
// Write entered on entered.
type heldSink struct {
	memSink
	entered chan struct{}
	release chan struct{}
}

func (s *heldSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	s.entered <- struct{}{}
	<-s.release
	return s.memSink.Write(ctx, sig, data, items)
}

// TestExportWorkersNeverQueue: unary exports in flight beyond the export
// workers do not wait for one (each reaches the sink while the workers are
// all held there), the workers stay within their bound, and every request
// is stored and answered.
func TestExportWorkersNeverQueue(t *testing.T) {
	n := 3*int(maxExportWorkers()) + 2
	sink := &heldSink{entered: make(chan struct{}, n), release: make(chan struct{})}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	c := startHandler(t, h)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID))
			errs <- err
		})
	}
	for range n {
		<-sink.entered // every request is in the sink at once
	}
	if live, limit := h.exports.live.Load(), h.exports.max; live > limit || live == 0 {
		t.Fatalf("%d export workers with %d requests in the sink, want 1 to %d", live, n, limit)
	}
	close(sink.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := len(sink.all()); got != n {
		t.Fatalf("%d requests stored, want %d", got, n)
	}
}
