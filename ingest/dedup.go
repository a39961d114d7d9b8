package ingest

import (
	"context"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// The window of idempotency keys (issue 24, docs/exactly-once.md): a
// request that carries a key (Request.IdempotencyKey) is stored once
// however often it is sent, as long as its key is in the window.
//
// The window is the pipeline's, one place for every transport. It holds
// each tenant's keys of the last DedupConfig.MaxAge, at most
// DedupConfig.Keys of them across tenants. A request whose key it holds:
//
//   - with the same body (fingerprint), answered: is not stored again and
//     gets the first request's answer (success, or the same partial
//     success: rejected count and message), counted in
//     otlplite_dedup_hits_total;
//   - with another body: refused, INVALID_ARGUMENT (HTTP 422, the IETF
//     httpapi Idempotency-Key draft's "reused with a different payload"),
//     not retryable, counted in otlplite_dedup_mismatches_total;
//   - still being processed (its first request has no answer yet):
//     refused, ABORTED with RetryInfo (HTTP 409 with Retry-After, the
//     draft's "a request with that key is in flight"), retryable for gRPC
//     and stream clients, counted in otlplite_dedup_conflicts_total.
//
// A request that fails is forgotten (a retry is processed afresh). With a
// storage.KeyedSink (the disk log) the key is stored in the record,
// atomically with it, and the window is rebuilt from the log at start
// (RebuildDedup); with any other sink it is in memory only.

// Window defaults: 100,000 keys hold 100 s of 1,000 keyed requests a
// second (a resend after a lost answer or a crash comes within seconds),
// at about 40 MiB with 36-byte keys (dedupEntryCost); ten minutes bound how
// long a key is remembered when requests are few.
const (
	DefaultDedupKeys   = 100_000
	DefaultDedupMaxAge = 10 * time.Minute
)

// dedupEntryCost is what one key costs the window besides its key's and
// message's bytes: the entry (120 bytes, allocated in 128), its slot in
// the tenant's map (key, pointer and control byte at the map's load
// factor; more after a churn of deletes, which leaves the table at its
// largest), and the allocator's rounding of the key and message. Measured
// by TestDedupEntryCost (about 230 bytes besides a 36-byte key) and
// TestDedupFloodHeap (about 310 besides 256-byte keys and messages, after a
// flood five times the bound); rounded up. otlplite_dedup_window_bytes
// charges every key this plus its key's and message's lengths.
const dedupEntryCost = 384

// DedupConfig bounds the window of idempotency keys.
type DedupConfig struct {
	// Keys bounds the keys held at once, across tenants; each tenant may
	// hold at least its share (Keys over the tenants with keys in the
	// window): a tenant above its share loses its own oldest keys first.
	// The tenants beyond MaxTenantStates share one partition, as they
	// share one quota state.
	// Zero means DefaultDedupKeys; negative turns the window off (keys
	// are ignored, requests are stored at least once).
	Keys int
	// MaxAge is how long a key is remembered; a request resent later is
	// stored again. Zero means DefaultDedupMaxAge.
	MaxAge time.Duration
}

// MaxDedupBytes is the most the window holds with cfg: every key at its
// longest (otlp.MaxIdempotencyKeyLen), with the longest message.
func MaxDedupBytes(cfg DedupConfig) int64 {
	if cfg.Keys < 0 {
		return 0
	}
	if cfg.Keys == 0 {
		cfg.Keys = DefaultDedupKeys
	}
	return int64(cfg.Keys) * (dedupEntryCost + otlp.MaxIdempotencyKeyLen + storage.MaxStoredKeyMessage)
}

// fingerprint is a request body's, as the window compares it: its CRC-32
// (IEEE, which Go computes with carry-less multiplication at over 30 GB/s)
// in the low half and its length in the high half. It is stable across
// restarts and builds (it is stored in the log with the key). It is no
// cryptographic hash: it tells a client's second body under one key from
// its first with odds of 2^-32 for a collision of equal lengths, and a
// collision only answers a client's own request as its own first one.
// It is computed on the decompressed protobuf, so a resend compressed
// otherwise, or as OTLP/JSON, is the same request.
func fingerprint(body []byte) uint64 {
	return uint64(uint32(len(body)))<<32 | uint64(crc32.ChecksumIEEE(body))
}

// dedupKey names a key in the window: a key is scoped to its tenant (the
// name as sent: the tenants beyond MaxTenantStates share one partition)
// and its signal (an OTLP/HTTP key names a request to one resource,
// /v1/traces or /v1/logs; a client numbering each signal's requests apart
// may reuse numbers across signals).
type dedupKey struct {
	sig    otlp.Signal
	tenant string
	key    string
}

type dedupState uint8

const (
	dedupInFlight dedupState = iota
	dedupDone
)

// dedupEntry is one key in the window, in its tenant's list, oldest first.
type dedupEntry struct {
	k          dedupKey
	fp         uint64
	at         int64 // Unix nanoseconds, when it was first received
	state      dedupState
	items, rej int
	msg        string
	t          *dedupTenant // nil once evicted
	prev, next *dedupEntry
}

func (e *dedupEntry) cost() int64 {
	return dedupEntryCost + int64(len(e.k.key)) + int64(len(e.msg))
}

// dedupTenant is one tenant's keys.
type dedupTenant struct {
	name       string
	keys       map[dedupKey]*dedupEntry
	head, tail *dedupEntry
}

// dedupWindow is the pipeline's window of keys.
type dedupWindow struct {
	maxKeys int
	maxAge  time.Duration
	now     func() time.Time

	mu      sync.Mutex
	tenants map[string]*dedupTenant
	keys    int
	bytes   int64
	// big is the partition insert evicts from while it is above its
	// share; scans counts the walks of every partition that find it.
	big   *dedupTenant
	scans int

	hits, mismatches, conflicts, evicted, expired *metrics.Counter
}

func newDedupWindow(cfg DedupConfig, set *metrics.Set) *dedupWindow {
	if cfg.Keys < 0 {
		return nil
	}
	if cfg.Keys == 0 {
		cfg.Keys = DefaultDedupKeys
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultDedupMaxAge
	}
	w := &dedupWindow{
		maxKeys:    cfg.Keys,
		maxAge:     cfg.MaxAge,
		now:        time.Now,
		tenants:    map[string]*dedupTenant{},
		hits:       set.GetOrCreateCounter("otlplite_dedup_hits_total"),
		mismatches: set.GetOrCreateCounter("otlplite_dedup_mismatches_total"),
		conflicts:  set.GetOrCreateCounter("otlplite_dedup_conflicts_total"),
		evicted:    set.GetOrCreateCounter(`otlplite_dedup_evicted_total{reason="full"}`),
		expired:    set.GetOrCreateCounter(`otlplite_dedup_evicted_total{reason="age"}`),
	}
	set.GetOrCreateGauge("otlplite_dedup_window_keys", func() float64 {
		k, _ := w.size()
		return float64(k)
	})
	set.GetOrCreateGauge("otlplite_dedup_window_bytes", func() float64 {
		_, b := w.size()
		return float64(b)
	})
	set.GetOrCreateGauge("otlplite_dedup_window_keys_limit", func() float64 { return float64(w.maxKeys) })
	return w
}

// DedupBytes returns what the window of idempotency keys holds now (0
// when it is off): what the memory limit adds for it (service).
func (p *Pipeline) DedupBytes() int64 {
	if p.dedup == nil {
		return 0
	}
	_, b := p.dedup.size()
	return b
}

// DedupKeys calls fn with every key the window holds that begins with
// prefix and whose request was stored (not in flight), in no order, under
// the window's lock: fn must be quick and must not call the pipeline. A
// source that names its records by position (the Kafka source) asks it
// where its stored records end, so it resumes after them rather than from
// what it last committed elsewhere.
func (p *Pipeline) DedupKeys(prefix string, fn func(key string)) {
	if p.dedup == nil {
		return
	}
	w := p.dedup
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.tenants {
		for e := t.head; e != nil; e = e.next {
			if e.state == dedupDone && strings.HasPrefix(e.k.key, prefix) {
				fn(e.k.key)
			}
		}
	}
}

// size expires what is too old and returns the keys held and their
// bytes.
func (w *dedupWindow) size() (int, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cut := w.now().UnixNano() - int64(w.maxAge)
	for _, t := range w.tenants {
		w.expire(t, cut)
	}
	return w.keys, w.bytes
}

// dedupOutcome is what the window says of a keyed request.
type dedupOutcome uint8

const (
	dedupNew       dedupOutcome = iota // not in the window: process it (the entry is in flight)
	dedupDuplicate                     // answered before: replay the answer
	dedupMismatch                      // another body under the key
	dedupConflict                      // the key's first request is still in flight
)

// begin looks key up in tenant's window (its partition: the tenant's
// state's name). dedupNew returns the entry the request now holds in
// flight (finish settles it); dedupDuplicate the entry whose answer is
// replayed (read under no lock: a done entry's answer does not change).
//
// A tenant's requests may fall in its own partition at one time and in
// the overflow one at another (its state was forgotten while names
// flooded in, or made after they were): the key is looked up in the
// other partition too, where it would be, so that a resend is found
// wherever its first request was kept.
func (w *dedupWindow) begin(tenant string, k dedupKey, fp uint64) (*dedupEntry, dedupOutcome) {
	now := w.now().UnixNano()
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.tenants[tenant]
	if t != nil {
		w.expire(t, now-int64(w.maxAge))
	}
	other := otherTenants
	if tenant == otherTenants {
		other = k.tenant
	}
	e := w.lookup(t, k)
	if o := w.tenants[other]; e == nil && o != nil {
		w.expire(o, now-int64(w.maxAge))
		e = w.lookup(o, k)
	}
	if e != nil {
		switch {
		case e.fp != fp:
			w.mismatches.Inc()
			return nil, dedupMismatch
		case e.state == dedupInFlight:
			w.conflicts.Inc()
			return nil, dedupConflict
		}
		w.hits.Inc()
		return e, dedupDuplicate
	}
	if t = w.tenants[tenant]; t == nil { // expire may have removed it
		t = &dedupTenant{name: tenant, keys: map[dedupKey]*dedupEntry{}}
		w.tenants[tenant] = t
	}
	e = &dedupEntry{k: k, fp: fp, at: now}
	w.insert(t, e)
	return e, dedupNew
}

func (w *dedupWindow) lookup(t *dedupTenant, k dedupKey) *dedupEntry {
	if t == nil {
		return nil
	}
	return t.keys[k]
}

// finish settles an entry begin returned as new: stored (or answered
// with nothing to store) with out, it is done and answers its resends;
// failed, it is forgotten, so that a retry is processed afresh.
func (w *dedupWindow) finish(e *dedupEntry, out *Result, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e.t == nil {
		return // evicted while in flight
	}
	if !ok {
		w.remove(e)
		return
	}
	e.state, e.items, e.rej, e.msg = dedupDone, out.Items, out.Rejected, cutMessage(out.Message)
	w.bytes += int64(len(e.msg))
}

// load inserts a key read back from the sink at start (RebuildDedup).
func (w *dedupWindow) load(k storage.StoredKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at := k.Time.UnixNano()
	if at < w.now().UnixNano()-int64(w.maxAge) {
		return
	}
	t := w.tenants[k.Tenant]
	if t == nil {
		t = &dedupTenant{name: k.Tenant, keys: map[dedupKey]*dedupEntry{}}
		w.tenants[k.Tenant] = t
	}
	dk := dedupKey{sig: k.Signal, tenant: k.Tenant, key: k.Key}
	if t.keys[dk] != nil {
		return // stored twice (a retry after an unknown outcome): the first answers
	}
	e := &dedupEntry{k: dk, fp: k.Fingerprint, at: at, state: dedupDone,
		items: k.Items + k.Rejected, rej: k.Rejected, msg: cutMessage(k.Message)}
	w.insert(t, e)
	w.bytes += int64(len(e.msg))
}

// insert appends e to t's list (its newest) and evicts past the bound.
func (w *dedupWindow) insert(t *dedupTenant, e *dedupEntry) {
	e.t = t
	e.prev = t.tail
	if t.tail != nil {
		t.tail.next = e
	} else {
		t.head = e
	}
	t.tail = e
	t.keys[e.k] = e
	w.keys++
	w.bytes += e.cost()
	for w.keys > w.maxKeys {
		// The tenant that inserts loses its own oldest key while it holds
		// more than its share; otherwise a tenant above its share (one
		// is, the window being over its bound): a tenant within its share
		// never loses a key to another's flood. That tenant is the one
		// holding the most, found by a walk of every partition, and kept
		// while it stays above its share: a walk per key, under the lock,
		// would make each keyed request pay for every tenant there is.
		victim := t
		if share := w.maxKeys / len(w.tenants); len(t.keys) <= share {
			if b := w.big; b == nil || w.tenants[b.name] != b || len(b.keys) <= share {
				w.scans++
				b = t
				for _, o := range w.tenants {
					if len(o.keys) > len(b.keys) {
						b = o
					}
				}
				w.big = b
			}
			victim = w.big
		}
		w.evicted.Inc()
		w.remove(victim.head)
	}
}

// expire removes t's keys received before cut (Unix nanoseconds).
func (w *dedupWindow) expire(t *dedupTenant, cut int64) {
	for t.head != nil && t.head.at < cut {
		w.expired.Inc()
		w.remove(t.head)
	}
}

func (w *dedupWindow) remove(e *dedupEntry) {
	t := e.t
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		t.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		t.tail = e.prev
	}
	delete(t.keys, e.k)
	w.keys--
	w.bytes -= e.cost()
	e.t, e.prev, e.next = nil, nil, nil
	if len(t.keys) == 0 {
		delete(w.tenants, t.name)
	}
}

// cutMessage bounds a remembered message (storage.MaxStoredKeyMessage),
// at a UTF-8 boundary.
func cutMessage(s string) string {
	if len(s) <= storage.MaxStoredKeyMessage {
		return s
	}
	n := storage.MaxStoredKeyMessage
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.Clone(s[:n]) // not holding the whole message
}

// KeyMismatchPrefix begins the message of a request refused for reusing
// an idempotency key with another body: HTTPStatus answers it 422.
const KeyMismatchPrefix = "idempotency key reused"

// dedupBegin checks a keyed request against the window before it is
// validated and charged. It returns done when the request is answered by
// the window (a duplicate, with *out the first answer, and a nil status;
// or a refusal); otherwise t holds the entry that dedupFinish settles.
func (p *Pipeline) dedupBegin(ctx context.Context, kind *signalKind, t *Ticket, key string, msg []byte) (st *grpcwire.Status, out Result, done bool) {
	// The window's partitions are the tenants' states: a tenant the
	// pipeline keeps a state for has its own share; the tenants beyond
	// MaxTenantStates (names clients invent) share the overflow state's,
	// so that inventing names cannot take the window from the others.
	tenant, _ := otlp.TenantFrom(ctx)
	if tenant == "" {
		tenant = otlp.DefaultTenant // as the log reads a record without one
	}
	part := tenant
	if ts := t.tenant; ts != nil {
		part = ts.name
		if ts.name == tenant {
			tenant = ts.name // the state's string, not one per request
		}
	}
	k := dedupKey{sig: kind.signal, tenant: tenant, key: key}
	e, o := p.dedup.begin(part, k, fingerprint(msg))
	switch o {
	case dedupNew:
		t.dedup = e
		return nil, Result{}, false
	case dedupDuplicate:
		t.rlog.duplicate = true
		// Counted as a request, not as items: they were counted once.
		return nil, Result{Items: e.items, Rejected: e.rej, Message: e.msg}, true
	case dedupMismatch:
		return grpcwire.Errorf(grpcwire.InvalidArgument,
			"%s with another %s body: a key names one request; send a new request under a new key", KeyMismatchPrefix, kind.Request), Result{}, true
	}
	st = grpcwire.Errorf(grpcwire.Aborted, "a request with this idempotency key is still being processed; retry after it is answered")
	st.RetryDelay = p.retryDelay
	return st, Result{}, true
}

// dedupFinish settles the entry of t's request, if it holds one.
func (p *Pipeline) dedupFinish(t *Ticket, out *Result, st *grpcwire.Status) {
	if t.dedup != nil {
		p.dedup.finish(t.dedup, out, st == nil)
		t.dedup = nil
	}
}

// dedupForget forgets the entry of t's request if it is still held:
// deferred, so that a panic does not leave it in flight.
func (p *Pipeline) dedupForget(t *Ticket) {
	if t.dedup != nil {
		p.dedup.finish(t.dedup, nil, false)
		t.dedup = nil
	}
}

// RebuildDedup fills the window from the keys sink stores (a
// storage.KeyedSink: the disk log), reading the records of the window's
// age. New calls it when Config.Sink is one; an embedder that opens a
// pipeline over a sink it filled otherwise may call it again (a key
// already in the window is kept).
func (p *Pipeline) RebuildDedup(sink storage.KeyedSink) error {
	if p.dedup == nil {
		return nil
	}
	since := p.dedup.now().Add(-p.dedup.maxAge)
	var keys []storage.StoredKey
	err := sink.ReadKeys(since, func(k storage.StoredKey) error {
		keys = append(keys, k)
		if len(keys) >= 2*p.dedup.maxKeys {
			// Keep the newest maxKeys: the window would evict the rest.
			keys = newestKeys(keys, p.dedup.maxKeys)
		}
		return nil
	})
	for _, k := range newestKeys(keys, p.dedup.maxKeys) {
		p.dedup.load(k)
	}
	if err != nil {
		return fmt.Errorf("cannot read the idempotency keys of the log: %w", err)
	}
	return nil
}

// newestKeys returns the newest n of keys, oldest first.
func newestKeys(keys []storage.StoredKey, n int) []storage.StoredKey {
	slices.SortStableFunc(keys, func(a, b storage.StoredKey) int { return a.Time.Compare(b.Time) })
	if len(keys) > n {
		keys = append(keys[:0], keys[len(keys)-n:]...)
	}
	return keys
}
