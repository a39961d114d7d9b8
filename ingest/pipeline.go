// Package ingest is the one pipeline every way into the receiver passes
// through: gRPC unary calls, the streaming mode and OTLP/HTTP (package
// handler), the Kafka source (package kafkasource), and any receiver an
// embedder adds. Each of them is a transport: it reads a request off its
// wire, holding a Ticket that charges the bytes as they arrive, and hands
// it to Pipeline.Export, which does the rest once, in one place:
//
//	admission       (admission.go)   the byte budget, charged as bytes arrive (Ticket)
//	tenant, quotas  (quota.go, tenant.go, tenant_metrics.go)
//	decompression, OTLP/JSON transcoding, within the limits (export.go)
//	validation with partial success (checkpool.go, otlpdecode)
//	the sink, and its errors as statuses (export.go): a byte storage.Sink,
//	  or a storage.ItemSink handed the items in the validation pass
//	refusal reasons (refuse.go), metrics (metrics.go), the request log (requestlog.go)
//
// The pipeline's error currency is *grpcwire.Status: a gRPC code, message,
// RetryInfo delay and BadRequest details are what OTLP asks every
// transport to convey (OTLP v1.11 "Failures", "Throttling"), and each
// transport already translates them (HTTP status and Retry-After, the
// stream's acknowledgement, the Kafka source's retry or dead letter).
// A type of our own would be the same four fields plus a translation.
package ingest

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/internal/connstate"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/storage"
)

// DefaultRetryDelay is the RetryInfo delay sent when storage cannot take a
// request. One second lets a briefly stalled disk recover without clients
// piling up retries (OTLP v1.11 "Throttling": clients SHOULD honour it).
const DefaultRetryDelay = time.Second

// Config configures a Pipeline. Exactly one of Sink and Items is
// required.
type Config struct {
	// Sink stores validated requests as bytes (the disk log, Kafka,
	// discard).
	Sink storage.Sink
	// Items, instead of Sink, receives validated requests as decoded
	// items, in the validation pass (storage.ItemSink): a storage
	// engine's path. Setting both is refused (New panics): which of two
	// sinks a request's acknowledgement waits for, and what a failure of
	// one after the other stored means, has no answer that would not
	// hide a loss; an engine that also wants the bytes logged writes
	// them from its Commit.
	Items storage.ItemSink
	// Logger receives one line per refused or failed request (and, at
	// debug level, one per request). Nil means slog.Default().
	Logger *slog.Logger
	// MaxRecvMsgSize bounds one decompressed request message (and its
	// protobuf form, for OTLP/JSON); zero means
	// grpcwire.DefaultMaxRecvMsgSize (64 MiB).
	MaxRecvMsgSize int
	// Decode controls validation (UTF-8 checks, AnyValue depth).
	Decode otlpdecode.Options
	// RetryDelay is the retry delay of a refusal for want of storage or
	// room; zero means DefaultRetryDelay.
	RetryDelay time.Duration
	// Admission bounds the bytes of requests held at once, across every
	// transport.
	Admission AdmissionConfig
	// Metrics is the VictoriaMetrics/metrics set that receives the
	// pipeline's operator metrics; nil means a new private set
	// (Pipeline.Metrics returns it). The global default set is never
	// used. A set holds the metrics of one Pipeline.
	Metrics *metrics.Set
	// Tenants, when set, turns tenancy on: requests whose context names
	// a tenant (Pipeline.WithTenant) are charged to its quota; nil
	// leaves it off.
	Tenants *TenantsConfig
	// Clock is the time the tenants' quota buckets refill by, and the
	// window of idempotency keys ages by; nil means time.Now. A test
	// freezes it so that no bucket refills while it runs.
	Clock func() time.Time
	// Dedup bounds the window of idempotency keys (dedup.go); the zero
	// value is the default window. When Sink is a storage.KeyedSink (the
	// disk log), New rebuilds the window from the keys it stores.
	Dedup DedupConfig
}

// TenantsConfig turns tenancy on in the pipeline. Who names a request's
// tenant (a token, a header, a certificate) is the transport's business;
// the pipeline keeps the tenants' state, quotas and counters.
type TenantsConfig struct {
	// Quotas holds the per-tenant limits; nil means no limits (tenants
	// are identified, counted and stored, not throttled).
	Quotas *QuotaFile
}

// Pipeline validates and stores export requests. It is safe for
// concurrent use.
type Pipeline struct {
	sink       storage.Sink
	items      storage.ItemSink
	log        *slog.Logger
	limit      int
	decodeOpts otlpdecode.Options
	retryDelay time.Duration
	adm        *admission
	checks     *checkPool
	reg        *metrics.Set
	m          *pipelineMetrics
	logLimit   logLimiter
	tickets    sync.Pool // *Ticket
	// taken counts the tickets taken for clients' requests (Taken).
	taken atomic.Uint64
	// sizes keeps pooled tickets' buffers to the size requests are.
	sizes recentSizes
	// ten is nil when tenancy is off.
	ten *tenantRegistry
	// dedup is the window of idempotency keys, nil when it is off; keyed
	// is sink as a storage.KeyedSink, nil when it is not one.
	dedup *dedupWindow
	keyed storage.KeyedSink
}

// New returns a Pipeline for cfg.
func New(cfg Config) *Pipeline {
	if cfg.Sink == nil && cfg.Items == nil {
		panic("ingest.New: Config.Sink is nil")
	}
	if cfg.Sink != nil && cfg.Items != nil {
		panic("ingest.New: Config.Sink and Config.Items are both set; a pipeline stores into one")
	}
	p := &Pipeline{
		sink:       cfg.Sink,
		items:      cfg.Items,
		log:        cfg.Logger,
		limit:      cfg.MaxRecvMsgSize,
		decodeOpts: cfg.Decode,
		retryDelay: cfg.RetryDelay,
	}
	if p.limit <= 0 {
		p.limit = grpcwire.DefaultMaxRecvMsgSize
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	// The admission refusals carry the delay as given (zero: the
	// default is applied where a status is made), as they always did.
	p.adm = newAdmission(cfg.Admission, p.retryDelay)
	if p.retryDelay <= 0 {
		p.retryDelay = DefaultRetryDelay
	}
	p.reg = cfg.Metrics
	if p.reg == nil {
		p.reg = metrics.NewSet()
	}
	p.m = newPipelineMetrics(p.reg, p.adm)
	if cfg.Tenants != nil {
		p.ten = newTenantRegistry(cfg.Tenants.Quotas, newTenantMetrics(p.reg))
		if cfg.Clock != nil {
			p.ten.now = cfg.Clock
		}
	}
	p.dedup = newDedupWindow(cfg.Dedup, p.reg)
	if p.dedup != nil && cfg.Clock != nil {
		p.dedup.now = cfg.Clock
	}
	if ks, ok := cfg.Sink.(storage.KeyedSink); ok && p.dedup != nil {
		p.keyed = ks
		if err := p.RebuildDedup(ks); err != nil {
			// The keys read before the error are in the window; a resend
			// of the others is stored again (at least once).
			p.log.Warn("the window of idempotency keys is rebuilt in part", "err", err)
		}
	}
	p.checks = newCheckPool()
	// The workers hold only the pool's channel, not p: when p becomes
	// unreachable (an embedder dropped it), they are stopped.
	runtime.AddCleanup(p, func(c *checkPool) { c.stop() }, p.checks)
	return p
}

// Metrics returns the set holding the pipeline's metrics (Config.Metrics,
// or its own); its WritePrometheus writes them.
func (p *Pipeline) Metrics() *metrics.Set { return p.reg }

// Logger returns the pipeline's logger (Config.Logger or slog.Default()).
func (p *Pipeline) Logger() *slog.Logger { return p.log }

// RetryDelay returns the retry delay of refusals for want of storage
// (Config.RetryDelay or DefaultRetryDelay).
func (p *Pipeline) RetryDelay() time.Duration { return p.retryDelay }

// MaxRecvMsgSize returns the bound on one decompressed request message.
func (p *Pipeline) MaxRecvMsgSize() int { return p.limit }

// Transport names a way in: it labels a request's metrics
// (otlplite_requests_total{transport}, otelcol_receiver_*{transport}) and
// its request log line. The values are the Collector's "transport" label
// values, so its dashboards work.
type Transport uint8

const (
	GRPC       Transport = iota // OTLP/gRPC unary calls (and UnaryExporter)
	GRPCStream                  // otlplite.v1.StreamExporter
	HTTP                        // OTLP/HTTP
	Kafka                       // records read from Kafka (kafkasource)
	STEF                        // STEFDestination/Stream (stefreceiver)
	OTelArrow                   // Arrow{Traces,Metrics,Logs}Service (arrowreceiver, -tags otelarrow)
	// Embedded is an embedder's own way in (a queue, a file, a protocol
	// of its own), labelled "embedded", so that its requests are not
	// counted as another transport's.
	Embedded
	numTransports
)

var transportNames = [numTransports]string{"grpc", "grpc_stream", "http", "kafka", "stef", "otelarrow", "embedded"}

func (t Transport) String() string {
	if t >= numTransports {
		return "unknown"
	}
	return transportNames[t]
}

// Format is the encoding of a request body.
type Format uint8

const (
	// Proto is the protobuf Export*ServiceRequest.
	Proto Format = iota
	// JSON is its OTLP/JSON form; Export transcodes it to protobuf,
	// bounded by MaxRecvMsgSize and charged to the request's Ticket as
	// the protobuf grows, so every later step sees one format.
	JSON
)

// Request is one export request handed to Export by a transport.
//
// What travels with the request rather than in it is in Export's ctx, as
// the sink receives it (storage.Sink.Write): its tenant
// (Pipeline.WithTenant, or otlp.WithTenant for a tenant without quota
// accounting), the client metadata a sink may store
// (storage.WithMetadata), its deadline and cancellation.
type Request struct {
	// Transport is the way the request came in (metrics, request log).
	Transport Transport
	// Signal is the request's signal; Body is an Export*ServiceRequest
	// of it.
	Signal otlp.Signal
	// Body is the request, Format-encoded, compressed with Codec.
	// Export does not retain it. When Ticket is set, Body may be one of
	// its buffers: Ticket.Scratch, or Ticket.Msg when Codec is Identity
	// and Format is Proto (Export decompresses and transcodes into
	// Ticket.Msg).
	Body   []byte
	Format Format
	// Codec is Body's content coding (OTLP/HTTP's Content-Encoding);
	// the zero value, compression.Identity, is a body as is. Export
	// decompresses it within the limits, charging the Ticket.
	Codec compression.Codec
	// WireSize is the request's size as it arrived, before any
	// decompression (otlplite_received_wire_bytes_total); zero means
	// len(Body). Size is its decompressed size when Body is only part
	// of what arrived (a stream envelope's payload); zero means Body's
	// length after decompression (otlplite_received_bytes_total).
	WireSize, Size int
	// Ticket is the request's admission ticket, already charged by the
	// transport for the bytes it read (grpcwire.Call.SetBudget charges
	// frames as they arrive; OTLP/HTTP charges its body). Export charges
	// it for what it decompresses and transcodes, and returns its whole
	// charge before it returns. The transport still owns it (Done).
	//
	// Nil means the request did not arrive over a transport that charges
	// as it reads (a Kafka record, a file being replayed): Export takes
	// a ticket from ctx (its tenant, if any), refuses a Body larger than
	// MaxRecvMsgSize, charges Body (waiting for room as a request does)
	// and gives the ticket back before it returns.
	Ticket *Ticket
	// IdempotencyKey names the request for exactly-once storage (see
	// otlp.IdempotencyKeyHeader, dedup.go, docs/exactly-once.md): a
	// request whose key the tenant's window holds is not stored again and
	// gets the first one's Result. Empty means no key: stored at least
	// once, as before. At most otlp.MaxIdempotencyKeyLen bytes (a longer
	// one is refused, INVALID_ARGUMENT). The window keeps the string: it
	// must not alias a buffer the transport reuses.
	IdempotencyKey string
}

// Result is what Export did with a request.
type Result struct {
	// Items is the number of items (spans, data points, log records,
	// profiles) in the request; Rejected of them were invalid and not
	// stored (OTLP's partial success), Message saying why.
	Items, Rejected int
	Message         string
	// Throttled is set when the request was refused for its tenant's
	// quota or share of the budget (OTLP/HTTP answers 429 rather than
	// the status's own 503).
	Throttled bool

	// counted and countedRejected are Items and Rejected in the unit of
	// the otelcol_receiver_* counters: the items, or for profiles their
	// samples (kind.countSamples).
	counted, countedRejected int
	// chargedItems and chargedBytes are what the request cost its
	// tenant's quota: the items (profile samples for profiles) and
	// protobuf bytes handed to the sink, unless the sink promised that
	// nothing was stored (storage.ErrNotStored).
	chargedItems, chargedBytes int
}

// Ticket is one request's pass through the pipeline: its charge against
// the admission budget (it implements grpcwire.Budget: Declare, Charge,
// Grow), its tenant, its request-log record and its pooled buffers. A
// transport takes one per request (Take), reads the request into its
// buffers while charging it, hands it to Export in Request.Ticket, and
// gives it back (Done). Reusing tickets keeps the request path free of
// per-request allocations.
type Ticket struct {
	// Msg and Scratch are buffers a transport may read a request into;
	// Resp one to build its response in. They are pooled with the ticket
	// and may be reallocated; a transport stores back what it grew.
	Msg, Scratch, Resp []byte
	// filtered holds the request without its rejected items (and, for
	// compressed OTLP/JSON, the decompressed JSON before that).
	filtered []byte
	// c is the request's charge against the admission budget.
	c charge
	// check is the request's validation job for the check pool.
	check checkJob
	// pre is what the transport vouched for (ExportValidated).
	pre prevalidation
	// visit and visitOpts are the request's decoded-item pass when the
	// pipeline stores into an ItemSink (Config.Items): pooled with the
	// ticket, so that the views' buffers are reused from one request to
	// the next and visiting allocates nothing in steady state.
	visit     otlpdecode.Visit
	visitOpts otlpdecode.Options
	// rlog is the request's debug log record (requestlog.go).
	rlog requestLog
	// tenant is the request's tenant, nil when tenancy is off; the
	// charge c bears its share of the budget. throttled is set when the
	// request was refused for being over its tenant's quota.
	tenant    *tenantState
	throttled bool
	// dedup is the request's key in the window, in flight, when it has
	// one (dedup.go).
	dedup *dedupEntry
	// chargeCtx and charger are ChargeFunc's: the function is made once
	// per pooled ticket, so handing it to a reader costs no allocation.
	chargeCtx context.Context
	charger   func(int) error
	// start is when the request arrived (Take, then StartLog), for
	// otlplite_request_duration_seconds.
	start time.Time
}

// ChargeFunc returns Charge bound to ctx, as the func(int) error a
// reader charges with (compression.ReadAll, otlpjson.Bound). It is valid
// until the ticket is given back (Done).
func (t *Ticket) ChargeFunc(ctx context.Context) func(int) error {
	t.chargeCtx = ctx
	if t.charger == nil {
		t.charger = func(n int) error { return t.c.Charge(t.chargeCtx, n) }
	}
	return t.charger
}

// A Ticket is what grpcwire.Call.SetBudget charges as frames arrive.
var _ grpcwire.Budget = (*Ticket)(nil)

// Declare implements grpcwire.Budget: a declared size larger than the
// whole budget (or the tenant's share or max_request_bytes) can never be
// admitted and is refused at once, as too large; anything else is
// charged only as it arrives.
func (t *Ticket) Declare(n int) error { return t.c.Declare(n) }

// Charge implements grpcwire.Budget: n bytes arrived; it may wait for
// room, within ctx.
func (t *Ticket) Charge(ctx context.Context, n int) error { return t.c.Charge(ctx, n) }

// Reserve charges n bytes that the transport is about to produce from
// what the ticket holds, before producing them: a stream message's
// declared decoded length (compression.StreamDecoder.DecodeMessageReserve),
// which is bounded before a byte of it is decoded. Unlike Grow it waits
// for room, as Charge does and within the same bounds (ctx, the
// admission's MaxWait, the waiting budget), as a continuing charge (ahead
// of new requests: the ticket holds the bytes it decodes); its refusals
// are Charge's. While it waits its stream is not read: the stream's window
// (AdmissionConfig.StreamWindow) is charged to the waiting budget with n
// for the wait, as ParkWindow charges one, and a wait that does not fit
// there is refused at once as busy. What an output needs beyond it is
// charged with Grow.
func (t *Ticket) Reserve(ctx context.Context, n int) error { return t.c.Reserve(ctx, n) }

// Grow implements grpcwire.Budget: n bytes were produced (decompressed);
// it never waits.
func (t *Ticket) Grow(n int) error { return t.c.Grow(n) }

// Release returns the ticket's whole charge now: a transport calls it
// once the request is read (or refused) and before it writes the
// response, so a client that does not read its response holds none of
// the budget. Export releases it too; Done does.
func (t *Ticket) Release() { t.c.release() }

// Throttled reports whether the request was refused for its tenant's
// quota or budget share.
func (t *Ticket) Throttled() bool { return t.throttled || t.c.throttled }

// MaxRequest is the request's tenant's max_request_bytes, 0 when none:
// a transport bounds its reading (and the decompressors) to it where it
// is below MaxRecvMsgSize.
func (t *Ticket) MaxRequest() int64 { return t.c.tenantMaxRequest }

// Take returns a ticket for a request with context ctx (which holds its
// tenant, if tenancy is on: WithTenant), with pooled buffers and nothing
// charged.
func (p *Pipeline) Take(ctx context.Context) *Ticket {
	t, ok := p.tickets.Get().(*Ticket)
	if !ok {
		t = &Ticket{}
	}
	t.c = charge{a: p.adm, conn: connstate.FromContext(ctx)}
	t.tenant, t.throttled = nil, false
	t.start = time.Now()
	if p.adm.reserve > 0 && isSelf(ctx) {
		// The receiver's own telemetry: the reserve, no tenant quota.
		t.c.reserved = true
		return t
	}
	p.taken.Add(1)
	if p.ten != nil {
		if ts := tenantOf(ctx); ts != nil {
			t.tenant = ts
			t.c.ten = ts
			t.c.tenantLimit, t.c.tenantMaxRequest = ts.limits(p.ten.quotas, p.ten.now(), p.adm.limit)
		}
	}
	return t
}

// Taken returns how many tickets were taken for clients' requests (not
// the receiver's own telemetry's) so far: whether requests arrived between
// two looks, when none is in flight at either (service's burst release).
func (p *Pipeline) Taken() uint64 { return p.taken.Load() }

// maxPooledBuffer is the largest buffer returned to the pool: a rare 64 MiB
// request should not pin 64 MiB per pooled entry afterwards.
const maxPooledBuffer = 8 << 20

// Done releases the ticket's admission charge, writes its request log line
// (at debug level) and pools it, with the buffers that fit the requests
// seen lately (recentSizes). The ticket must not be used afterwards.
func (p *Pipeline) Done(t *Ticket) {
	t.c.release()
	t.chargeCtx = nil
	if t.rlog.on {
		p.writeRequestLog(&t.rlog)
	}
	keep := min(p.sizes.keep(max(len(t.Msg), len(t.Scratch), len(t.filtered)), t.start), maxPooledBuffer)
	if cap(t.Msg) > keep {
		t.Msg = nil
	}
	if cap(t.Scratch) > keep {
		t.Scratch = nil
	}
	if cap(t.filtered) > keep {
		t.filtered = nil
	}
	p.tickets.Put(t)
}

// recentSizes keeps the pooled buffers to the size requests actually are.
// Pooled tickets keep the buffers they grew, so after a burst of large
// requests every ticket would hold one as large, whatever came after.
// recentSizes remembers the largest request buffer seen lately, halved
// every sizeDecay (never below the request at hand): Done drops a buffer
// more than keptOver times that, so a burst's buffers go as their tickets
// serve the smaller requests that follow (within a few sizeDecay), while a
// steady mix of sizes keeps its buffers.
type recentSizes struct {
	largest   atomic.Int64
	decayedAt atomic.Int64 // UnixNano of the last halving
}

// sizeDecay is how often the remembered size halves: a burst's buffers are
// dropped within a minute of its end (log2 of the ratio of sizes periods),
// and a size seen every few seconds is never forgotten.
const sizeDecay = 10 * time.Second

// keptOver is the headroom of kept buffers over the remembered size: buffers
// grown by doubling (compression.ReadAll) are up to twice their request, and
// the remembered size is halved at each decay: 4 keeps them through it.
const keptOver = 4

// minKeptBuffer is kept whatever the sizes: small buffers are cheap to keep
// and a quiet receiver's pool is small anyway.
const minKeptBuffer = 64 << 10

// keep records a request whose largest buffer held n bytes, at now (the
// request's arrival: no clock read), and returns the capacity up to which
// its buffers are kept.
func (r *recentSizes) keep(n int, now time.Time) int {
	l := r.largest.Load()
	for int64(n) > l && !r.largest.CompareAndSwap(l, int64(n)) {
		l = r.largest.Load()
	}
	l = max(l, int64(n))
	if at, ns := r.decayedAt.Load(), now.UnixNano(); ns-at >= int64(sizeDecay) && r.decayedAt.CompareAndSwap(at, ns) {
		// A racing larger request may be lost from the halved value:
		// it is remembered again by its own next use.
		l = max(l/2, int64(n))
		r.largest.Store(l)
	}
	return int(max(l*keptOver, minKeptBuffer))
}
