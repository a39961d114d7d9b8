// Package handler turns HTTP requests into stored OTLP data. It is the
// receiver's front door and a public API: a storage engine can mount a
// Handler on its own http.Server with its own storage.Sink.
//
// Reading top-down, a request goes:
//
//	Handler.ServeHTTP        (this file)   routes by content type and path
//	  → serveGRPC            (grpc.go)     gRPC method routing: OTLP export or health
//	    → exportUnary        (export.go)   read one message, then export
//	    → exportStream       (stream.go)   otlplite.v1.StreamExporter: pipelined, acked by id
//	    → health*            (health.go)   grpc.health.v1.Health Check, Watch, List
//	  → serveOTLPHTTP        (http.go)     OTLP/HTTP: CORS, content type, body, then export
//	    (JSON bodies are transcoded to protobuf first, so all paths store one format)
//	export                   (export.go)   shared by every transport:
//	  → otlpdecode.Check*                  validation, rejected-item counts
//	  → storage.Sink.Write                 durable before the OK
package handler

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

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

// Config configures a Handler. Sink is required.
type Config struct {
	// Sink stores validated requests.
	Sink storage.Sink
	// Logger receives one line per refused or failed request. Nil means
	// slog.Default().
	Logger *slog.Logger
	// MaxRecvMsgSize bounds one decompressed request message; zero means
	// grpcwire.DefaultMaxRecvMsgSize (64 MiB).
	MaxRecvMsgSize int
	// Decode controls validation (UTF-8 checks, AnyValue depth).
	Decode otlpdecode.Options
	// RetryDelay is sent in google.rpc.RetryInfo (gRPC) or Retry-After
	// (HTTP) when storage fails; zero means DefaultRetryDelay.
	RetryDelay time.Duration
	// CORS lets browsers post OTLP/HTTP from other origins; off by default.
	CORS CORSConfig
	// Stream bounds the otlplite.v1.StreamExporter streams.
	Stream StreamConfig
	// Admission bounds the bytes of requests held at once, across every
	// protocol.
	Admission AdmissionConfig
	// Auth, when set, must accept a request before its body is read;
	// refused requests get UNAUTHENTICATED or HTTP 401.
	Auth Authenticator
	// Metrics is the VictoriaMetrics/metrics set that receives the
	// handler's operator metrics (Prometheus text format, `le`
	// histograms); an embedder passes its own to expose them with its
	// other metrics. Nil means a new private set (Handler.Metrics still
	// returns it). The handler never uses the global default set. A set
	// holds the metrics of one Handler: a second one on the same set
	// shares its counters and repeats its admission counters.
	Metrics *metrics.Set
	// BodyReadTimeout bounds how long a request body (for streams: each
	// message, once begun) may take to arrive, so a stalled sender cannot
	// hold a request slot and its memory forever. Zero means
	// DefaultBodyReadTimeout; negative disables it.
	BodyReadTimeout time.Duration
	// ResponseWriteTimeout bounds how long a response or a stream
	// acknowledgement may wait for the client to take it; then the stream
	// is reset (the connection closed, over HTTP/1.1). Zero means
	// DefaultResponseWriteTimeout; negative disables it.
	ResponseWriteTimeout time.Duration
	// Tenants, when set, attributes every request to a tenant and
	// enforces its quota (tenant.go, quota.go); nil leaves tenancy off.
	Tenants *TenantConfig
	// MetadataKeys names the request headers (gRPC metadata or HTTP
	// headers, case-insensitive) whose values the sink receives as the
	// write's client metadata (storage.MetadataFrom; metadata.go), for a
	// sink that stores them, such as Kafka's include_metadata_keys. Only
	// these keys are passed; nil passes none and costs nothing.
	MetadataKeys []string
}

// DefaultBodyReadTimeout allows a 64 MiB request at about 2 MiB/s, far
// slower than any healthy client, while freeing a stalled one within a
// minute.
const DefaultBodyReadTimeout = 30 * time.Second

// Handler serves the OTLP/gRPC export services and the gRPC health service.
// It is safe for concurrent use.
type Handler struct {
	sink        storage.Sink
	log         *slog.Logger
	limits      grpcwire.Limits
	decodeOpts  otlpdecode.Options
	retryDelay  time.Duration
	health      healthState
	cors        corsPolicy
	stream      StreamConfig
	adm         *admission
	gate        *streamGate
	auth        Authenticator
	bodyTimeout time.Duration
	checks      *checkPool
	reg         *metrics.Set
	m           *handlerMetrics
	logLimit    logLimiter
	bufPool     sync.Pool // *requestBuffers
	// unreadLinger is unreadBodyLinger (http.go).
	unreadLinger time.Duration
	// writeTimeout and guards bound response writes (writeguard.go).
	writeTimeout time.Duration
	guards       *writeGuards
	// ten is nil when tenancy is off.
	ten *tenancy
	// metaKeys is nil when no client metadata is passed to the sink.
	metaKeys *metadataKeys
}

// New returns a Handler for cfg. The health service reports SERVING until
// Shutdown is called.
func New(cfg Config) *Handler {
	if cfg.Sink == nil {
		panic("handler.New: Config.Sink is nil")
	}
	h := &Handler{
		sink:         cfg.Sink,
		log:          cfg.Logger,
		limits:       grpcwire.Limits{MaxRecvMsgSize: cfg.MaxRecvMsgSize},
		decodeOpts:   cfg.Decode,
		retryDelay:   cfg.RetryDelay,
		cors:         newCORSPolicy(cfg.CORS, cfg.Auth != nil),
		stream:       cfg.Stream,
		auth:         cfg.Auth,
		bodyTimeout:  cfg.BodyReadTimeout,
		writeTimeout: cfg.ResponseWriteTimeout,
		unreadLinger: unreadBodyLinger,
		metaKeys:     newMetadataKeys(cfg.MetadataKeys),
	}
	if h.bodyTimeout == 0 {
		h.bodyTimeout = DefaultBodyReadTimeout
	}
	if h.writeTimeout == 0 {
		h.writeTimeout = DefaultResponseWriteTimeout
	}
	h.stream.setDefaults()
	h.adm = newAdmission(cfg.Admission, h.retryDelay)
	maxStreams := cfg.Admission.MaxStreams
	if maxStreams <= 0 {
		maxStreams = int(max(h.adm.limit/StreamUnitCost, DefaultMaxStreams))
	}
	h.gate = newStreamGate(maxStreams, h.adm.maxWait)
	h.reg = cfg.Metrics
	if h.reg == nil {
		h.reg = metrics.NewSet()
	}
	h.m = newHandlerMetrics(h.reg, h.adm)
	registerGateMetrics(h.reg, h.gate, h.adm)
	if cfg.Tenants != nil {
		_, tenantAuth := cfg.Auth.(TenantAuthenticator)
		h.ten = newTenancy(cfg.Tenants, tenantAuth, newTenantMetrics(h.reg))
	}
	h.checks = newCheckPool()
	// The workers hold only the pool's channel, not h: when h becomes
	// unreachable (an embedder dropped it), they are stopped.
	runtime.AddCleanup(h, func(p *checkPool) { p.stop() }, h.checks)
	h.guards = newWriteGuards(h.writeTimeout, h.m.writeTimeouts)
	// Likewise the write watchdog.
	runtime.AddCleanup(h, func(stop chan struct{}) { close(stop) }, h.guards.stop)
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.retryDelay <= 0 {
		h.retryDelay = DefaultRetryDelay
	}
	h.health.init()
	return h
}

// ServeHTTP routes a request by its content type and path, so that one
// port serves everything and a client pointed at the "wrong" OTLP port still
// works: gRPC (content type application/grpc or application/grpc+...) goes
// to the gRPC services; other requests to one of our gRPC method paths get
// 415, as from grpc-go; everything else is OTLP/HTTP, which answers unknown
// paths with 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	grpc := grpcwire.IsGRPCRequest(r)
	if grpc && r.ProtoMajor != 2 {
		// gRPC is defined over HTTP/2 only (PROTOCOL-HTTP2.md): over
		// HTTP/1.1 there are no trailers to carry grpc-status, so a
		// client could not tell success from failure. grpc-go answers
		// 505 the same way. The body is not read.
		st := grpcwire.Errorf(grpcwire.Unimplemented, "gRPC requires HTTP/2: use h2c (HTTP/2 with prior knowledge) or TLS with ALPN h2, or send OTLP/HTTP to /v1/traces, /v1/metrics or /v1/logs")
		h.recordRefusal(r, transportGRPC, http.StatusHTTPVersionNotSupported, st)
		w.Header().Set("Connection", "close")
		http.Error(w, st.Message, http.StatusHTTPVersionNotSupported)
		return
	}
	tokenTenant, ok := h.authenticate(w, r, grpc)
	if !ok {
		return
	}
	// Every request and stream holds a unit of the process-wide stream
	// bound while it is served (admission.go, streamGate); a refusal
	// holds nothing and is not flow-controlled, so it cannot be stalled.
	cs := connstate.FromContext(r.Context())
	if !h.gate.acquire(r.Context(), cs) {
		h.refuseBusyStreams(w, r, grpc)
		return
	}
	defer h.gate.release()
	if h.ten != nil && !h.tenantExempt(r, grpc) {
		if r, ok = h.identify(w, r, grpc, tokenTenant); !ok {
			return
		}
	}
	if h.metaKeys != nil && !h.tenantExempt(r, grpc) {
		r = h.withClientMetadata(r)
	}
	if grpc {
		h.serveGRPC(w, r)
		return
	}
	if isGRPCPath(r.URL.Path) {
		// grpc-go answers 415 here; we add a Status body, as OTLP/HTTP
		// does for every error, so a human with curl learns why.
		h.writeHTTPError(w, r, requestEncoding(r), http.StatusUnsupportedMediaType,
			grpcwire.Errorf(grpcwire.InvalidArgument, "%s is a gRPC method: send it with content-type application/grpc, or use the OTLP/HTTP paths /v1/traces, /v1/metrics, /v1/logs", r.URL.Path))
		return
	}
	h.serveOTLPHTTP(w, r)
}

// refuseBusyStreams answers a request or stream that found every unit of
// the stream bound taken and no quiet connection to shed: UNAVAILABLE with
// RetryInfo (gRPC, Trailers-Only), 503 with Retry-After (HTTP). The body
// is not read; net/http resets the stream after the answer.
func (h *Handler) refuseBusyStreams(w http.ResponseWriter, r *http.Request, grpc bool) {
	h.refuseEarly(w, r, grpc, http.StatusServiceUnavailable, h.adm.busyStatus("too many requests and streams in progress"))
}

// registerGateMetrics exposes the stream bound (units in use and their
// limit, refusals and waits) and the stream windows charged while parked.
func registerGateMetrics(set *metrics.Set, g *streamGate, a *admission) {
	set.GetOrCreateGauge("otlplite_streams_in_progress", func() float64 { return float64(g.inUse()) })
	set.GetOrCreateGauge("otlplite_streams_limit", func() float64 { return float64(cap(g.sem)) })
	// Stream windows charged to the waiting budget (admission.park).
	set.GetOrCreateGauge("otlplite_admission_unread_window_bytes", func() float64 {
		_, _, st := a.snapshot()
		return float64(st.Parked)
	})
	set.RegisterMetricsWriter(func(w io.Writer) {
		_, _, st := a.snapshot()
		metrics.WriteCounterUint64(w, "otlplite_streams_refused_total", uint64(g.refused.Load()))
		metrics.WriteCounterUint64(w, "otlplite_streams_waits_total", uint64(g.waited.Load()))
		metrics.WriteCounterUint64(w, "otlplite_admission_refusals_unread_window_total", uint64(max(st.RefusedUnread, 0)))
	})
}

// isGRPCPath reports whether path names a service this handler serves over
// gRPC.
func isGRPCPath(path string) bool {
	service, _, ok := splitMethod(path)
	if !ok {
		return false
	}
	switch service {
	case healthService, otlp.StreamService, otlp.UnaryEnvelopeService:
		return true
	}
	return otlp.SignalByGRPCService(service) != 0
}

// Metrics returns the set holding the handler's metrics (Config.Metrics,
// or the handler's own); its WritePrometheus writes them.
func (h *Handler) Metrics() *metrics.Set { return h.reg }

// Shutdown marks every service NOT_SERVING, ends health Watch streams and
// rotates export streams (each acknowledges what it read, then ends with
// UNAVAILABLE so its client reconnects elsewhere), so that an http.Server's
// graceful shutdown is not held up by them. Unary calls in flight continue.
func (h *Handler) Shutdown() {
	h.health.shutdown()
}

// requestBuffers are reused across requests to keep the hot path free of
// per-request allocations.
type requestBuffers struct {
	msg, scratch, filtered, resp []byte
	// ticket is the request's charge against the admission budget.
	ticket ticket
	// check is the request's validation job for the check pool.
	check checkJob
	// rlog is the request's debug log record (requestlog.go).
	rlog requestLog
	// tenant is the request's tenant, nil when tenancy is off; the
	// ticket charges its share of the budget. throttled is set when the
	// request was refused for being over its tenant's quota.
	tenant    *tenantState
	throttled bool
}

// maxPooledBuffer is the largest buffer returned to the pool: a rare 64 MiB
// request should not pin 64 MiB per pooled entry afterwards.
const maxPooledBuffer = 8 << 20

// getBuffers returns pooled buffers with a fresh admission ticket, for a
// request with context ctx (which holds its tenant, if tenancy is on).
func (h *Handler) getBuffers(ctx context.Context) *requestBuffers {
	b, ok := h.bufPool.Get().(*requestBuffers)
	if !ok {
		b = &requestBuffers{}
	}
	b.ticket = ticket{a: h.adm, conn: connstate.FromContext(ctx)}
	b.tenant, b.throttled = nil, false
	if h.ten != nil {
		if ts := tenantOf(ctx); ts != nil {
			b.tenant = ts
			b.ticket.ten = ts
			b.ticket.tenantLimit, b.ticket.tenantMaxRequest = ts.limits(h.ten.reg.quotas, h.ten.reg.now(), h.adm.limit)
		}
	}
	return b
}

// putBuffers releases the request's admission charge, writes its request
// log line (at debug level) and pools the buffers.
func (h *Handler) putBuffers(b *requestBuffers) {
	b.ticket.release()
	if b.rlog.on {
		h.writeRequestLog(&b.rlog)
	}
	if cap(b.msg) > maxPooledBuffer {
		b.msg = nil
	}
	if cap(b.scratch) > maxPooledBuffer {
		b.scratch = nil
	}
	if cap(b.filtered) > maxPooledBuffer {
		b.filtered = nil
	}
	h.bufPool.Put(b)
}
