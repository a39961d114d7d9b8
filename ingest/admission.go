package ingest

import (
	"context"
	"math/rand/v2"
	"sync"

	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/internal/connstate"
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
	// plus decompressed bytes), charged as they arrive and released once
	// the request is stored (before its response is written, so a client
	// that does not read responses holds none of it).
	RequestLimit int64
	// WaitingLimit is how many bytes that arrived may wait for room;
	// beyond it requests are refused at once as retryable.
	WaitingLimit int64
	// MaxWait bounds a request's wait for room, within its own deadline.
	MaxWait time.Duration
	// StreamWindow is the HTTP/2 receive window per stream of the server
	// in front (server.Limits.StreamWindow): what a stream that is not
	// read may hold in flow-control buffers. An export stream that stops
	// reading while it waits (for a free request slot, or processing a
	// request itself when the stream bound is full) is charged it in the
	// waiting budget (WaitingLimit) for the wait, and reset when that does
	// not fit, so such streams hold at most WaitingLimit unread. Zero
	// means DefaultStreamWindow.
	StreamWindow int64
	// MaxStreams bounds the requests and streams served at once (each one
	// is a goroutine, net/http's stream state and its buffers, about
	// StreamUnitCost), across every connection, plus the requests of
	// export streams being processed (each its own goroutine). Zero
	// derives it from the budget: RequestLimit / StreamUnitCost, at least
	// DefaultMaxStreams.
	MaxStreams int
	// Off turns the byte budget off, for an engine that admits with its
	// own (an ItemSink whose BeginItems or Commit refuses with
	// storage.ErrOverloaded when its memory is full): requests are then
	// never made to wait for room nor refused as busy or larger than
	// the budget: RequestLimit and MaxWait bound no request's bytes
	// (otlplite_admission_bytes_in_flight stays 0).
	//
	// What stays bounded without it: one message, by MaxRecvMsgSize
	// (before and after decompression, and as protobuf for OTLP/JSON);
	// the requests and streams served at once, by MaxStreams (derived
	// from RequestLimit as ever when zero), each holding at most one
	// message (export streams: at most their in-flight requests); the
	// stream windows left unread while a stream waits, by WaitingLimit
	// (the engine cannot see those); a tenant, by its quotas,
	// max_request_bytes and max_budget_share (a share of RequestLimit).
	// Memory is then at most about MaxStreams messages of
	// MaxRecvMsgSize, far more than the budget's: the engine's
	// admission must hold it.
	Off bool
	// Reserve is a budget of its own, beside RequestLimit, for the
	// receiver's own telemetry (WithSelf), so that a pipeline whose whole
	// budget user tenants hold cannot starve it: its requests are charged
	// to the reserve alone, never wait (refused as busy when it is full)
	// and user requests can never take it. Zero: none (WithSelf requests
	// are charged as any other).
	Reserve int64
}

// DefaultMaxStreams is the least MaxStreams derives to: 4096, what the
// default budget of 128 MiB gives. A smaller budget keeps it, because a
// budget is lowered to refuse large requests sooner, and 4096 streams —
// 64 export streams each with its 16 requests in flight, with room to
// spare — are what a receiver serving a fleet needs whatever its budget.
const DefaultMaxStreams = 4096

// DefaultStreamWindow is what a stream that is not read is taken to hold
// when AdmissionConfig.StreamWindow is zero: net/http's default HTTP/2
// receive window per stream.
const DefaultStreamWindow = 1 << 20

// StreamUnitCost is what one request or stream in progress costs besides
// its body, measured with the flood tests (cmd/otlp-lite/flood_test.go):
// its goroutine's stack (8-16 KiB while it waits), net/http's stream,
// request and response-writer state (about 6 KiB), our call state and
// pooled buffers' headers; 32 KiB rounds it up. The default of MaxStreams
// is the admission budget divided by it (4096 for 128 MiB), so all of them
// together cost at most as much again as the budget (and at least
// DefaultMaxStreams).
const StreamUnitCost = 32 << 10

// admission is a byte budget with a LIFO wait queue: when room frees up the
// newest waiters go first, because under overload they are the ones whose
// clients are still waiting, while the oldest are about to time out.
//
// Requests are charged as their bytes arrive (grpcwire.Budget), so a
// request may wait more than once. Waiters that already hold part of the
// budget (a request part way through its body) go before new requests:
// finishing what has begun frees its whole charge soonest, and new
// requests cannot starve a request half read.
type admission struct {
	limit, waitLimit int64
	maxWait          time.Duration
	retryDelay       time.Duration
	// window is AdmissionConfig.StreamWindow.
	window int64
	// off is AdmissionConfig.Off: nothing is acquired, waited for or
	// refused for the budget (tooLarge, acquire, tryAcquire, release).
	off bool

	mu       sync.Mutex
	inFlight int64
	waiting  int64
	waiters  []*admissionWaiter // stack: newest last
	// continuingWaiters counts the waiters with continuing set.
	continuingWaiters int
	stats             admissionStats
	// state is the stream state held (holdState), part of inFlight.
	state int64
	// reserve is AdmissionConfig.Reserve, reserveHeld what self requests
	// hold of it (under mu; apart from inFlight and limit).
	reserve, reserveHeld int64
	// reclaimers give back spare state (AddReclaimer; under mu, called
	// without it).
	reclaimers []*reclaimer
	// reclaiming counts the requests and streams that found no room and
	// call the reclaimers (without mu) before they wait or are refused:
	// no spare is kept meanwhile (holdSpare), or a stream ending then
	// would keep one in the room the reclaim freed, and the request wait
	// behind it (nothing reclaims while it waits) or be refused.
	reclaiming int
}

type admissionWaiter struct {
	n int64
	// unread is what the request leaves unread in flow control while it
	// waits, charged to the waiting budget with n.
	unread int64
	ready  chan struct{} // closed when admitted
	done   bool          // admitted or abandoned (under mu)
	// continuing: the request already holds budget (see admission).
	continuing bool
}

// admissionStats are the counters the admin metrics expose.
type admissionStats struct {
	Admitted, Waited, RefusedBusy, RefusedTooLarge, RefusedGrow int64
	// RefusedUnread counts export streams reset because the window they
	// would leave unread while waiting did not fit the waiting budget.
	RefusedUnread int64
	// Parked is the bytes of stream windows charged to the waiting budget
	// now (a gauge).
	Parked int64
	// Reclaims counts the times spare state was let go to make room
	// (AddReclaimer).
	Reclaims int64
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
	if cfg.StreamWindow <= 0 {
		cfg.StreamWindow = DefaultStreamWindow
	}
	return &admission{limit: cfg.RequestLimit, waitLimit: cfg.WaitingLimit, maxWait: cfg.MaxWait, retryDelay: retryDelay, window: cfg.StreamWindow, off: cfg.Off,
		reserve: max(cfg.Reserve, 0)}
}

// acquireReserve takes n bytes of the reserve for a self request, without
// waiting: the receiver's own telemetry is sent again at its next
// interval, so it never queues behind anything.
func (a *admission) acquireReserve(n int64) *grpcwire.Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reserveHeld+n > a.reserve {
		a.stats.RefusedBusy++
		return a.busyStatus("the self-telemetry reserve is full")
	}
	a.reserveHeld += n
	return nil
}

func (a *admission) releaseReserve(n int64) {
	a.mu.Lock()
	a.reserveHeld -= n
	a.mu.Unlock()
}

// tooLarge reports whether a request charged n bytes can never be
// admitted: it is larger than the whole budget (never, when it is off).
func (a *admission) tooLarge(n int64) bool { return !a.off && n > a.limit }

// BusyStatus is the admission's retryable refusal, for a transport that
// refuses for want of room (handler's stream bound, a stream's unread
// window): UNAVAILABLE with a jittered RetryInfo.
func (p *Pipeline) BusyStatus(why string) *grpcwire.Status { return p.adm.busyStatus(why) }

// AdmissionLimit returns the admission budget, in bytes
// (AdmissionConfig.RequestLimit or its default).
func (p *Pipeline) AdmissionLimit() int64 { return p.adm.limit }

// AdmissionMaxWait returns the longest a request waits for admission.
func (p *Pipeline) AdmissionMaxWait() time.Duration { return p.adm.maxWait }

// ParkWindow charges a stream window (AdmissionConfig.StreamWindow) that
// an export stream leaves unread while it waits to the waiting budget, or
// reports false, counted, when it does not fit: the caller must then not
// wait with its stream unread, but reset it. UnparkWindow returns the
// charge.
func (p *Pipeline) ParkWindow() bool { return p.adm.park() }

// UnparkWindow returns a ParkWindow charge.
func (p *Pipeline) UnparkWindow() { p.adm.unpark() }

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

// refuseTooLarge counts and returns the refusal of a request of n bytes.
func (a *admission) refuseTooLarge(n int64) *grpcwire.Status {
	a.mu.Lock()
	a.stats.RefusedTooLarge++
	a.mu.Unlock()
	return a.tooLargeStatus(n)
}

// acquire takes n bytes of budget, waiting if needed. continuing says the
// request already holds some of the budget, which puts it ahead of new
// requests.
func (a *admission) acquire(ctx context.Context, n int64, continuing bool) *grpcwire.Status {
	return a.acquireUnread(ctx, n, continuing, 0)
}

// acquireUnread is acquire for a request that leaves unread bytes of its
// stream in flow control while it waits: they are charged to the waiting
// budget with n for the wait (and counted as parked, as a ParkWindow
// charge is), and a wait whose n and unread do not fit there is refused
// at once as busy.
func (a *admission) acquireUnread(ctx context.Context, n int64, continuing bool, unread int64) *grpcwire.Status {
	if n == 0 || a.off {
		return nil
	}
	if n > a.limit {
		return a.refuseTooLarge(n)
	}
	a.mu.Lock()
	if a.admitNow(n, continuing) {
		a.mu.Unlock()
		return nil
	}
	if len(a.reclaimers) > 0 {
		// Spare state goes before anyone waits (AddReclaimer); mu is
		// held again from the check after it to the wait or refusal.
		a.reclaimLocked()
		if a.admitNow(n, continuing) {
			a.mu.Unlock()
			return nil
		}
	}
	if a.waiting+n+unread > a.waitLimit {
		a.stats.RefusedBusy++
		a.mu.Unlock()
		return a.busyStatus("admission queue full")
	}
	w := &admissionWaiter{n: n, unread: unread, ready: make(chan struct{}), continuing: continuing}
	a.waiters = append(a.waiters, w)
	if continuing {
		a.continuingWaiters++
	}
	a.waiting += n + unread
	a.stats.Parked += unread
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
	a.waiting -= n + unread
	a.stats.Parked -= unread
	a.removeWaiter(w)
	a.stats.RefusedBusy++
	if ctx.Err() != nil {
		return grpcwire.Errorf(grpcwire.DeadlineExceeded, "deadline reached while waiting for admission")
	}
	return a.busyStatus("waited too long for admission")
}

// admitNow takes n bytes if they fit and no waiter is ahead (with a.mu
// held), and reports whether it did.
func (a *admission) admitNow(n int64, continuing bool) bool {
	ahead := len(a.waiters)
	if continuing {
		ahead = a.continuingWaiters
	}
	if a.inFlight+n > a.limit || ahead != 0 {
		return false
	}
	a.inFlight += n
	if !continuing {
		a.stats.Admitted++
	}
	return true
}

// tryAcquire takes n bytes without waiting.
func (a *admission) tryAcquire(n int64) *grpcwire.Status {
	if a.off {
		return nil
	}
	a.mu.Lock()
	if a.inFlight+n > a.limit && len(a.reclaimers) > 0 {
		// Spare state goes before anyone is refused (AddReclaimer).
		a.reclaimLocked()
	}
	defer a.mu.Unlock()
	if a.inFlight+n > a.limit {
		a.stats.RefusedGrow++
		return a.busyStatus("decompressed request does not fit the memory budget")
	}
	a.inFlight += n
	return nil
}

// release returns n bytes and admits waiters that now fit: continuing ones
// first, then new ones, newest first within each.
func (a *admission) release(n int64) {
	if n == 0 || a.off {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight -= n
	if a.continuingWaiters > 0 {
		a.admitWaiters(true)
	}
	a.admitWaiters(false)
}

// admitWaiters admits, newest first, the waiters of the given kind that fit.
func (a *admission) admitWaiters(continuing bool) {
	for i := len(a.waiters) - 1; i >= 0; i-- {
		w := a.waiters[i]
		if w.continuing != continuing || a.inFlight+w.n > a.limit {
			continue
		}
		a.inFlight += w.n
		a.waiting -= w.n + w.unread
		a.stats.Parked -= w.unread
		if !continuing {
			a.stats.Admitted++
		}
		w.done = true
		close(w.ready)
		a.removeAt(i)
	}
}

func (a *admission) removeWaiter(w *admissionWaiter) {
	for i, x := range a.waiters {
		if x == w {
			a.removeAt(i)
			return
		}
	}
}

func (a *admission) removeAt(i int) {
	if a.waiters[i].continuing {
		a.continuingWaiters--
	}
	a.waiters = append(a.waiters[:i], a.waiters[i+1:]...)
}

// park charges a stream window that an export stream leaves unread while
// it waits to the waiting budget, or reports false, counted, when it does
// not fit: the caller must then not wait with its stream unread, but
// reset it. unpark returns the charge.
func (a *admission) park() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.waiting+a.window > a.waitLimit {
		a.stats.RefusedUnread++
		return false
	}
	a.waiting += a.window
	a.stats.Parked += a.window
	return true
}

func (a *admission) unpark() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.waiting -= a.window
	a.stats.Parked -= a.window
}

// snapshot returns bytes in flight and waiting, and the counters.
func (a *admission) snapshot() (inFlight, waiting int64, st admissionStats) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inFlight, a.waiting, a.stats
}

// charge is one request's charge against the budget (a Ticket's);
// release returns everything it took.
type charge struct {
	a    *admission
	held int64
	// ten is the request's tenant (nil when tenancy is off), whose
	// requests may hold at most tenantLimit bytes (0: no limit of its
	// own). Checked before the shared budget (quota.go).
	ten         *tenantState
	tenantLimit int64
	// tenantMaxRequest is the tenant's max_request_bytes (0: none).
	tenantMaxRequest int64
	// throttled is set when the tenant's share refused the request.
	throttled bool
	// conn is the request's connection (nil when the server in front is
	// not ours): Charge records on it that body bytes arrived.
	conn *connstate.Conn
	// reserved: a self request (WithSelf), charged to the reserve alone.
	reserved bool
}

// Declare is Ticket.Declare: a declared size larger than the whole
// budget can never be admitted and is refused at once, as too large (not
// retryable); anything else is charged only as it arrives.
func (t *charge) Declare(n int) error {
	if t.reserved {
		if int64(n) > t.a.reserve {
			return grpcwire.Errorf(grpcwire.ResourceExhausted, "self-telemetry request of %d bytes is larger than its reserve of %d bytes", n, t.a.reserve)
		}
		return nil
	}
	if t.a.tooLarge(int64(n)) {
		return t.a.refuseTooLarge(int64(n))
	}
	if t.tenantLimit > 0 && int64(n) > t.tenantLimit {
		return t.shareTooLarge(int64(n))
	}
	if t.tenantMaxRequest > 0 && int64(n) > t.tenantMaxRequest {
		// Refused before a byte of the body is read.
		return t.ten.never("request of %d bytes is larger than the tenant's max_request_bytes of %d; split the batch", n, t.tenantMaxRequest)
	}
	return nil
}

// Charge is Ticket.Charge. The bytes that arrived also mark the
// connection as sending (connstate: a connection whose streams send
// nothing can be shed).
func (t *charge) Charge(ctx context.Context, n int) error {
	t.conn.NoteData(time.Now().UnixNano())
	return t.chargeWaiting(ctx, n, t.held > 0, 0)
}

// Reserve is Ticket.Reserve: Charge as a continuing charge, its stream's
// window (AdmissionConfig.StreamWindow) charged to the waiting budget
// while it waits.
func (t *charge) Reserve(ctx context.Context, n int) error {
	return t.chargeWaiting(ctx, n, true, t.a.window)
}

// chargeWaiting is Charge and Reserve: n bytes within the ticket's size
// and its tenant's share, waiting for room (admission.acquireUnread) with
// unread bytes of its stream charged to the waiting budget meanwhile.
func (t *charge) chargeWaiting(ctx context.Context, n int, continuing bool, unread int64) error {
	if t.reserved {
		return t.chargeReserve(n)
	}
	if total := t.held + int64(n); t.a.tooLarge(total) {
		return t.a.refuseTooLarge(total)
	}
	if st := t.reserveShare(int64(n)); st != nil {
		return st
	}
	if st := t.a.acquireUnread(ctx, int64(n), continuing, unread); st != nil {
		t.unreserveShare(int64(n))
		return st
	}
	t.held += int64(n)
	return nil
}

// Grow is Ticket.Grow. A request whose own charge would pass
// the whole budget can never be admitted, however idle the server: it is
// refused as too large (not retryable), not as busy.
func (t *charge) Grow(n int) error {
	if t.reserved {
		return t.chargeReserve(n)
	}
	if total := t.held + int64(n); t.a.tooLarge(total) {
		return t.a.refuseTooLarge(total)
	}
	if st := t.reserveShare(int64(n)); st != nil {
		return st
	}
	if st := t.a.tryAcquire(int64(n)); st != nil {
		t.unreserveShare(int64(n))
		return st
	}
	t.held += int64(n)
	return nil
}

// chargeReserve is Charge and Grow of a self request.
func (t *charge) chargeReserve(n int) error {
	if st := t.a.acquireReserve(int64(n)); st != nil {
		return st
	}
	t.held += int64(n)
	return nil
}

func (t *charge) release() {
	if t.reserved {
		if t.held != 0 {
			t.a.releaseReserve(t.held)
		}
		t.held = 0
		return
	}
	t.unreserveShare(t.held)
	t.a.release(t.held)
	t.held = 0
}

// reserveShare charges n bytes to the tenant's share of the budget. A
// tenant at its share is refused as throttled (retryable) at once, without
// joining the wait queue: other tenants' requests keep being admitted in
// the room it leaves (fairness: a tenant that floods holds at most its
// share, however many requests it sends). A request that alone passes the
// share can never be admitted and is refused as too large.
func (t *charge) reserveShare(n int64) *grpcwire.Status {
	if t.ten == nil {
		return nil
	}
	if t.tenantLimit > 0 && t.held+n > t.tenantLimit {
		return t.shareTooLarge(t.held + n)
	}
	held := t.ten.held.Add(n)
	if t.tenantLimit > 0 && held > t.tenantLimit {
		t.ten.held.Add(-n)
		t.throttled = true
		// When room frees up depends on other requests finishing, not
		// on a refill: the storage retry delay, jittered ±25% so that
		// refused clients do not come back in lockstep.
		d := t.a.retryDelay
		if d <= 0 {
			d = DefaultRetryDelay
		}
		st := grpcwire.Errorf(grpcwire.Unavailable, "tenant %s holds its max_budget_share of the admission budget (%d bytes): retry later", t.ten.display(), t.tenantLimit)
		st.RetryDelay = time.Duration(float64(d) * (0.75 + rand.Float64()/2))
		return st
	}
	return nil
}

func (t *charge) unreserveShare(n int64) {
	if t.ten != nil && n != 0 {
		t.ten.held.Add(-n)
	}
}

func (t *charge) shareTooLarge(n int64) *grpcwire.Status {
	return grpcwire.Errorf(grpcwire.ResourceExhausted,
		"request of %d bytes is larger than tenant %s's max_budget_share of the admission budget (%d bytes), so it can never be admitted; split the batch", n, t.ten.display(), t.tenantLimit)
}

// AdmissionState returns the bytes of requests admitted and not yet
// answered, and the bytes waiting for admission (the gauges
// otlplite_admission_bytes_in_flight and _waiting).
func (p *Pipeline) AdmissionState() (inFlight, waiting int64) {
	in, w, _ := p.adm.snapshot()
	return in, w
}
