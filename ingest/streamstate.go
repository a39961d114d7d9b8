package ingest

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

// StreamStateHeld returns the bytes HoldStreamState holds now.
func (p *Pipeline) StreamStateHeld() int64 {
	p.adm.mu.Lock()
	defer p.adm.mu.Unlock()
	return p.adm.state
}

func (a *admission) holdState(n int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
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
