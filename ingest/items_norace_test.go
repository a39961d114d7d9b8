//go:build !race

package ingest

import (
	"context"
	"sync"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpview"
	"github.com/otlp-lite/otlp-lite/storage"
)

// TestItemSinkAllocs: with an engine that pools its batches, a request
// through the item sink allocates what it does through a byte sink, in
// steady state, whatever its number of spans: nothing per item.
func TestItemSinkAllocs(t *testing.T) {
	ctx := context.Background()
	allocs := func(cfg Config, body []byte) float64 {
		cfg.Logger = quietLog()
		p := New(cfg)
		export := func() {
			if _, err := p.Export(ctx, Request{Transport: Kafka, Signal: otlp.Traces, Body: body}); err != nil {
				t.Fatal(err)
			}
		}
		export() // the pools and the views' buffers grow once
		return testing.AllocsPerRun(200, export)
	}
	few, many := spans("a"), spans("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l")
	bytesFew := allocs(Config{Sink: discardSink{}}, few)
	for _, body := range [][]byte{few, many} {
		if n := allocs(Config{Items: &readEngine{}}, body); n > bytesFew {
			t.Errorf("item sink: %v allocations per request, byte sink %v", n, bytesFew)
		}
	}
}

// readEngine reads every span's ids and name and stores nothing; its
// batches are pooled, each with its Visitor made once.
type readEngine struct {
	batches sync.Pool
	sum     int
}

type readBatch struct {
	e *readEngine
	v otlpdecode.Visitor
}

func (e *readEngine) BeginItems(context.Context, storage.Signal) (storage.ItemBatch, error) {
	b, _ := e.batches.Get().(*readBatch)
	if b == nil {
		b = &readBatch{e: e}
		b.v.Span = func(_ *otlpview.Resource, _ *otlpview.Scope, sp *otlpview.Span) error {
			b.e.sum += len(sp.TraceID) + len(sp.SpanID) + len(sp.Name)
			return nil
		}
	}
	return b, nil
}

func (e *readEngine) Close() error                { return nil }
func (b *readBatch) Visitor() *otlpdecode.Visitor { return &b.v }
func (b *readBatch) Commit(context.Context) error { b.e.batches.Put(b); return nil }
func (b *readBatch) Discard()                     { b.e.batches.Put(b) }
