package service

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// The slack is gcHeadroom above the live heap, or a quarter of it, never
// more than GOGC=100 gives.
func TestGCPercentFor(t *testing.T) {
	for _, tc := range []struct {
		live int64
		want int
	}{
		{0, 100},
		{1 << 20, 100},         // a small heap: GOGC=100's goal, 2 MiB
		{gcHeadroom, 100},      // still GOGC=100's
		{2 * gcHeadroom, 50},   // gcHeadroom of slack
		{3 * gcHeadroom, 34},   // rounded up: at least gcHeadroom
		{4 * gcHeadroom, 25},   // a quarter
		{100 * gcHeadroom, 25}, // never less
	} {
		got := gcPercentFor(tc.live)
		if got != tc.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", tc.live, got, tc.want)
		}
		if slack := tc.live * int64(got) / 100; tc.live > 0 && got > minGCPercent && slack < gcHeadroom && got < 100 {
			t.Errorf("gcPercentFor(%d) = %d leaves %d bytes of slack, less than %d", tc.live, got, slack, gcHeadroom)
		}
	}
}

// After a collection that finds a large live heap, the follower lowers the
// GC percentage; once the heap is small again, it raises it.
func TestFollowGCTracksTheLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	f := &gcFollower{percent: 100}
	f.sample[0].Name = "/gc/heap/live:bytes"
	percent := func() int { p := debug.SetGCPercent(0); debug.SetGCPercent(p); return p }

	live := make([]byte, 8*gcHeadroom) // pointer-free, as request bodies are
	for i := range live {
		live[i] = 1
	}
	runtime.GC()
	f.follow()
	if p := percent(); p != minGCPercent {
		t.Fatalf("with %d live bytes the percentage is %d, want %d", len(live), p, minGCPercent)
	}
	runtime.KeepAlive(live)
	live = nil
	runtime.GC()
	f.follow()
	if p := percent(); p <= minGCPercent {
		t.Fatalf("with the large slice freed the percentage is %d, want more than %d", p, minGCPercent)
	}
}

// The follower runs after a collection, and again after the next one: it
// re-arms itself, and stops when told.
func TestFollowGCRunsAfterEachCollection(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	ran := make(chan int, 64)
	f := newGCFollower(ran)
	defer f.stop()
	failAt := time.After(10 * time.Second) // a bound on failure, not a wait
	for range 2 {
		// A collection that starts before the last run has re-armed
		// (a race only a test that collects back to back can lose)
		// leaves the run to the next one: collect until it runs.
	collect:
		for {
			select {
			case <-ran:
				break collect
			case <-failAt:
				t.Fatal("the follower did not run after collections")
			default:
				runtime.GC()
				runtime.Gosched()
			}
		}
	}
}
