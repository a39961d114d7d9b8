package service

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// The garbage collector's slack. With GOGC=100 the Go heap grows to twice
// its live data before a collection, and a busy receiver's live data is
// mostly request bodies: those in flight, charged to the admission budget,
// and the pooled buffers they are read into. They are reused, not garbage,
// and they are pointer-free, so marking them costs nothing: a slack sized
// to them buys almost no fewer collections, it only doubles what the
// process holds (64 requests of 240 KB in flight, 15 MB of bodies: a
// 36 MB heap goal, 50 MB resident). followGC sizes the slack to the garbage
// instead: at least gcHeadroom, a quarter of the live heap beyond that,
// never more than GOGC=100 would give (docs/limits.md).

// gcHeadroom is the least slack above the live heap: the Go runtime's own
// minimum heap goal (4 MiB at GOGC=100), which it deems enough for a small
// program; the request path allocates a few KB per request, so it is still
// hundreds of requests between collections, and an idle receiver's heap
// (3-4 MiB live) keeps GOGC=100, as before. Measured at gRPC 100x4 and
// 500x10 with 4 requests in flight: as many collections as GOGC=100.
const gcHeadroom = 4 << 20

// minGCPercent bounds the slack of a large heap from below (a quarter of
// it): garbage grows with the traffic that fills the heap (JSON and
// decompression allocate more per request), and collections per request
// must stay few at any heap size.
const minGCPercent = 25

// gcPercentFor is the GC percentage for a live heap of live bytes:
// gcHeadroom of slack, or minGCPercent of live when that is more, and never
// more than 100 (Go's default).
func gcPercentFor(live int64) int {
	if live <= 0 {
		return 100
	}
	p := (100*gcHeadroom + live - 1) / live
	return int(min(max(p, minGCPercent), 100))
}

// gcFollower sets the GC percentage from the live heap after every
// collection (a cleanup on an object dropped each cycle: the pacer must
// follow a burst within a cycle, not within a ticker's period).
type gcFollower struct {
	stopped atomic.Bool
	mu      sync.Mutex
	sample  [1]metrics.Sample
	percent int
	// ran, when set (tests), receives the percentage after each run.
	ran chan<- int
}

// followGC starts setting the GC percentage after every collection, unless
// GOGC is set (the operator's choice wins: then it returns nil, whose
// methods do nothing).
func followGC() *gcFollower {
	if os.Getenv("GOGC") != "" {
		return nil
	}
	return newGCFollower(nil)
}

// stop stops following (the percentage stays where it was).
func (f *gcFollower) stop() {
	if f != nil {
		f.stopped.Store(true)
	}
}

func newGCFollower(ran chan<- int) *gcFollower {
	f := &gcFollower{percent: 100, ran: ran}
	f.sample[0].Name = "/gc/heap/live:bytes"
	f.arm()
	return f
}

// arm attaches the follower to a new object that the next collection
// frees. The object is 16 bytes, not a tiny allocation (which shares a
// block with others and may outlive its cycle).
func (f *gcFollower) arm() {
	runtime.AddCleanup(new([16]byte), (*gcFollower).collected, f)
}

// collected runs after a collection freed the armed object. It arms the
// next one first, so the next collection is followed however soon it
// comes (then two may run at once: follow locks).
func (f *gcFollower) collected() {
	if f.stopped.Load() {
		return
	}
	f.arm()
	f.follow()
}

// follow sets the GC percentage for the live heap the last collection
// found. Besides the runs after collections, the burst release calls it
// after its own (whose run the second collection may have overtaken).
func (f *gcFollower) follow() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	metrics.Read(f.sample[:])
	if f.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := gcPercentFor(int64(f.sample[0].Value.Uint64())); p != f.percent {
		debug.SetGCPercent(p)
		f.percent = p
	}
	if f.ran != nil {
		select {
		case f.ran <- f.percent:
		default:
		}
	}
}

// gcPercentNow is the GC percentage in effect (otlplite_go_gc_percent).
func gcPercentNow() float64 {
	s := [1]metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64())
}
