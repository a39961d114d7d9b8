package ingest

import (
	"context"
	"testing"
)

// Stream state is charged to the stream's tenant's max_budget_share
// (HoldStreamStateFor), in the account its requests are: a tenant opening
// stream after stream holds at most half its share in state, and every
// other tenant's streams still find room.

// tenantStatePipeline is a pipeline of budget limit with tenancy on: "greedy"
// may hold a quarter of the budget, anyone else is unbounded.
func tenantStatePipeline(t *testing.T, limit int64) *Pipeline {
	t.Helper()
	qf, err := NewQuotaFile(writeFile(t, "greedy max_budget_share=0.25\n"))
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{Sink: &countingSink{}, Logger: quietLog(),
		Admission: AdmissionConfig{RequestLimit: limit}, Tenants: &TenantsConfig{Quotas: qf}})
}

func TestStreamStateHeldToTenantShare(t *testing.T) {
	const (
		unit  = 1 << 10
		limit = 64 * unit // state half: 32 units; greedy's share 16, its state 8
	)
	p := tenantStatePipeline(t, limit)
	greedy := p.WithTenant(context.Background(), "greedy", true)
	other := p.WithTenant(context.Background(), "other", true)

	held := 0
	for p.HoldStreamStateFor(greedy, unit) {
		held++
		if held > 64 {
			t.Fatal("the tenant's streams hold state without bound")
		}
	}
	// Half of the tenant's share (a quarter of the budget): its requests
	// keep the other half.
	if held != 8 {
		t.Fatalf("greedy holds %d units of stream state, want 8 (half its share of 16)", held)
	}
	ts := p.ten.lookup("greedy")
	if got := ts.held.Load(); got != 8*unit {
		t.Fatalf("greedy's account holds %d, want %d", got, 8*unit)
	}
	// Another tenant's stream still gets its state: greedy took only
	// what its share allows.
	if !p.HoldStreamStateFor(other, 16*unit) {
		t.Fatal("another tenant's stream was declined its state: greedy took it")
	}
	// The tenant's requests keep the other half of its share.
	tk := p.Take(greedy)
	if err := tk.c.Charge(context.Background(), 8*unit); err != nil {
		t.Fatalf("greedy's request refused with half its share free: %v", err)
	}
	if err := tk.c.Grow(1); err == nil {
		t.Fatal("greedy's request grew past its share with its streams' state")
	}
	p.Done(tk)

	// Releasing returns exactly what was charged, to both accounts.
	for range held {
		p.ReleaseStreamStateFor(greedy, unit)
	}
	p.ReleaseStreamStateFor(other, 16*unit)
	if in, _ := p.AdmissionState(); in != 0 || p.StreamStateHeld() != 0 {
		t.Fatalf("after release: in flight %d, state %d", in, p.StreamStateHeld())
	}
	for _, name := range []string{"greedy", "other"} {
		ts := p.ten.lookup(name)
		if ts.held.Load() != 0 || ts.state.Load() != 0 {
			t.Fatalf("%s still holds %d (state %d)", name, ts.held.Load(), ts.state.Load())
		}
	}
	// Its streams have their room back.
	if !p.HoldStreamStateFor(greedy, 8*unit) {
		t.Fatal("greedy's room was not given back")
	}
	p.ReleaseStreamStateFor(greedy, 8*unit)
}

// A spare belongs to no tenant while it waits; the stream that takes it
// (Take) holds its charge as its tenant's too, and a tenant at its
// share takes none.
func TestSpareTakenChargesTenant(t *testing.T) {
	const (
		unit  = 1 << 10
		limit = 64 * unit
	)
	p := tenantStatePipeline(t, limit)
	greedy := p.WithTenant(context.Background(), "greedy", true)
	other := p.WithTenant(context.Background(), "other", true)
	sp := NewSpares[int](p, testMaxSpares)
	for i := range 3 {
		if !sp.Put(i, 4*unit) {
			t.Fatal("spare not kept")
		}
	}
	ts := p.ten.lookup("greedy")
	// Greedy may hold 8 units of state: a spare at its cost, another at
	// a lower one (the difference returned), not a third.
	if _, ok := sp.Take(greedy, 4*unit); !ok {
		t.Fatal("no spare taken")
	}
	if _, ok := sp.Take(greedy, 3*unit); !ok {
		t.Fatal("no spare taken at a lower cost")
	}
	if got := ts.held.Load(); got != 7*unit {
		t.Fatalf("greedy holds %d, want %d", got, 7*unit)
	}
	if _, ok := sp.Take(greedy, 4*unit); ok {
		t.Fatal("greedy took a spare beyond its share")
	}
	if n, c := sp.Held(); n != 1 || c != 4*unit {
		t.Fatalf("the spare greedy was refused was not kept for the others: %d spares, %d", n, c)
	}
	if got := ts.held.Load(); got != 7*unit {
		t.Fatalf("a refused take left greedy holding %d, want %d", got, 7*unit)
	}
	if _, ok := sp.Take(other, 5*unit); !ok {
		t.Fatal("another tenant was refused the spare")
	}
	if _, ok := sp.Take(other, 5*unit); ok {
		t.Fatal("a spare taken from none")
	}
	if o := p.ten.lookup("other"); o.held.Load() != 5*unit || o.state.Load() != 5*unit {
		t.Fatalf("other holds %d (state %d), want %d", o.held.Load(), o.state.Load(), 5*unit)
	}
	if got := p.StreamStateHeld(); got != 12*unit {
		t.Fatalf("budget's state %d, want %d", got, 12*unit)
	}
	p.ReleaseStreamStateFor(greedy, 4*unit)
	p.ReleaseStreamStateFor(greedy, 3*unit)
	p.ReleaseStreamStateFor(other, 5*unit)
	if in, _ := p.AdmissionState(); in != 0 || p.StreamStateHeld() != 0 || ts.held.Load() != 0 || ts.state.Load() != 0 {
		t.Fatalf("after release: in flight %d, state %d, greedy %d", in, p.StreamStateHeld(), ts.held.Load())
	}
}

// Tenancy off, or a context without a tenant: HoldStreamStateFor is
// HoldStreamState, the state half of the budget its only bound.
func TestStreamStateForWithoutTenant(t *testing.T) {
	const unit = 1 << 10
	p := New(Config{Sink: &countingSink{}, Logger: quietLog(), Admission: AdmissionConfig{RequestLimit: 64 * unit}})
	ctx := p.WithTenant(context.Background(), "greedy", true) // tenancy off: ctx as it is
	n := 0
	for p.HoldStreamStateFor(ctx, unit) {
		n++
	}
	if n != 32 {
		t.Fatalf("held %d units, want the state half, 32", n)
	}
	for range n {
		p.ReleaseStreamStateFor(ctx, unit)
	}
	p = tenantStatePipeline(t, 64*unit)
	n = 0
	for p.HoldStreamStateFor(context.Background(), unit) {
		n++
	}
	if n != 32 {
		t.Fatalf("without a tenant, held %d units, want 32", n)
	}
}
