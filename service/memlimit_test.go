package service

import "testing"

// The soft limit is the base while the window of idempotency keys is
// empty, and follows what it holds in 4 MiB steps, never below it.
func TestMemoryLimitFollowsTheWindow(t *testing.T) {
	const base = 68 << 20
	for _, tc := range []struct{ held, want int64 }{
		{0, base},
		{1, base + memoryLimitStep},
		{memoryLimitStep, base + memoryLimitStep},
		{memoryLimitStep + 1, base + 2*memoryLimitStep},
		{85 << 20, base + 88<<20},
	} {
		if got := memoryLimitFor(base, tc.held); got != tc.want || got < base+tc.held {
			t.Errorf("memoryLimitFor(%d, %d) = %d, want %d", base, tc.held, got, tc.want)
		}
	}
	// With "auto" the base no longer reserves the window's bound: an empty
	// window leaves the heap where the admission budget puts it.
	c := Config{MemoryLimit: "auto"}
	c.Admission.RequestLimit, c.Admission.WaitingLimit = 8<<20, 2<<20
	t.Setenv("GOMEMLIMIT", "")
	if got, err := c.MemoryLimitBytes(); err != nil || got != 2*(10<<20)+48<<20 {
		t.Fatalf("MemoryLimitBytes() = %d, %v; want %d", got, err, 2*(10<<20)+48<<20)
	}
}

// The heap a burst left is given back once nothing has been in flight for
// burstIdle ticks, and only when the live heap grew burstMin since the
// last release: a steady receiver, or one that is idle and already small,
// is not made to collect.
func TestBurstReleaseAfterIdle(t *testing.T) {
	var b burstRelease
	const small, big = 6 << 20, 6<<20 + burstMin
	for i := range 3 * burstIdle {
		if b.tick(1, big) {
			t.Fatalf("tick %d: released with requests in flight", i)
		}
	}
	for i := range burstIdle - 1 {
		if b.tick(0, big) {
			t.Fatalf("released after %d idle ticks, want %d", i+1, burstIdle)
		}
	}
	if b.tick(1, big) || b.tick(0, big) {
		t.Fatal("a request in flight did not restart the idle count")
	}
	for range burstIdle - 2 {
		b.tick(0, big)
	}
	if !b.tick(0, big) {
		t.Fatalf("not released after %d idle ticks with %d live bytes", burstIdle, big)
	}
	b.released(small)
	for i := range 3 * burstIdle {
		if b.tick(0, small+burstMin-1) {
			t.Fatalf("tick %d: released again, the heap less than burstMin above the last release", i)
		}
	}
	if !b.tick(0, small+burstMin) {
		t.Fatal("not released once the heap grew burstMin above the last release")
	}
}

// A steady load whose requests are never in flight at a tick's instant,
// but arrive between ticks, is not idle: its heap is not given back.
func TestBurstReleaseNotUnderSteadyLoad(t *testing.T) {
	var b burstRelease
	const big = 6<<20 + burstMin
	for i := range 3 * burstIdle {
		if b.tick(busyFor(0, true), big) {
			t.Fatalf("tick %d: released while requests kept arriving", i)
		}
	}
	for i := range burstIdle - 1 {
		if b.tick(busyFor(0, false), big) {
			t.Fatalf("released after %d idle ticks, want %d", i+1, burstIdle)
		}
	}
	if !b.tick(busyFor(0, false), big) {
		t.Fatalf("not released after %d ticks without a request", burstIdle)
	}
	if got := busyFor(5, true); got != 5 {
		t.Errorf("busyFor(5, true) = %d, want 5", got)
	}
}

// TestRequestBytesLeavesStreamState: the burst release's idea of idle
// counts requests, not stream state, which an idle receiver holds for its
// open streams and the spares ended streams left (a receiver whose STEF
// clients left spares would otherwise never give back a burst's heap).
func TestRequestBytesLeavesStreamState(t *testing.T) {
	for _, c := range []struct{ inFlight, waiting, state, want int64 }{
		{0, 0, 0, 0},
		{36 << 20, 0, 36 << 20, 0},       // spares and idle streams only
		{40 << 20, 0, 36 << 20, 4 << 20}, // a request beside them
		{0, 1 << 20, 0, 1 << 20},         // a request waiting
		{0, 0, 9 << 20, 0},               // budget off: state is not in inFlight
	} {
		if got := requestBytes(c.inFlight, c.waiting, c.state); got != c.want {
			t.Errorf("requestBytes(%d, %d, %d) = %d, want %d", c.inFlight, c.waiting, c.state, got, c.want)
		}
	}
}
