package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/internal/watchfile"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// Quota file (-tenant-quota-file): one line per tenant, then its limits as
// key=value fields; "*" names the quota of every tenant not listed. Blank
// lines and lines starting with # are ignored.
//
//	# tenant  limits
//	*         bytes_per_second=4MiB items_per_second=20000 max_budget_share=0.25
//	team-a    bytes_per_second=10MiB burst_bytes=40MiB items_per_second=50000 max_request_bytes=8MiB
//	team-b    bytes_per_second=0
//
// The keys:
//
//	bytes_per_second   refill rate of the byte bucket (request bytes as
//	                   stored: the protobuf after decompression and JSON
//	                   transcoding, so a tenant's quota does not depend on
//	                   how its clients compress or encode)
//	burst_bytes        the byte bucket's size; default one second of rate
//	items_per_second   refill rate of the item bucket (spans, data points,
//	                   log records, profile samples stored)
//	burst_items        the item bucket's size; default one second of rate
//	max_budget_share   the largest share (0 < s <= 1) of the admission
//	                   budget (-admission-request-limit) the tenant's
//	                   requests and streams' state may hold at once
//	                   (the state at most half of it: HoldStreamStateFor)
//	max_request_bytes  the largest request, compressed or decompressed
//	                   (as -grpc-max-recv-msg-size); a declared size over
//	                   it is refused before the body is read, and
//	                   decompression stops at it
//
// Quotas are charged once, for what is stored: just before the sink's
// Write, the bytes handed to it (without the items refused as invalid)
// and its items, samples for profiles. A charge is given back only when
// the sink promises nothing was stored (storage.ErrNotStored); a request
// whose client went away during the durable write may be stored, and
// stays charged.
//
// Sizes take the suffixes B, KB, MB, GB (powers of 1000) and KiB, MiB, GiB
// (powers of 1024); counts take k and M. 0 means unlimited. A tenant's line
// inherits every key it does not set from the "*" line; a tenant without
// a line gets the "*" line; without a "*" line, unlisted tenants are
// unlimited.
//
// A line's errors name the line; a file with an error is refused as a
// whole, and on reload the limits loaded before stay in force.

// Quota is one tenant's limits; a zero field is unlimited.
type Quota struct {
	BytesPerSecond  float64
	BurstBytes      float64
	ItemsPerSecond  float64
	BurstItems      float64
	MaxBudgetShare  float64
	MaxRequestBytes int64
}

// quotaKeys are the keys of a quota line, in the order of Quota's fields.
var quotaKeys = []string{"bytes_per_second", "burst_bytes", "items_per_second", "burst_items", "max_budget_share", "max_request_bytes"}

// QuotaTenantsDefault names the quota line of tenants not listed.
const QuotaTenantsDefault = "*"

// Quotas is a parsed quota file.
type Quotas struct {
	// Default applies to tenants not listed.
	Default Quota
	// Tenants holds the listed tenants' quotas (with the "*" line's keys
	// filled in); Order lists them in file order.
	Tenants map[string]Quota
	Order   []string
}

// ParseQuotas parses a quota file's contents.
func ParseQuotas(data []byte) (*Quotas, error) {
	type line struct {
		n   int
		q   Quota
		set [6]bool
	}
	var def *line
	lines := map[string]*line{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		name := fields[0]
		if name != QuotaTenantsDefault {
			if err := otlp.CheckTenantName(name); err != nil {
				return nil, fmt.Errorf("line %d: the tenant name %w", n, err)
			}
		}
		if prev, dup := lines[name]; dup || (name == QuotaTenantsDefault && def != nil) {
			if prev == nil {
				prev = def
			}
			return nil, fmt.Errorf("line %d: %s already has a quota on line %d", n, name, prev.n)
		}
		l := &line{n: n}
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				return nil, fmt.Errorf("line %d: %q is not key=value", n, f)
			}
			i := indexOf(quotaKeys, k)
			if i < 0 {
				return nil, fmt.Errorf("line %d: unknown key %q: want one of %s", n, k, strings.Join(quotaKeys, ", "))
			}
			if l.set[i] {
				return nil, fmt.Errorf("line %d: %s is set twice", n, k)
			}
			x, err := parseQuotaValue(k, v)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: %w", n, k, err)
			}
			l.set[i] = true
			switch i {
			case 0:
				l.q.BytesPerSecond = x
			case 1:
				l.q.BurstBytes = x
			case 2:
				l.q.ItemsPerSecond = x
			case 3:
				l.q.BurstItems = x
			case 4:
				if x <= 0 || x > 1 {
					return nil, fmt.Errorf("line %d: max_budget_share %s: want a share above 0 and at most 1 (0.25 is a quarter of the budget)", n, v)
				}
				l.q.MaxBudgetShare = x
			case 5:
				l.q.MaxRequestBytes = int64(x)
			}
		}
		if name == QuotaTenantsDefault {
			def = l
		} else {
			lines[name] = l
			order = append(order, name)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if def == nil && len(lines) == 0 {
		// Most likely a file caught half written: lifting every limit
		// by accident is worse than refusing it.
		return nil, fmt.Errorf("has no quota lines: to run without limits, write \"* bytes_per_second=0\" or leave -tenant-quota-file unset")
	}
	finish := func(l *line) (Quota, error) {
		q := l.q
		if def != nil && l != def {
			fields := []*float64{&q.BytesPerSecond, &q.BurstBytes, &q.ItemsPerSecond, &q.BurstItems, &q.MaxBudgetShare}
			dfields := []float64{def.q.BytesPerSecond, def.q.BurstBytes, def.q.ItemsPerSecond, def.q.BurstItems, def.q.MaxBudgetShare}
			for i, p := range fields {
				if !l.set[i] && def.set[i] {
					*p = dfields[i]
				}
			}
			if !l.set[5] && def.set[5] {
				q.MaxRequestBytes = def.q.MaxRequestBytes
			}
		}
		if q.BurstBytes > 0 && q.BytesPerSecond == 0 {
			return q, fmt.Errorf("line %d: burst_bytes without bytes_per_second: a bucket that never refills would refuse the tenant for ever", l.n)
		}
		if q.BurstItems > 0 && q.ItemsPerSecond == 0 {
			return q, fmt.Errorf("line %d: burst_items without items_per_second: a bucket that never refills would refuse the tenant for ever", l.n)
		}
		if q.BurstBytes == 0 {
			q.BurstBytes = q.BytesPerSecond
		}
		if q.BurstItems == 0 {
			q.BurstItems = q.ItemsPerSecond
		}
		return q, nil
	}
	out := &Quotas{Tenants: make(map[string]Quota, len(lines)), Order: order}
	if def != nil {
		q, err := finish(def)
		if err != nil {
			return nil, err
		}
		out.Default = q
	}
	for _, name := range order {
		q, err := finish(lines[name])
		if err != nil {
			return nil, err
		}
		out.Tenants[name] = q
	}
	return out, nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// parseQuotaValue parses a size (keys ending in bytes or bytes_per_second)
// or a count or share.
func parseQuotaValue(key, v string) (float64, error) {
	if v == "unlimited" {
		return 0, nil
	}
	mult := 1.0
	num := v
	isSize := strings.Contains(key, "bytes")
	if isSize {
		for _, s := range []struct {
			suffix string
			m      float64
		}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}} {
			if strings.HasSuffix(v, s.suffix) {
				num, mult = strings.TrimSuffix(v, s.suffix), s.m
				break
			}
		}
	} else if key != "max_budget_share" {
		if strings.HasSuffix(v, "k") {
			num, mult = strings.TrimSuffix(v, "k"), 1e3
		} else if strings.HasSuffix(v, "M") {
			num, mult = strings.TrimSuffix(v, "M"), 1e6
		}
	}
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		if isSize {
			return 0, fmt.Errorf("%q is not a size: want a number with an optional B, KB, MB, GB, KiB, MiB or GiB", v)
		}
		return 0, fmt.Errorf("%q is not a number", v)
	}
	x *= mult
	if x < 0 {
		return 0, fmt.Errorf("%q is negative", v)
	}
	if x > 1<<50 {
		return 0, fmt.Errorf("%q is too large", v)
	}
	return x, nil
}

// QuotaFile holds the quotas of a file and reloads them, as TokenFile
// does its tokens.
type QuotaFile struct {
	path string
	mu   sync.RWMutex
	q    *Quotas
	mod  time.Time
	size int64
	// loadedAt is when the quotas in force were loaded.
	loadedAt time.Time
	// gen counts successful loads: a tenant's state re-reads its quota
	// when it changes.
	gen atomic.Uint64
}

// NewQuotaFile reads the quotas in path.
func NewQuotaFile(path string) (*QuotaFile, error) {
	qf := &QuotaFile{path: path}
	if err := qf.Reload(); err != nil {
		return nil, err
	}
	return qf, nil
}

// Reload re-reads the file. On error the quotas in force stay.
func (qf *QuotaFile) Reload() error {
	fi, err := os.Stat(qf.path)
	if err != nil {
		return fmt.Errorf("cannot read quota file: %w", err)
	}
	data, err := os.ReadFile(qf.path)
	if err != nil {
		return fmt.Errorf("cannot read quota file: %w", err)
	}
	q, err := ParseQuotas(data)
	if err != nil {
		return fmt.Errorf("quota file %s: %w", qf.path, err)
	}
	qf.mu.Lock()
	qf.q, qf.mod, qf.size, qf.loadedAt = q, fi.ModTime(), fi.Size(), time.Now()
	qf.mu.Unlock()
	qf.gen.Add(1)
	return nil
}

// Quotas returns the quotas in force and when they were loaded.
func (qf *QuotaFile) Quotas() (*Quotas, time.Time) {
	qf.mu.RLock()
	defer qf.mu.RUnlock()
	return qf.q, qf.loadedAt
}

// listed reports whether tenant has a line of its own.
func (qf *QuotaFile) listed(tenant string) bool {
	if qf == nil {
		return false
	}
	qf.mu.RLock()
	defer qf.mu.RUnlock()
	_, ok := qf.q.Tenants[tenant]
	return ok
}

// lookup returns the quota of tenant.
func (qf *QuotaFile) lookup(tenant string) Quota {
	qf.mu.RLock()
	defer qf.mu.RUnlock()
	if q, ok := qf.q.Tenants[tenant]; ok {
		return q
	}
	return qf.q.Default
}

func (qf *QuotaFile) changed() bool {
	qf.mu.RLock()
	mod, size := qf.mod, qf.size
	qf.mu.RUnlock()
	return watchfile.Changed(qf.path, mod, size)
}

// Watch polls the file every interval until stop is closed and reloads it
// when it changes, calling report after each reload with the number of
// tenants listed and the error (nil on success; on error the quotas
// loaded before stay in force). A failure that persists is reported once.
func (qf *QuotaFile) Watch(interval time.Duration, stop <-chan struct{}, report func(tenants int, err error)) {
	watchfile.Watch(interval, stop, qf.changed, qf.Reload, func(err error) {
		if report != nil {
			q, _ := qf.Quotas()
			report(len(q.Tenants), err)
		}
	})
}

// tenantState is one tenant's live state: its token buckets and its share
// of the admission budget.
type tenantState struct {
	name string
	// m is the tenant's counters: its own label's, or otherTenants's
	// until a label is its own (see MaxTenantLabels).
	m atomic.Pointer[tenantCounters]
	// known is set for a tenant the operator named (see
	// MaxTenantStates): it does not count against MaxTenantStates. Set
	// under the registry's mu, once, never cleared.
	known atomic.Bool

	mu  sync.Mutex
	gen uint64 // the QuotaFile generation q came from
	q   Quota
	// bytes and items are the buckets' levels at last.
	bytes, items float64
	last         time.Time

	// held is the admission budget the tenant's requests and streams'
	// state hold (the one account max_budget_share bounds).
	held atomic.Int64
	// state is what of held is stream state (HoldStreamStateFor): at
	// most half the tenant's share, as the budget's state is at most
	// half the budget, so that its requests keep the other half.
	state atomic.Int64
	// lastUsed is when a request last named the tenant (Unix ns).
	lastUsed atomic.Int64
}

// refresh brings the quota up to date with the file and refills the
// buckets to now. Called with mu held.
func (ts *tenantState) refresh(qf *QuotaFile, now time.Time) {
	if qf != nil {
		if g := qf.gen.Load(); g != ts.gen {
			q := qf.lookup(ts.name)
			// A bucket that was unlimited starts full; one that shrank
			// keeps what fits.
			if ts.q.BytesPerSecond == 0 || ts.gen == 0 {
				ts.bytes = q.BurstBytes
			}
			if ts.q.ItemsPerSecond == 0 || ts.gen == 0 {
				ts.items = q.BurstItems
			}
			ts.q, ts.gen = q, g
			ts.bytes, ts.items = min(ts.bytes, q.BurstBytes), min(ts.items, q.BurstItems)
		}
	}
	if el := now.Sub(ts.last).Seconds(); el > 0 {
		ts.bytes = min(ts.q.BurstBytes, ts.bytes+el*ts.q.BytesPerSecond)
		ts.items = min(ts.q.BurstItems, ts.items+el*ts.q.ItemsPerSecond)
		ts.last = now
	}
}

// wait is how long until a bucket at level, refilled at rate, holds need.
func wait(level, need, rate float64) time.Duration {
	if level >= need || rate <= 0 {
		return 0
	}
	return time.Duration(math.Ceil((need - level) / rate * 1e9))
}

// quotaRefusal is why a request does not fit its tenant's quota.
func (ts *tenantState) throttle(delay time.Duration, what string) *grpcwire.Status {
	// Whole milliseconds, rounded up, so that the client coming back
	// after exactly the delay finds the bucket holding the request.
	delay = (delay + time.Millisecond - 1).Truncate(time.Millisecond)
	// OTLP v1.11 "OTLP/gRPC Throttling": the server signals backpressure
	// with UNAVAILABLE and RetryInfo; the HTTP path answers 429 with
	// Retry-After ("OTLP/HTTP Throttling").
	st := grpcwire.Errorf(grpcwire.Unavailable, throttlePrefix+"%s is over its %s quota: retry in %v, when its bucket will hold this request", ts.display(), what, delay)
	st.RetryDelay = delay
	return st
}

// throttlePrefix begins the message of every quota throttle, the bucket's
// (throttle) and the budget share's (admission.go).
const throttlePrefix = "tenant "

// tenantThrottled reports whether st throttles a tenant over its quota.
// That is flow control, not a fault: the client is told when to retry,
// and otlplite_tenant_requests_total{result="throttled"} counts it. Its
// refusal line is DEBUG (refusalLevel), as a client's own deadline is: at
// WARN, one tenant kept over its quota with a few tiny requests a second
// would fill the rate-limited refusal log and hide every other refusal.
func tenantThrottled(st *grpcwire.Status) bool {
	return st.Code == grpcwire.Unavailable && strings.HasPrefix(st.Message, throttlePrefix)
}

func (ts *tenantState) never(format string, args ...any) *grpcwire.Status {
	// RESOURCE_EXHAUSTED without RetryInfo: OTLP clients do not retry
	// it, and the HTTP path answers 413.
	return grpcwire.Errorf(grpcwire.ResourceExhausted, "tenant %s: "+format, append([]any{ts.display()}, args...)...)
}

// display is the tenant's name in messages.
func (ts *tenantState) display() string {
	if ts.name == otherTenants {
		return fmt.Sprintf("(one of the tenants beyond the %d the receiver tracks at once, which share one quota)", MaxTenantStates)
	}
	return ts.name
}

// beforeDecode checks a request of size bytes (decompressed, as stored)
// against the quota before it is decoded: a request that can
// never fit is refused, and one the byte bucket cannot hold yet is
// throttled without spending the decoding on it. It takes nothing.
func (ts *tenantState) beforeDecode(qf *QuotaFile, now time.Time, size int) (st *grpcwire.Status, throttled bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.refresh(qf, now)
	q := &ts.q
	if q.MaxRequestBytes > 0 && int64(size) > q.MaxRequestBytes {
		return ts.never("request of %d bytes (decompressed) is larger than the tenant's max_request_bytes of %d; split the batch", size, q.MaxRequestBytes), false
	}
	if q.BytesPerSecond > 0 {
		if float64(size) > q.BurstBytes {
			return ts.never("request of %d bytes is larger than the tenant's burst_bytes of %.0f, so its quota can never admit it; split the batch", size, q.BurstBytes), false
		}
		if d := wait(ts.bytes, float64(size), q.BytesPerSecond); d > 0 {
			return ts.throttle(d, "bytes per second"), true
		}
	}
	return nil, false
}

// take charges a decoded request of size bytes and items items to the
// buckets, both or neither: when either cannot hold it yet, the request is
// throttled with the delay after which both will.
func (ts *tenantState) take(qf *QuotaFile, now time.Time, size, items int) (st *grpcwire.Status, throttled bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.refresh(qf, now)
	q := &ts.q
	if q.ItemsPerSecond > 0 && float64(items) > q.BurstItems {
		return ts.never("request of %d items is larger than the tenant's burst_items of %.0f, so its quota can never admit it; split the batch", items, q.BurstItems), false
	}
	var db, di time.Duration
	if q.BytesPerSecond > 0 {
		db = wait(ts.bytes, float64(size), q.BytesPerSecond)
	}
	if q.ItemsPerSecond > 0 {
		di = wait(ts.items, float64(items), q.ItemsPerSecond)
	}
	if db > 0 || di > 0 {
		what := "bytes per second"
		if di > db {
			what = "items per second"
		}
		return ts.throttle(max(db, di), what), true
	}
	if q.BytesPerSecond > 0 {
		ts.bytes -= float64(size)
	}
	if q.ItemsPerSecond > 0 {
		ts.items -= float64(items)
	}
	return nil, false
}

// refund gives back what take charged for a request of which storage
// then stored nothing (storage.ErrNotStored): the client will send it
// again. A request that may have been stored is never refunded.
func (ts *tenantState) refund(size, items int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.q.BytesPerSecond > 0 {
		ts.bytes = min(ts.q.BurstBytes, ts.bytes+float64(size))
	}
	if ts.q.ItemsPerSecond > 0 {
		ts.items = min(ts.q.BurstItems, ts.items+float64(items))
	}
}

// levels returns the buckets' levels now (+Inf when unlimited).
func (ts *tenantState) levels(qf *QuotaFile, now time.Time) (bytes, items float64) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.refresh(qf, now)
	bytes, items = math.Inf(1), math.Inf(1)
	if ts.q.BytesPerSecond > 0 {
		bytes = ts.bytes
	}
	if ts.q.ItemsPerSecond > 0 {
		items = ts.items
	}
	return bytes, items
}

// full reports whether forgetting the state loses nothing: no budget held,
// both buckets full (a new state starts full), and unused for
// forgetIdle (an export stream holds its state between requests).
func (ts *tenantState) full(qf *QuotaFile, now time.Time) bool {
	if ts.held.Load() != 0 || now.UnixNano()-ts.lastUsed.Load() < int64(forgetIdle) {
		return false
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.refresh(qf, now)
	return ts.bytes >= ts.q.BurstBytes && ts.items >= ts.q.BurstItems
}

// limits returns, for a request starting now, the budget the tenant may
// hold of a budget of limit bytes (share) and its largest request
// (maxRequest); 0 means no limit of its own. It marks the tenant used.
func (ts *tenantState) limits(qf *QuotaFile, now time.Time, limit int64) (share, maxRequest int64) {
	ts.lastUsed.Store(now.UnixNano())
	if qf == nil {
		return 0, 0
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.refresh(qf, now)
	if s := ts.q.MaxBudgetShare; s > 0 && s < 1 {
		share = max(1, int64(s*float64(limit)))
	}
	return share, ts.q.MaxRequestBytes
}

// maxRequest returns the tenant's max_request_bytes (0: none), its quota
// brought up to date with the file; it reads no clock and refills nothing.
func (ts *tenantState) maxRequest(qf *QuotaFile) int64 {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.refresh(qf, ts.last) // no time passes: only the quota is updated
	return ts.q.MaxRequestBytes
}

// Registry bounds. MaxTenantStates bounds the states of unknown tenants,
// those neither listed in the quota file nor named by a token (its
// tenant=) nor the default tenant (-tenant-default): they come from a client's free choice (a header) or from more
// certificates than anyone counted, so they need a bound, about 200 bytes
// each plus the name. A known tenant always gets a state of its own,
// however many unknown names were sent (their number is the operator's:
// the lines of the quota and token files). When the bound
// is reached, states that hold nothing and whose buckets are full are
// forgotten (a new one would be the same); if none is, new unknown tenants
// share one overflow state under the "*" quota, which is their own quota
// anyway: stricter for them, never looser, and never another's.
const MaxTenantStates = 10000

// forgetIdle is how long a tenant's state must be unused before it can be
// forgotten.
const forgetIdle = time.Minute

// tenantRegistry holds the states of the tenants seen.
type tenantRegistry struct {
	quotas *QuotaFile
	m      *tenantMetrics
	now    func() time.Time

	mu       sync.RWMutex
	states   map[string]*tenantState
	unknown  int // states whose tenant is not known
	overflow *tenantState
	// lastSweep bounds the sweeps to one a second: a flood of new names
	// at the bound must not turn every request into a walk of the map.
	lastSweep time.Time
}

func newTenantRegistry(qf *QuotaFile, m *tenantMetrics) *tenantRegistry {
	r := &tenantRegistry{quotas: qf, m: m, now: time.Now, states: map[string]*tenantState{}}
	r.overflow = &tenantState{name: otherTenants}
	r.overflow.m.Store(m.counters(otherTenants, false))
	if qf != nil {
		// Listed tenants get their metric labels first.
		q, _ := qf.Quotas()
		for _, name := range q.Order {
			r.m.counters(name, true)
		}
	}
	m.registry = r
	return r
}

// get returns the state of tenant name, creating it on first use; bound
// says a token named the tenant (see MaxTenantStates).
func (r *tenantRegistry) get(name string, bound bool) *tenantState {
	now := r.now()
	r.mu.RLock()
	ts := r.states[name]
	known := ts != nil && (ts.known.Load() || !bound)
	r.mu.RUnlock()
	if ts == nil || !known {
		r.mu.Lock()
		ts = r.create(name, bound || r.quotas.listed(name), now)
		r.mu.Unlock()
	}
	ts.lastUsed.Store(now.UnixNano())
	return ts
}

// create returns the state of name, creating it if it has none, or the
// overflow state when name is unknown and the unknown are at their bound.
// Called with mu held.
func (r *tenantRegistry) create(name string, known bool, now time.Time) *tenantState {
	if ts := r.states[name]; ts != nil {
		if known && !ts.known.Load() {
			// An unknown tenant's state becomes a known one's (a
			// token naming it was added, the quota file lists it).
			ts.known.Store(true)
			r.unknown--
			ts.m.Store(r.m.counters(name, true))
		}
		return ts
	}
	if !known {
		if r.unknown >= MaxTenantStates && now.Sub(r.lastSweep) >= time.Second {
			r.lastSweep = now
			for n, s := range r.states {
				if s.full(r.quotas, now) {
					delete(r.states, n)
					if !s.known.Load() {
						r.unknown--
					}
				}
			}
		}
		if r.unknown >= MaxTenantStates {
			return r.overflow
		}
		r.unknown++
	}
	ts := &tenantState{name: name, last: now}
	ts.known.Store(known)
	ts.m.Store(r.m.counters(name, known))
	r.states[name] = ts
	return ts
}

// lookup returns the state of name if it has one.
func (r *tenantRegistry) lookup(name string) *tenantState {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.states[name]
}
