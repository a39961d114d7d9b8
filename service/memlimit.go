package service

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// memoryLimitStep is the step in which the soft memory limit follows the
// window of idempotency keys: fine enough beside the 48 MiB margin, coarse
// enough that a filling window changes the limit rarely.
const memoryLimitStep = 4 << 20

// memoryLimitEvery is how often the limit looks at the window: it fills at
// most as fast as requests arrive, each adding at most 896 bytes.
const memoryLimitEvery = time.Second

// FollowMemoryLimit keeps the process's soft memory limit (set by the
// caller to base, Config.MemoryLimitBytes with "auto") at base plus what
// the window of idempotency keys holds, in memoryLimitStep steps, until
// stop is closed. The window's entries are live data the collector cannot
// free: a limit that ignored them would make it collect without end once
// the window fills, and one that reserved the window's bound would let an
// empty window's heap double.
//
// Until stop is closed it also sizes the collector's slack to the garbage
// rather than to the live heap, unless GOGC is set (gcpercent.go): the
// live heap of a busy receiver is mostly request bodies, which GOGC=100
// would double; and it gives back what a burst left (burstRelease).
func (s *Service) FollowMemoryLimit(base int64, stop <-chan struct{}) {
	s.metrics.GetOrCreateGauge("otlplite_go_gc_percent", gcPercentNow)
	released := s.metrics.GetOrCreateCounter("otlplite_go_burst_releases_total")
	gc := followGC()
	defer gc.stop()
	t := time.NewTicker(memoryLimitEvery)
	defer t.Stop()
	set := base
	var burst burstRelease
	var taken uint64
	// What the runtime holds that is not returned to the system: about
	// the process's resident memory beside its executable.
	held := [2]metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	heldNow := func() int64 {
		metrics.Read(held[:])
		return int64(held[0].Value.Uint64()) - int64(held[1].Value.Uint64())
	}
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if want := memoryLimitFor(base, s.handler.Pipeline().DedupBytes()); base > 0 && want != set {
			debug.SetMemoryLimit(want)
			set = want
		}
		p := s.handler.Pipeline()
		inFlight, waiting := p.AdmissionState()
		arrived := p.Taken() != taken
		taken = p.Taken()
		if burst.tick(busyFor(requestBytes(inFlight, waiting, p.StreamStateHeld()), arrived), heldNow()) {
			// Two collections: the first moves the pools' entries
			// aside (sync.Pool), the second (in FreeOSMemory) frees
			// them and returns the pages; then the collector's slack
			// is set for the heap that is left.
			runtime.GC()
			debug.FreeOSMemory()
			gc.follow()
			burst.released(heldNow())
			released.Inc()
		}
	}
}

// requestBytes is what requests hold or wait for, of the budget's inFlight
// and waiting: stream state (open streams' decoders, and what ended
// streams left for the next, ingest.Pipeline.HoldSpareState) is charged to
// inFlight for as long as it is held, busy or not, so an idle receiver
// whose clients keep streams open or left spares would never be seen idle.
func requestBytes(inFlight, waiting, state int64) int64 {
	return max(inFlight-state, 0) + waiting
}

// busyFor is what the burst release counts as held by requests at a
// tick: what they hold (requestBytes), and at least a byte when requests
// arrived since the last tick although none is in flight at this instant.
// A steady load of large requests is mostly between requests at any
// instant (a 2 MB request stored in 5 ms, one every 100 ms: a tick saw
// nothing in flight 19 times in 20), and was seen idle five ticks in a row
// every few seconds: its pools were emptied and its heap given back under
// load, each request's buffers allocated again (streamcpu, session 13: one
// or two releases a round per server at 8,192 items).
func busyFor(held int64, arrived bool) int64 {
	if arrived {
		return max(held, 1)
	}
	return held
}

// burstIdle is how long nothing must be in flight before the heap a burst
// left is given back: long enough that a steady trickle of requests (each
// in flight for milliseconds) is seldom seen idle this many ticks in a row.
const burstIdle = 5 // ticks of memoryLimitEvery

// burstMin is how much the memory the runtime holds must have grown since
// it was last given back for a release to be worth its two collections:
// beyond the collector's own slack (gcHeadroom), several requests' pooled
// buffers.
const burstMin = 16 << 20

// burstRelease decides when the heap a burst left is given back. The
// pools keep the buffers of the largest requests seen (ingest's tickets,
// up to 8 MiB a buffer; decoders) and sync.Pool frees them only after two
// collections, which an idle receiver does not run (Go forces one every
// two minutes): after a burst of 64 MiB requests, hundreds of MiB would
// stay resident for minutes (and pages already freed are returned to the
// system only gradually). When nothing has been in flight for burstIdle
// ticks and the runtime holds burstMin more than the last release left,
// the follower collects twice and returns the freed pages.
type burstRelease struct {
	idle  int
	floor int64 // what the runtime held after the last release
}

// tick reports whether to give back the heap now, with inFlight bytes
// held by requests and held bytes held by the runtime (not returned to the
// system).
func (b *burstRelease) tick(inFlight, held int64) bool {
	if inFlight > 0 {
		b.idle = 0
		return false
	}
	b.idle++
	return b.idle >= burstIdle && held >= b.floor+burstMin
}

// released records a release after which the runtime held held bytes.
func (b *burstRelease) released(held int64) { b.floor, b.idle = held, 0 }

// memoryLimitFor is the soft limit for base with held bytes in the window
// of idempotency keys: base plus held rounded up to memoryLimitStep.
func memoryLimitFor(base, held int64) int64 {
	return base + (held+memoryLimitStep-1)/memoryLimitStep*memoryLimitStep
}
