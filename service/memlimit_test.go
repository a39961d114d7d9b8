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
