package ingest

import (
	"context"
	"testing"
)

// A StateCharge takes whole steps as state grows, refuses (taking nothing)
// past the budget's half for stream state, gives back what is more than a
// step above the state as it shrinks, and everything on Release.
func TestStateCharge(t *testing.T) {
	p := New(Config{Sink: discardSink{}, Admission: AdmissionConfig{RequestLimit: 8 * StateChargeStep}})
	c := p.NewStateCharge(context.Background())
	if !c.Resize(1) || c.Held() != StateChargeStep || p.StreamStateHeld() != StateChargeStep {
		t.Fatalf("1 byte: held %d, budget %d; want one step", c.Held(), p.StreamStateHeld())
	}
	if !c.Resize(3*StateChargeStep+1) || c.Held() != 4*StateChargeStep {
		t.Fatalf("3 steps + 1: held %d, want 4 steps", c.Held())
	}
	// Half of 8 steps may be stream state: 5 steps do not fit.
	if c.Resize(5*StateChargeStep) || c.Held() != 4*StateChargeStep || p.StreamStateHeld() != 4*StateChargeStep {
		t.Fatalf("over the budget: held %d, budget %d; want a refusal and 4 steps", c.Held(), p.StreamStateHeld())
	}
	// Shrinking keeps one step of slack above the state.
	if !c.Resize(StateChargeStep) || c.Held() != 2*StateChargeStep {
		t.Fatalf("shrunk to 1 step: held %d, want 2 (one of slack)", c.Held())
	}
	c.Release()
	if c.Held() != 0 || p.StreamStateHeld() != 0 {
		t.Fatalf("released: held %d, budget %d", c.Held(), p.StreamStateHeld())
	}
}
