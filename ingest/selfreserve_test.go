package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// TestSelfReserve: with the whole request budget held by a user request,
// a user request is refused busy while a self request (WithSelf) is
// admitted from the reserve and stored; a self request larger than the
// reserve is refused as too large, and the reserve is whole again after.
func TestSelfReserve(t *testing.T) {
	p := New(Config{Sink: discardSink{}, Logger: quietLog(), Admission: AdmissionConfig{RequestLimit: 4096, WaitingLimit: -1, MaxWait: time.Millisecond, Reserve: 2048}})
	ctx := context.Background()
	hog := p.Take(ctx)
	defer p.Done(hog)
	if err := hog.Charge(ctx, 4096); err != nil {
		t.Fatal(err)
	}
	body := spans("a", "b")
	if _, st := exportSpans(p, ctx, body); st == nil || st.Code != grpcwire.Unavailable {
		t.Fatalf("a user request with the budget full: %v, want UNAVAILABLE", st)
	}
	self := p.WithSelf(ctx)
	for range 3 {
		res, st := exportSpans(p, self, body)
		if st != nil || res.Items != 2 {
			t.Fatalf("a self request with the user budget full: %+v %v", res, st)
		}
	}
	if _, st := exportSpans(p, self, make([]byte, 3000)); st == nil || st.Code != grpcwire.Unavailable {
		t.Fatalf("a self request over the reserve: %v, want UNAVAILABLE", st)
	}
	p.adm.mu.Lock()
	held, inFlight := p.adm.reserveHeld, p.adm.inFlight
	p.adm.mu.Unlock()
	if held != 0 || inFlight != 4096 {
		t.Fatalf("reserve holds %d, budget %d after the requests", held, inFlight)
	}
}
