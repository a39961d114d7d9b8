package handler

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// Admission defaults: 128 MiB of requests in flight and 32 MiB waiting keep
// the receiver's memory predictable (the budget plus a fixed margin for
// buffers and the runtime) while letting a few 64 MiB requests through.
const (
	DefaultAdmissionRequestLimit = 128 << 20
	DefaultAdmissionWaitingLimit = 32 << 20
	DefaultAdmissionMaxWait      = 5 * time.Second
)

// AdmissionConfig bounds the bytes of requests the receiver holds, across
// every protocol (gRPC unary, streams, OTLP/HTTP).
type AdmissionConfig struct {
	// RequestLimit is the budget of request bytes in flight (wire bytes
	// plus decompressed bytes) from reading until the response.
	RequestLimit int64
	// WaitingLimit is how many bytes of requests may wait for room; beyond
	// it requests are refused at once as retryable.
	WaitingLimit int64
	// MaxWait bounds a request's wait for room, within its own deadline.
	MaxWait time.Duration
}

// admission is a byte budget with a LIFO wait queue: when room frees up the
// newest waiters go first, because under overload they are the ones whose
// clients are still waiting, while the oldest are about to time out.
type admission struct {
	limit, waitLimit int64
	maxWait          time.Duration
	retryDelay       time.Duration

	mu       sync.Mutex
	inFlight int64
	waiting  int64
	waiters  []*admissionWaiter // stack: newest last
	stats    admissionStats
}

type admissionWaiter struct {
	n     int64
	ready chan struct{} // closed when admitted
	done  bool          // admitted or abandoned (under mu)
}

// admissionStats are the counters the admin metrics expose.
type admissionStats struct {
	Admitted, Waited, RefusedBusy, RefusedTooLarge, RefusedGrow int64
}

func newAdmission(cfg AdmissionConfig, retryDelay time.Duration) *admission {
	if cfg.RequestLimit <= 0 {
		cfg.RequestLimit = DefaultAdmissionRequestLimit
	}
	if cfg.WaitingLimit < 0 {
		cfg.WaitingLimit = 0
	} else if cfg.WaitingLimit == 0 {
		cfg.WaitingLimit = DefaultAdmissionWaitingLimit
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultAdmissionMaxWait
	}
	return &admission{limit: cfg.RequestLimit, waitLimit: cfg.WaitingLimit, maxWait: cfg.MaxWait, retryDelay: retryDelay}
}

// busyStatus is the retryable refusal: UNAVAILABLE with a jittered RetryInfo
// (±25%), so refused clients do not come back in lockstep.
func (a *admission) busyStatus(why string) *grpcwire.Status {
	st := grpcwire.Errorf(grpcwire.Unavailable, "server is overloaded (%s), retry later", why)
	st.RetryDelay = time.Duration(float64(a.retryDelay) * (0.75 + rand.Float64()/2))
	return st
}

func (a *admission) tooLargeStatus(n int64) *grpcwire.Status {
	// RESOURCE_EXHAUSTED without RetryInfo: OTLP clients do not retry it.
	return grpcwire.Errorf(grpcwire.ResourceExhausted,
		"request of %d bytes is larger than the server's whole admission budget of %d bytes; split the batch", n, a.limit)
}

// acquire takes n bytes of budget, waiting if needed.
func (a *admission) acquire(ctx context.Context, n int64) *grpcwire.Status {
	if n == 0 {
		return nil
	}
	if n > a.limit {
		a.mu.Lock()
		a.stats.RefusedTooLarge++
		a.mu.Unlock()
		return a.tooLargeStatus(n)
	}
	a.mu.Lock()
	if a.inFlight+n <= a.limit && len(a.waiters) == 0 {
		a.inFlight += n
		a.stats.Admitted++
		a.mu.Unlock()
		return nil
	}
	if a.waiting+n > a.waitLimit {
		a.stats.RefusedBusy++
		a.mu.Unlock()
		return a.busyStatus("admission queue full")
	}
	w := &admissionWaiter{n: n, ready: make(chan struct{})}
	a.waiters = append(a.waiters, w)
	a.waiting += n
	a.stats.Waited++
	a.mu.Unlock()

	timer := time.NewTimer(a.maxWait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return nil
	case <-timer.C:
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if w.done {
		// Admitted just as we gave up: keep it.
		return nil
	}
	w.done = true
	a.waiting -= n
	a.removeWaiter(w)
	a.stats.RefusedBusy++
	if ctx.Err() != nil {
		return grpcwire.Errorf(grpcwire.DeadlineExceeded, "deadline reached while waiting for admission")
	}
	return a.busyStatus("waited too long for admission")
}

// tryAcquire takes n bytes without waiting.
func (a *admission) tryAcquire(n int64) *grpcwire.Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inFlight+n > a.limit {
		a.stats.RefusedGrow++
		return a.busyStatus("decompressed request does not fit the memory budget")
	}
	a.inFlight += n
	return nil
}

// release returns n bytes and admits waiters, newest first, that now fit.
func (a *admission) release(n int64) {
	if n == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight -= n
	for i := len(a.waiters) - 1; i >= 0; i-- {
		w := a.waiters[i]
		if a.inFlight+w.n > a.limit {
			continue
		}
		a.inFlight += w.n
		a.waiting -= w.n
		a.stats.Admitted++
		w.done = true
		close(w.ready)
		a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
	}
}

func (a *admission) removeWaiter(w *admissionWaiter) {
	for i, x := range a.waiters {
		if x == w {
			a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
			return
		}
	}
}

// snapshot returns bytes in flight and waiting, and the counters.
func (a *admission) snapshot() (inFlight, waiting int64, st admissionStats) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inFlight, a.waiting, a.stats
}

// ticket is one request's charge against the budget; it implements
// grpcwire.Budget. Release returns everything it took.
type ticket struct {
	a    *admission
	held int64
}

// Reserve implements grpcwire.Budget.
func (t *ticket) Reserve(ctx context.Context, n int) error {
	if st := t.a.acquire(ctx, int64(n)); st != nil {
		return st
	}
	t.held += int64(n)
	return nil
}

// Grow implements grpcwire.Budget. A request whose own charge would pass
// the whole budget can never be admitted, however idle the server: it is
// refused as too large (not retryable), not as busy.
func (t *ticket) Grow(n int) error {
	if total := t.held + int64(n); total > t.a.limit {
		t.a.mu.Lock()
		t.a.stats.RefusedTooLarge++
		t.a.mu.Unlock()
		return t.a.tooLargeStatus(total)
	}
	if st := t.a.tryAcquire(int64(n)); st != nil {
		return st
	}
	t.held += int64(n)
	return nil
}

func (t *ticket) release() {
	t.a.release(t.held)
	t.held = 0
}
