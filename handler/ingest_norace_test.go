//go:build !race

package handler

import (
	"context"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// nopSink stores nothing, without allocating.
type nopSink struct{}

func (nopSink) Write(context.Context, storage.Signal, []byte, int) error { return nil }
func (nopSink) Close() error                                             { return nil }

// TestIngestAllocs: ingesting a valid protobuf body allocates nothing once
// the handler's pools are warm (the Kafka consumer calls it per record).
// Not under the race detector, which drops sync.Pool items at random.
func TestIngestAllocs(t *testing.T) {
	h := New(Config{Sink: nopSink{}, Logger: quietLogger()})
	body := traceRequest(goodID, goodID)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := h.Ingest(ctx, otlp.Traces, body, IngestProto); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("Ingest allocates %.1f times per call, want 0", allocs)
	}
}
