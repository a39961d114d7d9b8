package service

import (
	"runtime/debug"
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
// would double.
func (s *Service) FollowMemoryLimit(base int64, stop <-chan struct{}) {
	s.metrics.GetOrCreateGauge("otlplite_go_gc_percent", gcPercentNow)
	defer followGC()()
	if base <= 0 {
		<-stop
		return
	}
	t := time.NewTicker(memoryLimitEvery)
	defer t.Stop()
	set := base
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if want := memoryLimitFor(base, s.handler.Pipeline().DedupBytes()); want != set {
			debug.SetMemoryLimit(want)
			set = want
		}
	}
}

// memoryLimitFor is the soft limit for base with held bytes in the window
// of idempotency keys: base plus held rounded up to memoryLimitStep.
func memoryLimitFor(base, held int64) int64 {
	return base + (held+memoryLimitStep-1)/memoryLimitStep*memoryLimitStep
}
