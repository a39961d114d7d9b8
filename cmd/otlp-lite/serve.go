package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/server"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/discard"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

type serveConfig struct {
	grpcAddr, httpAddr   string
	adminAddr            string
	adminPprof           bool
	dataDir              string
	storageKind          string
	tls                  tlsOptions
	authTokenFile        string
	maxRecvMsgSize       int
	validateUTF8         bool
	logLevel             string
	logFormat            string
	shutdownTimeout      time.Duration
	retryDelay           time.Duration
	bodyReadTimeout      time.Duration
	responseWriteTimeout time.Duration
	limits               server.Limits
	stream               handler.StreamConfig
	admission            handler.AdmissionConfig
	corsOrigins          string
	corsHeaders          string
	corsMaxAge           int
	kafka                kafkaFlags
	disk                 *diskFlags
	memoryLimit          string
	extensions           []extensionFlags
	tenants              tenantFlags

	// Derived by validate, and the effective configuration after parsing.
	level     slog.Level
	memLimit  int64
	effective []configEntry
}

// registerServeFlags defines serve's flags on s, section by section,
// then the flags of the optional extensions (serveExtensions) in theirs.
func registerServeFlags(s *flagSections, cfg *serveConfig) {
	s.add("Listeners", func(fs *flag.FlagSet) {
		fs.StringVar(&cfg.grpcAddr, "grpc-addr", "localhost:4317", "OTLP/gRPC address (`host:port`), the OTLP default port 4317; it serves OTLP/HTTP too")
		fs.StringVar(&cfg.httpAddr, "http-addr", "localhost:4318", "OTLP/HTTP address (`host:port`), the OTLP default port 4318; it serves gRPC too; empty disables it")
		fs.StringVar(&cfg.corsOrigins, "cors-allowed-origins", "", "comma-separated origins allowed to send OTLP/HTTP from browsers: exact, with one wildcard (https://*.example.com), or *; empty disables CORS")
		fs.StringVar(&cfg.corsHeaders, "cors-allowed-headers", "", "comma-separated extra request headers allowed in CORS requests")
		fs.IntVar(&cfg.corsMaxAge, "cors-max-age", 7200, "seconds a browser may cache a CORS preflight answer")
	})
	s.add("Storage", func(fs *flag.FlagSet) {
		fs.StringVar(&cfg.dataDir, "data-dir", "./otlp-data", "directory of the disk store (and of cursors and dead letters)")
		fs.StringVar(&cfg.storageKind, "storage", "disk", "where data goes: disk (durable, default), kafka (see the Kafka section), or discard (count and drop, for benchmarks)")
		cfg.disk = registerDiskFlags(fs)
	})
	s.add("Requests and limits", func(fs *flag.FlagSet) {
		fs.IntVar(&cfg.maxRecvMsgSize, "grpc-max-recv-msg-size", grpcwire.DefaultMaxRecvMsgSize, "largest request in bytes, compressed or decompressed, for gRPC and OTLP/HTTP (OTLP recommends accepting 64 MiB)")
		fs.BoolVar(&cfg.validateUTF8, "validate-utf8", false, "reject items with invalid UTF-8 in string fields (proto3 requires valid UTF-8; off by default, as in the OpenTelemetry Collector)")
		fs.Int64Var(&cfg.admission.RequestLimit, "admission-request-limit", handler.DefaultAdmissionRequestLimit, "bytes of requests (wire plus decompressed) held at once across all protocols")
		fs.Int64Var(&cfg.admission.WaitingLimit, "admission-waiting-limit", handler.DefaultAdmissionWaitingLimit, "bytes of requests allowed to wait for admission; beyond it requests are refused at once as retryable")
		fs.DurationVar(&cfg.admission.MaxWait, "admission-max-wait", handler.DefaultAdmissionMaxWait, "longest a request waits for admission (also bounded by its deadline)")
		fs.IntVar(&cfg.admission.MaxStreams, "max-streams", 0, "requests and streams served at once across all connections (each a goroutine and its buffers, about 32 KiB), export stream requests being processed included; when all are taken the quietest connection is shed for a newcomer, else it is refused as retryable; 0: the admission request limit / 32 KiB (4096 by default)")
		fs.StringVar(&cfg.memoryLimit, "memory-limit", "auto", "soft limit of the Go heap (bytes, or like 512MiB): the garbage collector works harder near it, so peak memory follows live data instead of doubling it; auto is twice the admission limits plus 48 MiB; 0 disables; the GOMEMLIMIT environment variable overrides it")
		fs.DurationVar(&cfg.retryDelay, "retry-delay", handler.DefaultRetryDelay, "back-off sent to clients (RetryInfo, Retry-After) when storage or admission refuses a request; jittered ±25% for admission")
		fs.DurationVar(&cfg.bodyReadTimeout, "body-read-timeout", handler.DefaultBodyReadTimeout, "how long a request body (a stream message, once begun) may take to arrive; stalled senders are cut off")
		fs.DurationVar(&cfg.responseWriteTimeout, "response-write-timeout", handler.DefaultResponseWriteTimeout, "how long a response or a stream acknowledgement may wait for the client to take it (HTTP/2 flow control) before the stream is reset (HTTP/1.1: the connection closed); the request is stored and its budget released before; negative disables")
		fs.IntVar(&cfg.stream.MaxInFlight, "stream-max-in-flight", handler.DefaultStreamMaxInFlight, "requests of one export stream processed at once; beyond it the server stops reading the stream (flow-control back-pressure)")
		fs.DurationVar(&cfg.stream.MaxAge, "stream-max-age", handler.DefaultStreamMaxAge, "rotate an export stream after this age (±10% jitter) so clients rebalance; negative disables")
		fs.IntVar(&cfg.stream.MaxRequests, "stream-max-requests", handler.DefaultStreamMaxRequests, "rotate an export stream after this many requests; negative disables")
		fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 15*time.Second, "on SIGTERM, how long in-flight requests and streams may take to finish")

		// HTTP/2 and HTTP/1.1 limits: server.Limits says why each
		// default is what it is.
		dl := server.DefaultLimits()
		fs.IntVar(&cfg.limits.MaxConnections, "max-connections", dl.MaxConnections, "client connections open at once across the OTLP listeners; at it the oldest idle one is closed to make room, else the one whose streams sent nothing longest (at least 1 s; tokenless ones first); connections that never presented a valid token keep to a quarter of it (idle ones are also shed when the process runs out of file descriptors); each may hold its HTTP/2 window unread, and about 100 KiB of buffers; 0: no bound but the descriptor limit")
		fs.DurationVar(&cfg.limits.MaxConnectionAge, "max-connection-age", dl.MaxConnectionAge, "send GOAWAY on connections older than this (±10% jitter) so clients reconnect and L7 balancers rebalance; 0 disables")
		fs.DurationVar(&cfg.limits.MaxConnectionAgeGrace, "max-connection-age-grace", dl.MaxConnectionAgeGrace, "after -max-connection-age, how long requests and streams may finish before the connection is closed")
		fs.DurationVar(&cfg.limits.IdleTimeout, "idle-timeout", dl.IdleTimeout, "close connections idle this long")
		fs.DurationVar(&cfg.limits.ReadHeaderTimeout, "read-header-timeout", dl.ReadHeaderTimeout, "time a client has to send request headers (and an h2c connection its preface)")
		fs.DurationVar(&cfg.limits.WriteByteTimeout, "write-timeout", dl.WriteByteTimeout, "drop an HTTP/2 connection that accepts no response bytes for this long; 0 disables")
		fs.IntVar(&cfg.limits.MaxHeaderBytes, "max-header-bytes", dl.MaxHeaderBytes, "largest request header block, bytes (HTTP/1.1 and HTTP/2)")
		fs.IntVar(&cfg.limits.MaxConcurrentStreams, "http2-max-concurrent-streams", dl.MaxConcurrentStreams, "HTTP/2 concurrent streams per connection")
		fs.IntVar(&cfg.limits.StreamWindow, "http2-stream-window", 0, "HTTP/2 receive window per stream, bytes; 0: derived, -admission-request-limit / -max-connections between 256 KiB and 4 MiB (256 KiB by default): what each connection may make the server buffer unread; export streams that wait unread are charged it in the waiting budget")
		fs.IntVar(&cfg.limits.ConnWindow, "http2-conn-window", 0, "HTTP/2 receive window per connection, bytes; 0: derived like -http2-stream-window")
		fs.IntVar(&cfg.limits.MaxFrameSize, "http2-max-frame-size", dl.MaxFrameSize, "largest HTTP/2 frame the server accepts, bytes")
	})
	s.add("TLS and auth", func(fs *flag.FlagSet) {
		fs.StringVar(&cfg.tls.certFile, "tls-cert", "", "TLS certificate file (PEM), reloaded when it changes; without it the listeners speak h2c and HTTP/1.1")
		fs.StringVar(&cfg.tls.keyFile, "tls-key", "", "TLS private key file (PEM)")
		fs.StringVar(&cfg.tls.clientCAFile, "tls-client-ca", "", "CA certificates (PEM) for mTLS: clients must present a certificate signed by one of them")
		fs.StringVar(&cfg.tls.minVersion, "tls-min-version", "1.2", "minimum TLS version: 1.2 or 1.3")
		fs.StringVar(&cfg.authTokenFile, "auth-token-file", "", "file of bearer tokens, one per line (optionally followed by tenant=NAME, which turns tenancy on: see Tenants), re-read when it changes; requests without a valid 'authorization: Bearer' header are refused before their body is read (gRPC health checks and CORS preflights are exempt: Kubernetes gRPC probes, load balancers and browsers send them without credentials; health requests are still capped at 1 KiB and charged to the admission budget)")
	})
	registerTenantFlags(s, &cfg.tenants)
	s.add("Kafka (-storage kafka)", func(fs *flag.FlagSet) {
		cfg.kafka = registerKafkaFlags(fs)
	})
	s.add("Observability", func(fs *flag.FlagSet) {
		fs.StringVar(&cfg.adminAddr, "admin-addr", "localhost:8888", "operator listener (`host:port`): the status page /, /status.json, /metrics, /config, /healthz, /readyz (and /debug/pprof with -admin-pprof); empty disables it")
		fs.BoolVar(&cfg.adminPprof, "admin-pprof", false, "serve /debug/pprof/ on the admin listener")
		fs.StringVar(&cfg.logLevel, "log-level", "info", "log level: debug (adds a line per request), info, warn or error")
		fs.StringVar(&cfg.logFormat, "log-format", "text", "log format: text (logfmt, for people) or json (one JSON object per line, for log pipelines)")
	})
	for _, register := range serveExtensions {
		cfg.extensions = append(cfg.extensions, register(s))
	}
}

// validate checks every flag value that parsing alone does not, so that a
// mistake is one line and exit status 2 before anything starts, not an
// error log after the listeners opened. It fills the fields derived from
// the values (level, memory limit).
func (cfg *serveConfig) validate() error {
	if err := cfg.level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return fmt.Errorf("bad -log-level %q: want debug, info, warn or error", cfg.logLevel)
	}
	if cfg.logFormat != "text" && cfg.logFormat != "json" {
		return fmt.Errorf("bad -log-format %q: want text or json", cfg.logFormat)
	}
	switch cfg.storageKind {
	case "disk", "kafka", "discard":
	default:
		return fmt.Errorf("bad -storage %q: want disk, kafka or discard", cfg.storageKind)
	}
	if cfg.grpcAddr == "" {
		return errors.New("bad -grpc-addr: must not be empty")
	}
	for name, addr := range map[string]string{"grpc-addr": cfg.grpcAddr, "http-addr": cfg.httpAddr, "admin-addr": cfg.adminAddr} {
		if addr == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("bad -%s %q: want host:port (:4317 for every interface): %v", name, addr, err)
		}
	}
	if _, err := cfg.disk.options(); err != nil {
		return err
	}
	var err error
	if cfg.memLimit, err = memoryLimit(*cfg); err != nil {
		return fmt.Errorf("bad -memory-limit: %w", err)
	}
	if err := checkTLSOptions(cfg.tls); err != nil {
		return err
	}
	if cfg.authTokenFile != "" {
		if _, err := handler.NewTokenFile(cfg.authTokenFile); err != nil {
			return fmt.Errorf("bad -auth-token-file: %w", err)
		}
	}
	if err := cfg.tenants.validate(cfg.authTokenFile, cfg.tls.clientCAFile); err != nil {
		return err
	}
	if cfg.corsMaxAge < 0 {
		return fmt.Errorf("bad -cors-max-age %d: must not be negative", cfg.corsMaxAge)
	}
	for _, o := range splitList(cfg.corsOrigins) {
		if o != "*" && !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			return fmt.Errorf("bad -cors-allowed-origins entry %q: want an origin such as https://app.example.com, https://*.example.com, or *", o)
		}
	}
	positive := []struct {
		name string
		v    int64
	}{
		{"grpc-max-recv-msg-size", int64(cfg.maxRecvMsgSize)},
		{"admission-request-limit", cfg.admission.RequestLimit},
		{"stream-max-in-flight", int64(cfg.stream.MaxInFlight)},
		{"http2-max-concurrent-streams", int64(cfg.limits.MaxConcurrentStreams)},
		{"max-header-bytes", int64(cfg.limits.MaxHeaderBytes)},
	}
	for _, p := range positive {
		if p.v <= 0 {
			return fmt.Errorf("bad -%s %d: must be positive", p.name, p.v)
		}
	}
	nonNegative := []struct {
		name string
		v    int64
	}{
		{"admission-waiting-limit", cfg.admission.WaitingLimit},
		{"admission-max-wait", int64(cfg.admission.MaxWait)},
		{"max-streams", int64(cfg.admission.MaxStreams)},
		{"max-connections", int64(cfg.limits.MaxConnections)},
		{"max-connection-age", int64(cfg.limits.MaxConnectionAge)},
		{"max-connection-age-grace", int64(cfg.limits.MaxConnectionAgeGrace)},
		{"idle-timeout", int64(cfg.limits.IdleTimeout)},
		{"read-header-timeout", int64(cfg.limits.ReadHeaderTimeout)},
		{"write-timeout", int64(cfg.limits.WriteByteTimeout)},
		{"retry-delay", int64(cfg.retryDelay)},
		{"body-read-timeout", int64(cfg.bodyReadTimeout)},
		{"shutdown-timeout", int64(cfg.shutdownTimeout)},
		{"http2-stream-window", int64(cfg.limits.StreamWindow)},
		{"http2-conn-window", int64(cfg.limits.ConnWindow)},
		{"http2-max-frame-size", int64(cfg.limits.MaxFrameSize)},
	}
	for _, p := range nonNegative {
		if p.v < 0 {
			return fmt.Errorf("bad -%s: must not be negative", p.name)
		}
	}
	// RFC 9113 section 6.5.2: SETTINGS_MAX_FRAME_SIZE is between 2^14
	// and 2^24-1; 0 keeps the default.
	if f := cfg.limits.MaxFrameSize; f != 0 && (f < 1<<14 || f > 1<<24-1) {
		return fmt.Errorf("bad -http2-max-frame-size %d: HTTP/2 allows 16384 to 16777215", f)
	}
	cfg.deriveLimits()
	if err := cfg.kafka.check(); err != nil {
		return fmt.Errorf("bad -kafka-* flags: %w", err)
	}
	for _, e := range cfg.extensions {
		if err := e.validate(cfg); err != nil {
			return err
		}
	}
	return nil
}

func serve(args []string, stdout, stderr io.Writer) int {
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sections := newFlagSections(fs)
	registerServeFlags(sections, &cfg)
	if code, ok := parseSectionFlags(sections, args, stdout, stderr); !ok {
		return code
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(stderr, "otlp-lite serve: %s\n", redact.Line(err.Error()))
		return 2
	}
	cfg.effective = sections.effective()
	logger, err := newLogger(stderr, cfg.logFormat, cfg.level)
	if err != nil {
		fmt.Fprintf(stderr, "otlp-lite serve: %v\n", err)
		return 2
	}
	// Libraries that log through slog's default (the Kafka client) use
	// the same handler.
	slog.SetDefault(logger)
	logEffectiveConfig(logger, cfg.effective)
	if cfg.memLimit > 0 {
		debug.SetMemoryLimit(cfg.memLimit)
		logger.Debug("memory limit set", "bytes", cfg.memLimit)
	}
	if err := runServer(cfg, logger); err != nil {
		logger.Error("server failed", "err", err)
		return 1
	}
	return 0
}

// logEffectiveConfig logs the configuration serve runs with, secrets
// redacted, as one info line: every flag's value in the group config, and
// which flags came from the command line and which from the environment.
func logEffectiveConfig(logger *slog.Logger, entries []configEntry) {
	var values []any
	var fromFlags, fromEnv []string
	for _, e := range entries {
		values = append(values, slog.String(e.Flag, e.Value))
		switch e.Source {
		case "flag":
			fromFlags = append(fromFlags, e.Flag)
		case "env":
			fromEnv = append(fromEnv, e.Env)
		}
	}
	logger.Info("effective configuration", "set_by_flags", strings.Join(fromFlags, ","),
		"set_by_env", strings.Join(fromEnv, ","), slog.Group("config", values...))
}

func openSink(cfg serveConfig, logger *slog.Logger, reg *metrics.Set) (storage.Sink, error) {
	if cfg.storageKind == "disk" {
		// otlplite_storage_sync_seconds: duration of each fsync of a
		// batch of records (group commit), per signal.
		var bySignal [otlp.MaxSignal + 1]*metrics.PrometheusHistogram
		for _, sig := range storage.Signals {
			bySignal[sig] = reg.GetOrCreatePrometheusHistogramExt(`otlplite_storage_sync_seconds{signal="`+sig.String()+`"}`, handler.LatencyBuckets)
		}
		cfg.disk.observeSync = func(sig storage.Signal, d time.Duration) { bySignal[sig].Update(d.Seconds()) }
	}
	switch cfg.storageKind {
	case "disk":
		st, err := cfg.disk.open(cfg.dataDir, logger, func(o *disk.Options) error {
			for _, e := range cfg.extensions {
				if hook, ok := e.(diskOptionsHook); ok {
					if err := hook.diskOptions(&cfg, o); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return st, nil
	case "kafka":
		return cfg.kafka.open(reg)
	case "discard":
		return &discard.Sink{}, nil
	}
	return nil, fmt.Errorf("unknown -storage %q: want disk, kafka or discard", cfg.storageKind)
}

// runServer runs the receiver until SIGINT or SIGTERM, then shuts down
// gracefully: readiness fails, health turns NOT_SERVING, export streams
// rotate, GOAWAY goes to every connection, requests in flight finish
// (bounded by -shutdown-timeout), and the store is synced and closed. A
// second signal exits at once.
func runServer(cfg serveConfig, logger *slog.Logger) error {
	tlsConfig, err := serverTLSConfig(cfg.tls, func(err error) {
		if err != nil {
			logger.Error("cannot reload TLS certificate; keeping the old one", "err", err)
		} else {
			logger.Info("TLS certificate reloaded")
		}
	})
	if err != nil {
		return err
	}
	reg := metrics.NewSet() // the binary's own set, not the library's global one
	stop := make(chan struct{})
	defer close(stop)
	var auth handler.Authenticator
	if cfg.authTokenFile != "" {
		tf, err := handler.NewTokenFile(cfg.authTokenFile)
		if err != nil {
			return err
		}
		n, _ := tf.Tokens()
		logger.Info("token file loaded", "path", cfg.authTokenFile, "tokens", n)
		go tf.Watch(5*time.Second, stop, func(n int, err error) {
			if err != nil {
				logger.Error("cannot reload the token file; keeping the tokens loaded before", "tokens", n, "err", err)
				return
			}
			logger.Info("token file reloaded", "path", cfg.authTokenFile, "tokens", n)
		})
		reg.NewGauge("otlplite_auth_tokens", func() float64 {
			n, _ := tf.Tokens()
			return float64(n)
		})
		// As Prometheus' own config_last_reload_success_timestamp_seconds:
		// an alert on its age finds a token file that stopped loading.
		reg.NewGauge("otlplite_auth_token_file_last_reload_success_timestamp_seconds", func() float64 {
			_, at := tf.Tokens()
			return float64(at.UnixNano()) / 1e9
		})
		auth = tf
	}

	// Listen before opening storage: a busy port is found at once.
	addrs := []string{cfg.grpcAddr}
	if cfg.httpAddr != "" && cfg.httpAddr != cfg.grpcAddr {
		addrs = append(addrs, cfg.httpAddr)
	}
	listeners, err := server.Listen(addrs...)
	if err != nil {
		return err
	}
	closeListeners := func() {
		for _, l := range listeners {
			l.Close()
		}
	}
	var adminLn net.Listener
	if cfg.adminAddr != "" {
		if adminLn, err = net.Listen("tcp", cfg.adminAddr); err != nil {
			closeListeners()
			return fmt.Errorf("cannot listen on admin address %s: %w", cfg.adminAddr, err)
		}
	}

	// abandon releases what was opened so far when serve cannot start.
	var sink storage.Sink
	abandon := func(err error) error {
		closeListeners()
		if adminLn != nil {
			adminLn.Close()
		}
		if sink != nil {
			sink.Close()
		}
		return err
	}
	if sink, err = openSink(cfg, logger, reg); err != nil {
		return abandon(err)
	}
	tenants, err := cfg.tenants.config(logger, reg, stop)
	if err != nil {
		return abandon(err)
	}
	var metadataKeys []string
	if cfg.storageKind == "kafka" {
		// Only the request headers the Kafka options read reach the
		// sink; none, at no cost, unless some are configured.
		metadataKeys = cfg.kafka.metadataKeys()
	}
	h := handler.New(handler.Config{
		MetadataKeys:         metadataKeys,
		Tenants:              tenants,
		Sink:                 sink,
		Logger:               logger,
		MaxRecvMsgSize:       cfg.maxRecvMsgSize,
		Decode:               otlpdecode.Options{ValidateUTF8: cfg.validateUTF8},
		RetryDelay:           cfg.retryDelay,
		BodyReadTimeout:      cfg.bodyReadTimeout,
		ResponseWriteTimeout: cfg.responseWriteTimeout,
		Stream:               cfg.stream,
		Admission:            admissionConfig(cfg),
		Auth:                 auth,
		Metrics:              reg,
		CORS: handler.CORSConfig{
			AllowedOrigins: splitList(cfg.corsOrigins),
			AllowedHeaders: splitList(cfg.corsHeaders),
			MaxAge:         cfg.corsMaxAge,
		},
	})
	store, _ := sink.(*disk.Store)
	if store != nil {
		registerDiskMetrics(reg, store)
	}
	env := &serveEnv{logger: logger, metrics: reg, sink: sink, store: store, handler: h, dataDir: cfg.dataDir}
	running, err := startExtensions(&cfg, env)
	if err != nil {
		return abandon(err)
	}
	srv := server.New(h, server.Config{TLS: tlsConfig, Limits: &cfg.limits, Metrics: reg, Logger: logger})

	// Catch signals before announcing that we serve: a SIGTERM right after
	// the "serving" line must shut down gracefully, not kill the process.
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)

	errc := make(chan error, len(listeners)+1)
	for _, ln := range listeners {
		go func() { errc <- srv.Serve(ln) }()
	}
	var admin *adminServer
	var adminSrv *http.Server
	if adminLn != nil {
		var mux http.Handler
		admin, mux = newAdminServer(reg, cfg.adminPprof)
		withConfig := http.NewServeMux()
		withConfig.Handle("GET /config", configHandler(cfg.effective))
		page := newStatusPage(reg, serveStatusSettings(&cfg, listeners, adminLn, tlsConfig != nil, auth != nil), admin.ready.Load)
		go page.run(stop) // stopped when runServer returns
		page.register(withConfig)
		withConfig.Handle("/", mux)
		adminSrv = &http.Server{Handler: withConfig, ReadHeaderTimeout: 10 * time.Second}
		go adminSrv.Serve(adminLn)
		admin.ready.Store(true)
	}
	attrs := []any{"grpc_addr", listeners[0].Addr().String()}
	if len(listeners) > 1 {
		attrs = append(attrs, "http_addr", listeners[1].Addr().String())
	}
	if adminLn != nil {
		attrs = append(attrs, "admin_addr", adminLn.Addr().String())
	}
	logger.Info("otlp-lite serving", append(attrs, "storage", cfg.storageKind, "data_dir", cfg.dataDir,
		"tls", tlsConfig != nil, "mtls", cfg.tls.clientCAFile != "", "auth", auth != nil, "version", version)...)

	select {
	case err := <-errc:
		stopExtensions(context.Background(), running, logger)
		sink.Close()
		return fmt.Errorf("server stopped: %w", err)
	case s := <-sigc:
		logger.Info("shutting down", "signal", s.String(), "timeout", cfg.shutdownTimeout)
	}
	go func() {
		<-sigc
		logger.Warn("second signal: exiting without waiting")
		os.Exit(1)
	}()

	if admin != nil {
		admin.ready.Store(false)
	}
	sctx, scancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer scancel()
	// Shutdown turns health NOT_SERVING and rotates export streams (the
	// handler's Shutdown), closes the listeners, sends GOAWAY and waits for
	// handlers, so every acknowledged request is written before the store
	// is closed; past the timeout it closes the connections.
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("requests did not finish in time; closing connections", "err", err)
	}
	stopExtensions(sctx, running, logger)
	if err := sink.Close(); err != nil {
		return fmt.Errorf("cannot close storage: %w", err)
	}
	if adminSrv != nil {
		adminSrv.Close()
	}
	logger.Info("stopped")
	return nil
}

// memoryLimit resolves -memory-limit: what the receiver holds is bounded
// by admission (request bytes in flight and waiting), and each admitted
// request exists about twice (its buffers and its storage copy), so the heap
// needs about twice the admission limits plus a margin (48 MiB) for the runtime,
// connections and pools. Without a limit, the garbage collector lets the
// heap reach twice the live data before collecting. 0 means no limit; an
// explicit GOMEMLIMIT wins over the flag.
func memoryLimit(cfg serveConfig) (int64, error) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	switch cfg.memoryLimit {
	case "auto", "":
		return 2*(cfg.admission.RequestLimit+max(cfg.admission.WaitingLimit, 0)) + 48<<20, nil
	case "0", "off":
		return 0, nil
	}
	return parseSize(cfg.memoryLimit)
}

// deriveLimits fills the limits whose flags say "derived": the HTTP/2
// windows, from the admission budget and the connection limit
// (server.WindowFor).
func (cfg *serveConfig) deriveLimits() {
	w := server.WindowFor(cfg.admission.RequestLimit, cfg.limits.MaxConnections)
	if cfg.limits.StreamWindow == 0 {
		cfg.limits.StreamWindow = w
	}
	if cfg.limits.ConnWindow == 0 {
		cfg.limits.ConnWindow = w
	}
}

// admissionConfig is the handler's admission config: the flags, plus the
// HTTP/2 stream window, which an export stream that waits leaves unread
// and which is charged to the waiting budget for the wait.
func admissionConfig(cfg serveConfig) handler.AdmissionConfig {
	a := cfg.admission
	a.StreamWindow = int64(cfg.limits.StreamWindow)
	return a
}

// splitList splits a comma-separated flag value, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// newLogger returns the server's logger in format (text or json) at level.
// Every value is kept on one line: an error joined from several (errors.Join
// separates them with newlines) has its newlines replaced by "; ", so a log
// line is never split and logfmt never shows a literal \n.
func newLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: func(g []string, a slog.Attr) slog.Attr { return redactAttr(oneLineAttr(g, a)) }}
	switch format {
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("bad -log-format %q: want text or json", format)
}

func oneLineAttr(_ []string, a slog.Attr) slog.Attr {
	var s string
	switch v := a.Value.Any().(type) {
	case error:
		s = v.Error()
	case string:
		s = v
	default:
		return a
	}
	changed := false
	if strings.ContainsAny(s, "\r\n") {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), "; ")
		changed = true
	}
	if len(s) > maxLogValue {
		s = cutLogValue(s)
		changed = true
	}
	if changed {
		return slog.String(a.Key, s)
	}
	return a
}

// maxLogValue bounds each value of a log line, in bytes: values can quote
// what a client or a destination sent (a refused path, a peer's error), and
// the refusal log's rate limit bounds lines, not bytes: 60 requests of 4 KB
// of HPACK-compressed headers wrote 300 MB of log before this bound. 4 KiB
// keeps any error this process writes whole (the longest, a joined flag
// error, is under 1 KiB) and a Status message at grpcwire's MaxMessage.
const maxLogValue = 4 << 10

// cutLogValue cuts s to maxLogValue bytes at a UTF-8 boundary and says how
// long it was.
func cutLogValue(s string) string {
	n := maxLogValue
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// kafkaFlags are the -kafka-* flags of the Kafka sink (storage_kafka.go,
// or storage_nokafka.go without Kafka): check validates them at parse
// time, open opens the sink for -storage kafka with its metrics in reg,
// metadataKeys lists the request headers the sink reads
// (handler.Config.MetadataKeys).
type kafkaFlags struct {
	check        func() error
	open         func(reg *metrics.Set) (storage.Sink, error)
	metadataKeys func() []string
}
