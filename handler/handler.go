// Package handler is the receiver's HTTP and gRPC transport: it turns
// HTTP requests into calls of the one ingest pipeline (package ingest),
// and the pipeline's answers into gRPC statuses, OTLP/HTTP responses and
// stream acknowledgements. It is a public API: a storage engine can mount
// a Handler on its own http.Server with its own storage.Sink.
//
// Reading top-down, a request goes:
//
//	Handler.ServeHTTP        (this file)   routes by content type and path; auth, tenant, stream bound
//	  → serveGRPC            (grpc.go)     gRPC method routing: OTLP export or health
//	    → exportUnary        (export.go)   read one message, then ingest.Pipeline.Export
//	    → exportStream       (stream.go)   otlplite.v1.StreamExporter: pipelined, acked by id
//	    → health*            (health.go)   grpc.health.v1.Health Check, Watch, List
//	  → serveOTLPHTTP        (http.go)     OTLP/HTTP: CORS, content type, body, then Export
//	ingest.Pipeline.Export   (package ingest) shared by every transport:
//	  admission, quotas, decompression and JSON transcoding, validation
//	  (partial success), storage.Sink.Write, metrics, the request log
package handler

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/internal/connstate"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/storage"
)

// DefaultRetryDelay is ingest.DefaultRetryDelay.
const DefaultRetryDelay = ingest.DefaultRetryDelay

// Config configures a Handler and the ingest.Pipeline it builds (New).
// Sink is required.
type Config struct {
	// Sink stores validated requests.
	Sink storage.Sink
	// Items, instead of Sink, receives them as decoded items
	// (ingest.Config.Items); one of the two is required.
	Items storage.ItemSink
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
	// Dedup bounds the pipeline's window of idempotency keys
	// (ingest.Config.Dedup, docs/exactly-once.md).
	Dedup DedupConfig
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
	// enforces its quota (tenant.go; ingest/quota.go); nil leaves tenancy off.
	Tenants *TenantConfig
	// Clock is the time the tenants' quota buckets refill by
	// (ingest.Config.Clock); nil means time.Now.
	Clock func() time.Time
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
	p           *ingest.Pipeline
	log         *slog.Logger
	limits      grpcwire.Limits
	retryDelay  time.Duration
	health      healthState
	cors        corsPolicy
	stream      StreamConfig
	gate        *streamGate
	auth        Authenticator
	bodyTimeout time.Duration
	reg         *metrics.Set
	m           *transportMetrics
	// unreadLinger is unreadBodyLinger (http.go).
	unreadLinger time.Duration
	// writeTimeout and guards bound response writes (writeguard.go).
	writeTimeout time.Duration
	guards       *writeGuards
	// readGuards bound unary gRPC request reads by bodyTimeout
	// (exportUnary); nil when it is disabled.
	readGuards *writeGuards
	// ten is nil when tenancy is off.
	ten *tenancy
	// metaKeys is nil when no client metadata is passed to the sink.
	metaKeys *metadataKeys
	// exports runs unary gRPC exports' pipeline work (exportworkers.go).
	exports *exportWorkers
	// mounts are the other gRPC methods served behind the same gates
	// (Mount); nil when none.
	mounts map[string]http.Handler
	// spares are the decoders ended export streams left for the next
	// (streamzstd.go).
	spares *streamSpares
}

// New returns a Handler for cfg, with the ingest.Pipeline it serves
// (Pipeline) built from the same Config. The health service reports
// SERVING until Shutdown is called.
func New(cfg Config) *Handler {
	if cfg.Sink == nil && cfg.Items == nil {
		panic("handler.New: Config.Sink is nil")
	}
	var tenants *ingest.TenantsConfig
	if cfg.Tenants != nil {
		tenants = &ingest.TenantsConfig{Quotas: cfg.Tenants.Quotas}
	}
	p := ingest.New(ingest.Config{
		Sink:           cfg.Sink,
		Items:          cfg.Items,
		Logger:         cfg.Logger,
		MaxRecvMsgSize: cfg.MaxRecvMsgSize,
		Decode:         cfg.Decode,
		RetryDelay:     cfg.RetryDelay,
		Admission:      cfg.Admission,
		Dedup:          cfg.Dedup,
		Metrics:        cfg.Metrics,
		Tenants:        tenants,
		Clock:          cfg.Clock,
	})
	h := &Handler{
		p:            p,
		log:          p.Logger(),
		limits:       grpcwire.Limits{MaxRecvMsgSize: cfg.MaxRecvMsgSize},
		retryDelay:   p.RetryDelay(),
		reg:          p.Metrics(),
		cors:         newCORSPolicy(cfg.CORS, cfg.Auth != nil),
		stream:       cfg.Stream,
		auth:         cfg.Auth,
		bodyTimeout:  cfg.BodyReadTimeout,
		writeTimeout: cfg.ResponseWriteTimeout,
		unreadLinger: unreadBodyLinger,
		metaKeys:     newMetadataKeys(cfg.MetadataKeys),
		exports:      newExportWorkers(),
	}
	if h.bodyTimeout == 0 {
		h.bodyTimeout = DefaultBodyReadTimeout
	}
	if h.writeTimeout == 0 {
		h.writeTimeout = DefaultResponseWriteTimeout
	}
	h.stream.setDefaults()
	h.spares = newStreamSpares(p, h.reg, h.stream.CompressionWindow)
	maxStreams := cfg.Admission.MaxStreams
	if maxStreams <= 0 {
		maxStreams = int(max(p.AdmissionLimit()/StreamUnitCost, DefaultMaxStreams))
	}
	h.gate = newStreamGate(maxStreams, p.AdmissionMaxWait())
	h.m = newTransportMetrics(h.reg)
	registerGateMetrics(h.reg, h.gate)
	if cfg.Tenants != nil {
		_, tenantAuth := cfg.Auth.(TenantAuthenticator)
		h.ten = newTenancy(cfg.Tenants, tenantAuth)
	}
	h.guards = newWriteGuards(h.writeTimeout, h.m.writeTimeouts)
	// The write watchdog holds only its stop channel, not h: when h
	// becomes unreachable (an embedder dropped it), it is stopped.
	runtime.AddCleanup(h, func(stop chan struct{}) { close(stop) }, h.guards.stop)
	if h.bodyTimeout > 0 {
		h.readGuards = newReadGuards(h.bodyTimeout)
		runtime.AddCleanup(h, func(stop chan struct{}) { close(stop) }, h.readGuards.stop)
	}
	h.health.init()
	return h
}

// Pipeline returns the ingest pipeline the handler serves: an embedder
// feeds it from other ways in (the Kafka source, a receiver of its own)
// so that they share its admission budget, quotas and metrics.
func (h *Handler) Pipeline() *ingest.Pipeline { return h.p }

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
		h.recordRefusal(r, ingest.GRPC, http.StatusHTTPVersionNotSupported, st)
		w.Header().Set("Connection", "close")
		http.Error(w, st.Message, http.StatusHTTPVersionNotSupported)
		return
	}
	tokenTenant, ok := h.authenticate(w, r, grpc)
	if !ok {
		return
	}
	// Every request and stream holds a unit of the process-wide stream
	// bound while it is served (streamgate.go); a refusal
	// holds nothing and is not flow-controlled, so it cannot be stalled.
	cs := connstate.FromContext(r.Context())
	if !h.gate.acquire(r.Context(), cs) {
		h.refuseBusyStreams(w, r, grpc)
		return
	}
	defer h.gate.release(cs)
	if h.ten != nil && !h.tenantExempt(r, grpc) {
		if r, ok = h.identify(w, r, grpc, tokenTenant); !ok {
			return
		}
	}
	if h.metaKeys != nil && !h.tenantExempt(r, grpc) {
		r = h.withClientMetadata(r)
	}
	if grpc {
		if m := h.mounts[r.URL.Path]; m != nil {
			m.ServeHTTP(w, r)
			return
		}
		h.serveGRPC(w, r)
		return
	}
	if isGRPCPath(r.URL.Path) || h.mounts[r.URL.Path] != nil {
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
	h.refuseEarly(w, r, grpc, http.StatusServiceUnavailable, h.p.BusyStatus("too many requests and streams in progress"))
}

// registerGateMetrics exposes the stream bound: units in use and their
// limit, refusals and waits. (The stream windows charged while parked
// are the admission's: ingest's metrics.)
func registerGateMetrics(set *metrics.Set, g *streamGate) {
	set.GetOrCreateGauge("otlplite_streams_in_progress", func() float64 { return float64(g.inUse()) })
	set.GetOrCreateGauge("otlplite_streams_limit", func() float64 { return float64(cap(g.sem)) })
	set.RegisterMetricsWriter(func(w io.Writer) {
		metrics.WriteCounterUint64(w, "otlplite_streams_refused_total", uint64(g.refused.Load()))
		metrics.WriteCounterUint64(w, "otlplite_streams_waits_total", uint64(g.waited.Load()))
	})
}

// transportMetrics are the handler's own metrics, beside the pipeline's:
// the streaming mode's and the response writes'.
type transportMetrics struct {
	openStreams *metrics.Gauge   // otlplite_open_streams
	rotations   *metrics.Counter // otlplite_stream_rotations_total: streams ended by rotation (age, request count or shutdown)
	// writeTimeouts counts responses abandoned because their client
	// stopped reading (writeguard.go):
	// otlplite_response_write_timeouts_total.
	writeTimeouts *metrics.Counter
}

func newTransportMetrics(set *metrics.Set) *transportMetrics {
	return &transportMetrics{
		openStreams:   set.GetOrCreateGauge("otlplite_open_streams", nil),
		rotations:     set.GetOrCreateCounter("otlplite_stream_rotations_total"),
		writeTimeouts: set.GetOrCreateCounter("otlplite_response_write_timeouts_total"),
	}
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

// getTicket returns a pipeline ticket for a request with context ctx
// (which holds its tenant, if tenancy is on).
func (h *Handler) getTicket(ctx context.Context) *ingest.Ticket { return h.p.Take(ctx) }

// putTicket gives a ticket back: its charge released, its request log
// line written.
func (h *Handler) putTicket(t *ingest.Ticket) { h.p.Done(t) }

// recordRefusal counts a refusal of r and logs it (ingest's
// otlplite_refusals_total and refusal log). It is called by the refusal
// writers only: refuseGRPC, writeHTTPError and the stream's.
func (h *Handler) recordRefusal(r *http.Request, t ingest.Transport, httpStatus int, st *grpcwire.Status) {
	h.p.RecordRefusal(r.Context(), t, httpStatus, st, r.URL.Path, r.RemoteAddr)
}

// refuseGRPC ends a gRPC call with st, counted and logged.
func (h *Handler) refuseGRPC(call *grpcwire.Call, t ingest.Transport, st *grpcwire.Status) {
	h.recordRefusal(call.Request(), t, 0, st)
	call.WriteStatus(st)
}
