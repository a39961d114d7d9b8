package ingest

import "context"

// HoldStreamState charges n bytes that a transport holds for a stream's
// life besides its requests (an export stream's stateful decompressor,
// compression.StreamDecoderCost) to the request budget, without waiting,
// or reports false when they do not fit. Such state takes at most half of
// RequestLimit, whatever its streams, so requests always keep the other
// half: a stream that finds no room is served without the state (its
// client falls back to compressing each message alone). With the budget
// Off, nothing is charged to the requests' account but the half still
// bounds the state. ReleaseStreamState returns the charge.
func (p *Pipeline) HoldStreamState(n int64) bool { return p.adm.holdState(n) }

// ReleaseStreamState returns a HoldStreamState charge.
func (p *Pipeline) ReleaseStreamState(n int64) { p.adm.releaseState(n) }

// HoldStreamStateFor is HoldStreamState for a stream of the tenant of ctx
// (WithTenant): the charge counts against the tenant's max_budget_share
// too, in the one account its requests are charged to, and the tenant's
// state takes at most half its share (as the budget's state takes at most
// half the budget), so that one tenant opening many streams cannot hold
// the state every other tenant's streams are owed, and its own requests
// keep the other half of its share. A stream beyond its tenant's share
// finds no room, as when the budget is full: it is served without the
// state (or refused, where it cannot be served without). With tenancy
// off, or no tenant in ctx, it is HoldStreamState. ReleaseStreamStateFor,
// with the same ctx, returns the charge.
func (p *Pipeline) HoldStreamStateFor(ctx context.Context, n int64) bool {
	ts, ok := p.holdTenantState(ctx, n)
	if !ok {
		return false
	}
	if !p.adm.holdState(n) {
		ts.releaseState(n)
		return false
	}
	return true
}

// ReleaseStreamStateFor returns a HoldStreamStateFor charge, to the
// budget and to the tenant of ctx.
func (p *Pipeline) ReleaseStreamStateFor(ctx context.Context, n int64) {
	p.adm.releaseState(n)
	p.stateTenant(ctx).releaseState(n)
}

// stateTenant is the tenant a stream of ctx charges its state to: nil
// with tenancy off, no tenant in ctx, or no ctx.
func (p *Pipeline) stateTenant(ctx context.Context) *tenantState {
	if p.ten == nil || ctx == nil {
		return nil
	}
	return tenantOf(ctx)
}

// holdTenantState charges n bytes of stream state to the tenant of ctx
// (held and state), or reports false, charging nothing, when they do not
// fit its share. It returns the tenant charged (nil: none).
func (p *Pipeline) holdTenantState(ctx context.Context, n int64) (*tenantState, bool) {
	ts := p.stateTenant(ctx)
	if ts == nil {
		return nil, true
	}
	share, _ := ts.limits(p.ten.quotas, p.ten.now(), p.adm.limit)
	held, state := ts.held.Add(n), ts.state.Add(n)
	if share > 0 && (held > share || state > share/2) {
		ts.releaseState(n)
		return nil, false
	}
	return ts, true
}

// releaseState returns n bytes of a holdTenantState charge (nil: none).
func (ts *tenantState) releaseState(n int64) {
	if ts != nil {
		ts.held.Add(-n)
		ts.state.Add(-n)
	}
}

// StreamStateHeld returns the bytes HoldStreamState holds now.
func (p *Pipeline) StreamStateHeld() int64 {
	p.adm.mu.Lock()
	defer p.adm.mu.Unlock()
	return p.adm.state
}

// HoldSpareState is HoldStreamState for state kept only to save work later
// (a decoder or buffer an ended stream leaves for the next one): it never
// makes room by reclaiming (AddReclaimer), and it fails while requests
// wait for the budget, so that spares never take what a client is
// waiting for, nor while one calls the reclaimers to make room.
func (p *Pipeline) HoldSpareState(n int64) bool { return p.adm.holdSpare(n) }

// AddReclaimer registers f, which lets go of spare state held with
// HoldSpareState (returning its charge) and reports whether it let go of
// any. The budget calls every registered f, without its lock held, before
// a request waits or is refused for lack of room and before a
// HoldStreamState fails, so that idle spares never cost a client its
// room. f must not call into the budget but to release, and must be safe
// for concurrent use. The returned func unregisters f.
func (p *Pipeline) AddReclaimer(f func() bool) (remove func()) {
	a := p.adm
	r := &reclaimer{f: f}
	a.mu.Lock()
	a.reclaimers = append(a.reclaimers, r)
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		for i, x := range a.reclaimers {
			if x == r {
				a.reclaimers = append(a.reclaimers[:i:i], a.reclaimers[i+1:]...)
				return
			}
		}
	}
}

// reclaimer is a registered AddReclaimer func (a pointer, to be found
// again by its remove).
type reclaimer struct{ f func() bool }

// reclaimLocked calls the reclaimers, without a.mu (which the caller
// holds, and holds again on return), and counts it when any let go of
// state. No spare is kept from its call to its return (a.reclaiming), so
// that what they let go is still free when the caller looks again.
//
// A reclaimer that panics (a bug) leaves the budget as it found it: the
// panic goes on with a.mu not held (the caller must not defer its unlock
// over this call) and spares kept again.
func (a *admission) reclaimLocked() {
	rs := a.reclaimers
	a.reclaiming++
	a.mu.Unlock()
	returned := false
	defer func() {
		if !returned {
			a.mu.Lock()
			a.reclaiming--
			a.mu.Unlock()
		}
	}()
	any := false
	for _, r := range rs {
		if r.f() {
			any = true
		}
	}
	returned = true
	a.mu.Lock()
	a.reclaiming--
	if any {
		a.stats.Reclaims++
	}
}

func (a *admission) holdState(n int64) bool {
	a.mu.Lock()
	ok := a.holdStateLocked(n)
	if !ok && len(a.reclaimers) > 0 {
		a.reclaimLocked()
		ok = a.holdStateLocked(n)
	}
	a.mu.Unlock()
	return ok
}

func (a *admission) holdSpare(n int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.waiters) > 0 || a.reclaiming > 0 {
		return false
	}
	return a.holdStateLocked(n)
}

// holdStateLocked charges n bytes of state if they fit (a.mu held).
func (a *admission) holdStateLocked(n int64) bool {
	if a.state+n > a.limit/2 || !a.off && a.inFlight+n > a.limit {
		return false
	}
	a.state += n
	if !a.off {
		a.inFlight += n
	}
	return true
}

func (a *admission) releaseState(n int64) {
	a.mu.Lock()
	a.state -= n
	a.mu.Unlock()
	a.release(n) // a no-op with the budget off
}

// StateChargeStep is the step in which a StateCharge takes and returns
// budget: small beside any stream's bound, large enough that state growing
// a buffer at a time (an Arrow allocator, a STEF reader's dictionaries)
// takes the admission lock rarely.
const StateChargeStep = 256 << 10

// StateCharge is stream state whose size changes while the stream lives
// (dictionaries, allocator buffers), charged with HoldStreamState as it
// grows and returned as it shrinks, in StateChargeStep steps. The zero
// value is not usable: make one with Pipeline.NewStateCharge. Not safe for
// concurrent use: one stream's goroutine resizes it.
type StateCharge struct {
	p *Pipeline
	// ctx names the stream's tenant (NewStateCharge).
	ctx  context.Context
	held int64
}

// NewStateCharge returns an empty StateCharge on p's budget and the share
// of the tenant of ctx (HoldStreamStateFor; none without a tenant).
func (p *Pipeline) NewStateCharge(ctx context.Context) *StateCharge {
	return &StateCharge{p: p, ctx: ctx}
}

// Resize charges for n bytes held now. Growing, it takes what is missing,
// rounded up to a step, or reports false and takes nothing when the budget
// has no room. Shrinking, it returns what is held beyond n by more than a
// step: one step of slack, so that state hovering at a step's edge does
// not take and return it again and again.
func (c *StateCharge) Resize(n int64) bool {
	if need := n - c.held; need > 0 {
		step := (need + StateChargeStep - 1) / StateChargeStep * StateChargeStep
		if !c.p.HoldStreamStateFor(c.ctx, step) {
			return false
		}
		c.held += step
		return true
	}
	keep := (max(n, 0) + StateChargeStep - 1) / StateChargeStep * StateChargeStep
	if excess := c.held - keep - StateChargeStep; excess > 0 {
		c.p.ReleaseStreamStateFor(c.ctx, excess)
		c.held -= excess
	}
	return true
}

// Held returns what c holds of the budget.
func (c *StateCharge) Held() int64 { return c.held }

// Release returns the whole charge (the stream ended).
func (c *StateCharge) Release() {
	if c.held > 0 {
		c.p.ReleaseStreamStateFor(c.ctx, c.held)
		c.held = 0
	}
}
