package ingest

import (
	"context"
	"testing"
	"time"
)

// The pooled buffers follow the requests: a ticket keeps buffers up to
// keptOver times the largest request seen lately; after a burst of large
// requests, smaller ones make the tickets drop the burst's buffers within
// a few sizeDecay, and a steady size is never dropped.
func TestPooledBuffersFollowTheRequests(t *testing.T) {
	p := New(Config{Sink: &countingSink{}, Logger: quietLog()})
	now := time.Unix(1_000_000, 0)
	serve := func(size, capacity int) *Ticket {
		tk := p.Take(context.Background())
		tk.start = now
		tk.Msg = make([]byte, size, capacity)
		p.Done(tk)
		return tk
	}
	const small, large = 200 << 10, 4 << 20
	if tk := serve(small, small); tk.Msg == nil {
		t.Fatal("a request's own buffer was dropped")
	}
	if tk := serve(large, large); tk.Msg == nil {
		t.Fatal("the largest request's buffer was dropped")
	}
	// A buffer grown for a large request, now serving a small one, is
	// kept while large requests are recent.
	if tk := serve(small, large); tk.Msg == nil {
		t.Fatal("a large buffer was dropped while large requests are recent")
	}
	// Only small requests from now on: the large buffers go within a
	// few halvings, the small ones stay.
	dropped := false
	for range 6 {
		now = now.Add(sizeDecay)
		if tk := serve(small, large); tk.Msg == nil {
			dropped = true
		}
		if tk := serve(small, small); tk.Msg == nil {
			t.Fatal("a steady size's buffer was dropped")
		}
	}
	if !dropped {
		t.Fatalf("after %v of small requests a %d-byte buffer is still kept", 6*sizeDecay, large)
	}
	// Buffers grown by doubling (up to twice their request) are kept.
	for range 6 {
		now = now.Add(sizeDecay)
		if tk := serve(small, 2*small); tk.Msg == nil {
			t.Fatal("a buffer twice its steady request was dropped")
		}
	}
	// Never more than maxPooledBuffer, whatever the requests.
	if tk := serve(maxPooledBuffer+1, maxPooledBuffer+1); tk.Msg != nil {
		t.Fatal("a buffer over maxPooledBuffer was kept")
	}
}
