package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/service"
)

// registerServeFlags defines serve's flags on s, section by section: each
// sets the field of cfg its usage names in service.Config, and its default
// is that field's value (service.DefaultConfig).
func registerServeFlags(s *flagSections, cfg *service.Config) {
	s.add("Listeners", func(fs *flag.FlagSet) {
		fs.StringVar(&cfg.GRPCAddr, "grpc-addr", cfg.GRPCAddr, "OTLP/gRPC address (`host:port`, or unix:PATH for a Unix socket), the OTLP default port 4317; it serves OTLP/HTTP too")
		fs.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "OTLP/HTTP address (`host:port`, or unix:PATH), the OTLP default port 4318; it serves gRPC too; empty disables it")
		fs.StringVar(&cfg.UnixSocketMode, "unix-socket-mode", cfg.UnixSocketMode, "permission bits (octal) of the socket files of unix:PATH listeners, set before the socket appears; connecting needs write permission. A socket file left by a crashed run is replaced only if nobody answers on it; it is removed at a clean stop")
		fs.StringVar(&cfg.ProxyProtocolTrustedCIDRs, "proxy-protocol-trusted-cidrs", cfg.ProxyProtocolTrustedCIDRs, "comma-separated networks and addresses (and unix, for Unix socket peers) of the proxies or load balancers whose connections to the OTLP listeners must begin with a PROXY protocol header (v1 or v2, before TLS); the client address it names is the one in logs; a header from any other peer is refused, never believed; empty: the PROXY protocol is off")
		fs.DurationVar(&cfg.ProxyProtocolTimeout, "proxy-protocol-timeout", cfg.ProxyProtocolTimeout, "how long a trusted peer has to send its PROXY header")
		fs.StringVar(&cfg.CORSAllowedOrigins, "cors-allowed-origins", cfg.CORSAllowedOrigins, "comma-separated origins allowed to send OTLP/HTTP from browsers: exact, with one wildcard (https://*.example.com), or *; empty disables CORS")
		fs.StringVar(&cfg.CORSAllowedHeaders, "cors-allowed-headers", cfg.CORSAllowedHeaders, "comma-separated extra request headers allowed in CORS requests")
		fs.IntVar(&cfg.CORSMaxAge, "cors-max-age", cfg.CORSMaxAge, "seconds a browser may cache a CORS preflight answer")
	})
	s.add("Storage", func(fs *flag.FlagSet) {
		fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory of the disk store (and of cursors and dead letters)")
		fs.StringVar(&cfg.Storage, "storage", cfg.Storage, "where data goes: disk (durable, default), kafka (see the Kafka section), or discard (count and drop, for benchmarks)")
		d := &cfg.Disk
		fs.StringVar(&d.Sync, "storage-sync", d.Sync, "when stored data is fsynced: always (an OK means fsynced; concurrent requests share fsyncs), interval (every -storage-sync-interval: a power loss may lose that window of acknowledged data), none (left to the OS)")
		fs.DurationVar(&d.SyncInterval, "storage-sync-interval", d.SyncInterval, "fsync period with -storage-sync interval")
		fs.StringVar(&d.MaxBytes, "storage-max-bytes", d.MaxBytes, "delete the oldest segments when all signals together exceed this size (bytes, or with a KiB/MiB/GiB/TiB or KB/MB/GB/TB suffix); 0 means no limit")
		fs.DurationVar(&d.MaxAge, "storage-max-age", d.MaxAge, "delete segments whose newest record is older than this (e.g. 168h); 0 means no limit")
		fs.StringVar(&d.Compression, "storage-compression", d.Compression, "compression of newly written segments: zstd or none (existing segments stay readable either way)")
		fs.StringVar(&d.MaxSegmentSize, "storage-max-segment-size", d.MaxSegmentSize, "size at which a new segment file is started; retention deletes whole segments (same units as -storage-max-bytes)")
	})
	s.add("Requests and limits", func(fs *flag.FlagSet) {
		fs.IntVar(&cfg.MaxRecvMsgSize, "grpc-max-recv-msg-size", cfg.MaxRecvMsgSize, "largest request in bytes, compressed or decompressed, for gRPC and OTLP/HTTP (OTLP recommends accepting 64 MiB)")
		fs.BoolVar(&cfg.ValidateUTF8, "validate-utf8", cfg.ValidateUTF8, "reject items with invalid UTF-8 in string fields (proto3 requires valid UTF-8; off by default, as in the OpenTelemetry Collector)")
		fs.BoolVar(&cfg.STEF, "stef", cfg.STEF, "also serve STEF/gRPC (STEFDestination/Stream, from the Collector's stefexporter) on the OTLP ports (-stef=false turns it off)")
		if service.OTelArrowBuilt { // -tags otelarrow
			fs.BoolVar(&cfg.OTelArrow.Enabled, "otelarrow", cfg.OTelArrow.Enabled, "also serve OTel-Arrow (Arrow{Traces,Metrics,Logs}Service, from the Collector's otelarrowexporter) on the OTLP ports (-otelarrow=false turns it off)")
			fs.Int64Var(&cfg.OTelArrow.MemoryLimit, "otelarrow-memory-limit", cfg.OTelArrow.MemoryLimit, "bytes of Arrow buffers (schemas, dictionaries, one batch) one OTel-Arrow stream may hold, as otel-arrow's memory_limit_mib; charged to the admission budget as allocated; beyond it the batch gets RESOURCE_EXHAUSTED and the stream ends")
		}
		fs.Int64Var(&cfg.Admission.RequestLimit, "admission-request-limit", cfg.Admission.RequestLimit, "bytes of requests (wire plus decompressed) held at once across all protocols")
		fs.Int64Var(&cfg.Admission.WaitingLimit, "admission-waiting-limit", cfg.Admission.WaitingLimit, "bytes of requests allowed to wait for admission; beyond it requests are refused at once as retryable")
		fs.DurationVar(&cfg.Admission.MaxWait, "admission-max-wait", cfg.Admission.MaxWait, "longest a request waits for admission (also bounded by its deadline)")
		fs.IntVar(&cfg.Admission.MaxStreams, "max-streams", cfg.Admission.MaxStreams, "requests and streams served at once across all connections (each a goroutine and its buffers, about 32 KiB), export stream requests being processed included; when all are taken the quietest connection is shed for a newcomer, else it is refused as retryable; 0: the admission request limit / 32 KiB (4096 by default)")
		fs.StringVar(&cfg.MemoryLimit, "memory-limit", cfg.MemoryLimit, "soft limit of the Go heap (bytes, or like 512MiB): the garbage collector works harder near it, so peak memory follows live data instead of doubling it; auto is twice the admission limits plus 48 MiB, raised by what the window of idempotency keys holds as it fills; 0 disables; the GOMEMLIMIT environment variable overrides it")
		fs.IntVar(&cfg.DedupKeys, "dedup-window-keys", cfg.DedupKeys, "idempotency keys remembered at once across tenants (each tenant keeps at least its share), so that a request resent with its key is answered, not stored again; each costs at most 896 bytes (about 420 with UUID keys); 0 turns the window off (keys are ignored)")
		fs.DurationVar(&cfg.DedupMaxAge, "dedup-window-age", cfg.DedupMaxAge, "how long an idempotency key is remembered (and, with -storage disk or kafka, how much of the log or the topics is read at start to rebuild the window); a request resent later is stored again")
		fs.DurationVar(&cfg.RetryDelay, "retry-delay", cfg.RetryDelay, "back-off sent to clients (RetryInfo, Retry-After) when storage or admission refuses a request; jittered ±25% for admission")
		fs.DurationVar(&cfg.BodyReadTimeout, "body-read-timeout", cfg.BodyReadTimeout, "how long a request body (a stream message, once begun) may take to arrive; stalled senders are cut off (a unary gRPC body between this and 1.25 times it: one watchdog checks them all)")
		fs.DurationVar(&cfg.ResponseWriteTimeout, "response-write-timeout", cfg.ResponseWriteTimeout, "how long a response or a stream acknowledgement may wait for the client to take it (HTTP/2 flow control) before the stream is reset (HTTP/1.1: the connection closed); the request is stored and its budget released before; negative disables")
		fs.IntVar(&cfg.Stream.MaxInFlight, "stream-max-in-flight", cfg.Stream.MaxInFlight, "requests of one export stream processed at once; beyond it the server stops reading the stream (flow-control back-pressure)")
		fs.DurationVar(&cfg.Stream.MaxAge, "stream-max-age", cfg.Stream.MaxAge, "rotate an export stream after this age (±10% jitter) so clients rebalance; negative disables")
		fs.IntVar(&cfg.Stream.MaxRequests, "stream-max-requests", cfg.Stream.MaxRequests, "rotate an export stream after this many requests; negative disables")
		fs.IntVar(&cfg.Stream.CompressionWindow, "stream-compression-window", handler.DefaultStreamCompressionWindow, "largest zstd window (bytes, a power of two) a client may use for stateful compression on an export stream; the server holds about this plus 0.75 MiB per such stream, charged to the admission budget; negative disables")
		fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "on SIGTERM, how long in-flight requests and streams may take to finish")

		// HTTP/2 and HTTP/1.1 limits: server.Limits says why each
		// default is what it is.
		fs.IntVar(&cfg.Limits.MaxConnections, "max-connections", cfg.Limits.MaxConnections, "client connections open at once across the OTLP listeners; at it the oldest idle one is closed to make room, else the one whose streams sent nothing longest (at least 1 s; tokenless ones first); connections that never presented a valid token keep to a quarter of it (idle ones are also shed when the process runs out of file descriptors); each may hold its HTTP/2 window unread, and about 100 KiB of buffers; 0: no bound but the descriptor limit")
		fs.DurationVar(&cfg.Limits.MaxConnectionAge, "max-connection-age", cfg.Limits.MaxConnectionAge, "send GOAWAY on connections older than this (±10% jitter) so clients reconnect and L7 balancers rebalance; 0 disables")
		fs.DurationVar(&cfg.Limits.MaxConnectionAgeGrace, "max-connection-age-grace", cfg.Limits.MaxConnectionAgeGrace, "after -max-connection-age, how long requests and streams may finish before the connection is closed")
		fs.DurationVar(&cfg.Limits.IdleTimeout, "idle-timeout", cfg.Limits.IdleTimeout, "close connections idle this long")
		fs.DurationVar(&cfg.Limits.ReadHeaderTimeout, "read-header-timeout", cfg.Limits.ReadHeaderTimeout, "time a client has to send request headers (and an h2c connection its preface)")
		fs.DurationVar(&cfg.Limits.WriteByteTimeout, "write-timeout", cfg.Limits.WriteByteTimeout, "drop an HTTP/2 connection that accepts no response bytes for this long; 0 disables")
		fs.IntVar(&cfg.Limits.MaxHeaderBytes, "max-header-bytes", cfg.Limits.MaxHeaderBytes, "largest request header block, bytes (HTTP/1.1 and HTTP/2)")
		fs.IntVar(&cfg.Limits.MaxConcurrentStreams, "http2-max-concurrent-streams", cfg.Limits.MaxConcurrentStreams, "HTTP/2 concurrent streams per connection")
		fs.IntVar(&cfg.Limits.StreamWindow, "http2-stream-window", cfg.Limits.StreamWindow, "HTTP/2 receive window per stream, bytes; 0: derived, -admission-request-limit / -max-connections between 256 KiB and 4 MiB (256 KiB by default): what each connection may make the server buffer unread; export streams that wait unread, and STEF and OTel-Arrow streams while they store, are charged it in the waiting budget")
		fs.IntVar(&cfg.Limits.ConnWindow, "http2-conn-window", cfg.Limits.ConnWindow, "HTTP/2 receive window per connection, bytes; 0: derived like -http2-stream-window")
		fs.IntVar(&cfg.Limits.MaxFrameSize, "http2-max-frame-size", cfg.Limits.MaxFrameSize, "largest HTTP/2 frame the server accepts, bytes")
	})
	s.add("TLS and auth", func(fs *flag.FlagSet) {
		fs.StringVar(&cfg.TLSCert, "tls-cert", cfg.TLSCert, "TLS certificate file (PEM), reloaded when it changes; without it the listeners speak h2c and HTTP/1.1")
		fs.StringVar(&cfg.TLSKey, "tls-key", cfg.TLSKey, "TLS private key file (PEM)")
		fs.StringVar(&cfg.TLSClientCA, "tls-client-ca", cfg.TLSClientCA, "CA certificates (PEM) for mTLS: clients must present a certificate signed by one of them")
		fs.StringVar(&cfg.TLSMinVersion, "tls-min-version", cfg.TLSMinVersion, "minimum TLS version: 1.2 or 1.3")
		fs.StringVar(&cfg.AuthTokenFile, "auth-token-file", cfg.AuthTokenFile, "file of bearer tokens, one per line (optionally followed by tenant=NAME, which turns tenancy on: see Tenants), re-read when it changes; requests without a valid 'authorization: Bearer' header are refused before their body is read (gRPC health checks and CORS preflights are exempt: Kubernetes gRPC probes, load balancers and browsers send them without credentials; health requests are still capped at 1 KiB and charged to the admission budget)")
	})
	registerTenantFlags(s, &cfg.Tenants)
	s.add("Kafka (-storage kafka)", func(fs *flag.FlagSet) { registerKafkaFlags(fs, &cfg.Kafka) })
	s.add("Observability", func(fs *flag.FlagSet) {
		fs.StringVar(&cfg.AdminAddr, "admin-addr", cfg.AdminAddr, "operator listener (`host:port`, or unix:PATH): the status page /, /status.json, /metrics, /config, /healthz, /readyz (and /debug/pprof with -admin-pprof); empty disables it")
		fs.BoolVar(&cfg.AdminPprof, "admin-pprof", cfg.AdminPprof, "serve /debug/pprof/ on the admin listener")
		fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug (adds a line per request), info, warn or error")
		fs.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "log format: text (logfmt, for people) or json (one JSON object per line, for log pipelines)")
		fs.DurationVar(&cfg.StatusSampleInterval, "status-sample-interval", cfg.StatusSampleInterval, "how often the status page samples the metrics for its rates (over 12 samples) and its charts (180 samples: 15 minutes at 5s)")
		fs.StringVar(&cfg.SelfTelemetry.Endpoint, "self-telemetry-endpoint", cfg.SelfTelemetry.Endpoint, "push the receiver's own metrics (the /metrics set) and its log records at warn and above as OTLP: http://host:port or https://... (OTLP/HTTP), grpc://host:port or grpcs://... (OTLP/gRPC), with host:port or unix:PATH and -forward's URL parameters (header=, compression=, timeout=, tls-ca= ...), or self (into this receiver's own pipeline, with an admission reserve of its own that user requests cannot take; tenant _self with tenancy on); empty disables it")
		fs.DurationVar(&cfg.SelfTelemetry.Interval, "self-telemetry-interval", cfg.SelfTelemetry.Interval, "time between two self-telemetry pushes")
	})
	registerForwardFlags(s, &cfg.Forward)
	registerKafkaConsumeFlags(s, &cfg.KafkaConsume)
}

// registerTenantFlags defines the tenancy flags (service.TenantConfig).
func registerTenantFlags(s *flagSections, f *service.TenantConfig) {
	s.add("Tenants", func(fs *flag.FlagSet) {
		fs.StringVar(&f.Header, "tenant-header", f.Header, "request header that names the tenant, such as "+handler.DefaultTenantHeader+" (the header Tempo, Mimir and Loki use); setting it turns tenancy on. The header is the client's word: put an authenticating proxy in front, or prefer token tenants. Headers that carry credentials (Authorization, Proxy-Authorization, Cookie, X-Api-Key: any name the secrets rule calls secret) are refused")
		fs.StringVar(&f.FromCert, "tenant-from-cert", f.FromCert, "field of the verified mTLS client certificate (-tls-client-ca) that names the tenant: cn, san-dns or ou; setting it turns tenancy on")
		fs.StringVar(&f.Sources, "tenant-sources", f.Sources, "order in which the tenant sources are tried; the first that names a tenant wins (token: the token file's 'TOKEN tenant=NAME' lines, which turn tenancy on); sources not configured are skipped")
		fs.StringVar(&f.Default, "tenant-default", f.Default, "tenant of a request no source names (ignored with -tenant-required); data stored without tenancy reads as "+otlp.DefaultTenant)
		fs.BoolVar(&f.Required, "tenant-required", f.Required, "refuse a request no source names a tenant for, with UNAUTHENTICATED (HTTP 401), instead of using -tenant-default")
		fs.StringVar(&f.QuotaFile, "tenant-quota-file", f.QuotaFile, "per-tenant quotas, re-read when it changes (a bad file keeps the quotas in force): one line per tenant, '* ...' for the others, e.g. 'team-a bytes_per_second=10MiB burst_bytes=40MiB items_per_second=50000 max_budget_share=0.25 max_request_bytes=8MiB'; over quota, clients are told when to retry (gRPC UNAVAILABLE with RetryInfo, HTTP 429 with Retry-After); see the README")
	})
}

// serve runs the receiver (package service) that its flags configure until
// SIGINT or SIGTERM, then shuts it down gracefully, bounded by
// -shutdown-timeout. A second signal exits at once.
func serve(args []string, stdout, stderr io.Writer) int {
	cfg := service.DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sections := newFlagSections(fs)
	registerServeFlags(sections, &cfg)
	if code, ok := parseSectionFlags(sections, args, stdout, stderr); !ok {
		return code
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "otlp-lite serve: %s\n", redact.Line(err.Error()))
		return 2
	}
	cfg.Effective, cfg.Version = sections.effective(), version
	logger, _ := service.NewLogger(stderr, cfg.LogFormat, cfg.LogLevel) // checked by Validate
	// Libraries that log through slog's default (the Kafka client) use
	// the same handler.
	slog.SetDefault(logger)
	cfg.Logger = logger
	limit, _ := cfg.MemoryLimitBytes()
	if limit > 0 {
		debug.SetMemoryLimit(limit)
		logger.Debug("memory limit set", "bytes", limit)
	}
	svc, err := service.New(cfg)
	if err == nil {
		// Catch signals before announcing that we serve: a SIGTERM right
		// after the "serving" line must shut down gracefully.
		sigc := make(chan os.Signal, 2)
		signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
		if err = svc.Start(context.Background()); err == nil {
			stop := make(chan struct{})
			if cfg.MemoryLimit == "auto" || cfg.MemoryLimit == "" {
				go svc.FollowMemoryLimit(limit, stop)
			}
			err = waitAndShutdown(svc, sigc, cfg, logger)
			close(stop)
		}
	}
	if err != nil {
		logger.Error("server failed", "err", err)
		return 1
	}
	return 0
}

// waitAndShutdown waits for a signal (or a listener that stopped serving)
// and shuts svc down within -shutdown-timeout.
func waitAndShutdown(svc *service.Service, sigc chan os.Signal, cfg service.Config, logger *slog.Logger) error {
	var failed error
	select {
	case err := <-svc.Err():
		failed = fmt.Errorf("server stopped: %w", err)
	case s := <-sigc:
		logger.Info("shutting down", "signal", s.String(), "timeout", cfg.ShutdownTimeout)
	}
	go func() {
		<-sigc
		logger.Warn("second signal: exiting without waiting")
		os.Exit(1)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := svc.Shutdown(ctx); err != nil && failed == nil {
		failed = err
	}
	return failed
}
