// Package service is an otlp-lite receiver as a library: a Config (every
// flag of `otlp-lite serve` is one of its fields) and a Service that
// composes the listeners, the pipeline (package handler), the storage (the
// disk log, Kafka, discard, or the caller's storage.Sink), retention,
// forwarding, the Kafka source and the admin listener, and starts and
// stops them in the order that keeps every acknowledged request:
//
//	cfg := service.DefaultConfig()
//	cfg.GRPCAddr, cfg.HTTPAddr, cfg.AdminAddr = "127.0.0.1:4317", "", ""
//	cfg.DataDir = dir
//	svc, err := service.New(cfg)
//	...
//	err = svc.Start(ctx)
//	...
//	err = svc.Shutdown(ctx) // every acknowledged request is in storage
//
// The link between retention and forwarding (forwarding cursors hold the
// disk log's segments; what retention deletes before a destination got it
// is counted) is made here, never by the caller.
package service

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/admin"
	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/server"
	"github.com/otlp-lite/otlp-lite/stefreceiver"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/discard"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// tokenReloadInterval is how often the token file is checked for changes:
// a revoked token stops working within it.
const tokenReloadInterval = 5 * time.Second

// Service is a running receiver. New checks its Config, Start opens and
// serves, Shutdown stops; a Service is started and shut down once.
type Service struct {
	cfg     Config
	logger  *slog.Logger
	metrics *metrics.Set
	limits  server.Limits
	stop    chan struct{} // closed at Shutdown: the file watchers and the status page's ring

	tls       *tls.Config
	auth      handler.Authenticator
	listeners []net.Listener
	adminLn   net.Listener
	sink      storage.Sink     // nil when the storage is an ItemSink
	items     storage.ItemSink // Config.Items, or nil
	store     *disk.Store
	handler   *handler.Handler
	srv       *server.Server
	fwd       *forward.Forwarder
	kafka     *kafkaSource
	admin     *admin.Server
	adminSrv  *http.Server
	errc      chan error

	started bool // Start was called past its context check: never again
	// preStart holds the names in the metrics set before Start: what a
	// failed Start registered beyond them is unregistered again, so that
	// a new Service on the same Config.Metrics can start.
	preStart map[string]bool
	shutdown sync.Once
	err      error
}

// New checks cfg (Config.Validate) and returns the Service it configures,
// not yet started: nothing is opened.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, logger: cfg.Logger, metrics: cfg.Metrics, limits: cfg.DerivedLimits(), stop: make(chan struct{})}
	if s.logger == nil {
		s.logger, _ = NewLogger(os.Stderr, cfg.LogFormat, cfg.LogLevel) // checked by Validate
	}
	if s.metrics == nil {
		s.metrics = metrics.NewSet() // the receiver's own set, not the library's global one
	}
	return s, nil
}

// Start opens the listeners (first: a busy port is found at once), the
// storage (with retention held by forwarding cursors), the tenancy, the
// pipeline, forwarding and the Kafka source, then serves. On an error,
// what was opened is closed again. ctx is checked once, before anything
// opens; the parts run until Shutdown.
func (s *Service) Start(ctx context.Context) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.started {
		// A failed Start closed what it opened, its stop channel too: a
		// Service is started once; make a new one with New to try again.
		return errors.New("service: Start called twice")
	}
	s.started = true
	s.preStart = make(map[string]bool)
	for _, name := range s.metrics.ListMetricNames() {
		s.preStart[name] = true
	}
	cfg, logger := s.cfg, s.logger
	if cfg.Effective != nil {
		logEffectiveConfig(logger, cfg.Effective)
	}
	if s.tls, err = cfg.serverTLS(func(err error) {
		if err != nil {
			logger.Error("cannot reload TLS certificate; keeping the old one", "err", err)
		} else {
			logger.Info("TLS certificate reloaded")
		}
	}); err != nil {
		return err
	}
	if err := s.openAuth(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			s.abandon()
		}
	}()
	addrs := []string{cfg.GRPCAddr}
	if cfg.HTTPAddr != "" && cfg.HTTPAddr != cfg.GRPCAddr {
		addrs = append(addrs, cfg.HTTPAddr)
	}
	if s.listeners, err = server.Listen(addrs...); err != nil {
		return err
	}
	if cfg.AdminAddr != "" {
		if s.adminLn, err = net.Listen("tcp", cfg.AdminAddr); err != nil {
			return fmt.Errorf("cannot listen on admin address %s: %w", cfg.AdminAddr, err)
		}
	}
	if err := s.openSink(); err != nil {
		return err
	}
	tenants, err := cfg.tenantConfig(logger, s.metrics, s.stop)
	if err != nil {
		return err
	}
	var metadataKeys []string
	if cfg.storageKind() == "kafka" {
		// Only the request headers the Kafka options read reach the
		// sink; none, at no cost, unless some are configured.
		metadataKeys = cfg.Kafka.metadataKeys()
	}
	s.handler = handler.New(handler.Config{
		MetadataKeys:         metadataKeys,
		Tenants:              tenants,
		Sink:                 s.sink,
		Items:                s.items,
		Logger:               logger,
		MaxRecvMsgSize:       cfg.MaxRecvMsgSize,
		Decode:               otlpdecode.Options{ValidateUTF8: cfg.ValidateUTF8},
		RetryDelay:           cfg.RetryDelay,
		BodyReadTimeout:      cfg.BodyReadTimeout,
		ResponseWriteTimeout: cfg.ResponseWriteTimeout,
		Stream:               cfg.Stream,
		Admission:            cfg.admission(s.limits),
		Dedup:                cfg.dedup(),
		Auth:                 s.auth,
		Metrics:              s.metrics,
		CORS: handler.CORSConfig{
			AllowedOrigins: splitList(cfg.CORSAllowedOrigins),
			AllowedHeaders: splitList(cfg.CORSAllowedHeaders),
			MaxAge:         cfg.CORSMaxAge,
		},
	})
	if s.store != nil {
		registerDiskMetrics(s.metrics, s.store)
	}
	if err := s.startForwarding(); err != nil {
		return err
	}
	if s.kafka, err = cfg.startKafkaSource(s.handler, s.metrics, logger); err != nil {
		return err
	}
	// STEF/gRPC (STEFDestination/Stream) on the same ports, into the same
	// pipeline; its streams rotate at shutdown with the handler's.
	// STEF streams pass the handler's gates (auth, stream bound, tenant,
	// metadata keys) like the export stream.
	var stef *stefreceiver.Receiver
	if cfg.STEF {
		stef = stefreceiver.New(s.handler.Pipeline(), stefreceiver.Config{Metrics: s.metrics})
		s.handler.Mount(stefreceiver.Path, stef)
	}
	s.srv = server.New(s.handler, server.Config{TLS: s.tls, Limits: &s.limits, Metrics: s.metrics, Logger: logger,
		OnShutdown: func() {
			s.handler.Shutdown()
			if stef != nil {
				stef.Shutdown()
			}
		}})
	s.errc = make(chan error, len(s.listeners))
	for _, ln := range s.listeners {
		go func() { s.errc <- s.srv.Serve(ln) }()
	}
	if s.adminLn != nil {
		s.admin = admin.New(admin.Config{Metrics: s.metrics, Pprof: cfg.AdminPprof, Settings: s.statusSettings()})
		go s.admin.Run(s.stop)
		s.adminSrv = &http.Server{Handler: s.admin.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go s.adminSrv.Serve(s.adminLn)
		s.admin.SetReady(true)
	}
	attrs := []any{"grpc_addr", s.GRPCAddr()}
	if len(s.listeners) > 1 {
		attrs = append(attrs, "http_addr", s.HTTPAddr())
	}
	if s.adminLn != nil {
		attrs = append(attrs, "admin_addr", s.AdminAddr())
	}
	logger.Info("otlp-lite serving", append(attrs, "storage", cfg.storageKind(), "data_dir", cfg.DataDir,
		"tls", s.tls != nil, "mtls", cfg.TLSClientCA != "", "auth", s.auth != nil, "version", cfg.Version)...)
	return nil
}

// openAuth loads the token file and watches it until Shutdown.
func (s *Service) openAuth() error {
	path, logger := s.cfg.AuthTokenFile, s.logger
	if path == "" {
		return nil
	}
	tf, err := handler.NewTokenFile(path)
	if err != nil {
		return err
	}
	n, _ := tf.Tokens()
	logger.Info("token file loaded", "path", path, "tokens", n)
	go tf.Watch(tokenReloadInterval, s.stop, func(n int, err error) {
		if err != nil {
			logger.Error("cannot reload the token file; keeping the tokens loaded before", "tokens", n, "err", err)
			return
		}
		logger.Info("token file reloaded", "path", path, "tokens", n)
	})
	s.metrics.NewGauge("otlplite_auth_tokens", func() float64 {
		n, _ := tf.Tokens()
		return float64(n)
	})
	// As Prometheus' own config_last_reload_success_timestamp_seconds:
	// an alert on its age finds a token file that stopped loading.
	s.metrics.NewGauge("otlplite_auth_token_file_last_reload_success_timestamp_seconds", func() float64 {
		_, at := tf.Tokens()
		return float64(at.UnixNano()) / 1e9
	})
	s.auth = tf
	return nil
}

// closeStorage closes the storage opened by openSink, whichever it is.
func (s *Service) closeStorage() error {
	switch {
	case s.items != nil:
		return s.items.Close()
	case s.sink != nil:
		return s.sink.Close()
	}
	return nil
}

// openSink opens the storage: the caller's Sink, or the one Storage names.
// The disk log is opened with its retention held by forwarding cursors
// (forward.Hold), whether or not this run forwards.
func (s *Service) openSink() error {
	cfg := s.cfg
	var err error
	switch cfg.storageKind() {
	case "sink":
		s.sink = cfg.Sink
	case "items":
		s.items = cfg.Items
	case "disk":
		opts, err := cfg.Disk.Options()
		if err != nil {
			return err
		}
		// The link between retention and forwarding, made here so that
		// no embedder can leave it out: forwarding cursors hold segments
		// against the age limit, and what the size limit deletes before a
		// destination got it is counted. It applies with or without
		// destinations: a cursor left by an earlier run still holds its
		// data until forward-remove.
		forward.Hold(&opts, s.metrics)
		opts.Logger = s.logger
		opts.ObserveSync = observeSync(s.metrics)
		if s.store, err = disk.Open(cfg.DataDir, opts); err != nil {
			return err
		}
		s.sink = s.store
	case "kafka":
		s.sink, err = cfg.Kafka.openKafkaSink(s.metrics)
	case "discard":
		s.sink = &discard.Sink{}
	}
	return err
}

// startForwarding starts the forwarders of Forward.Destinations, reading
// the disk log from each destination's cursor.
func (s *Service) startForwarding() error {
	dests := s.cfg.Forward.Destinations
	if len(dests) == 0 {
		return nil
	}
	if s.store == nil {
		return errors.New("-forward needs -storage disk")
	}
	opts, err := s.cfg.Disk.Options()
	if err != nil {
		return err
	}
	bound, err := s.cfg.deadLetterBound(opts.MaxBytes)
	if err != nil {
		return err
	}
	s.fwd, err = forward.New(forward.Options{DataDir: s.cfg.DataDir, Store: s.store, Metrics: s.metrics, Logger: s.logger, DeadLetter: bound}, dests)
	return err
}

// abandon releases what Start opened when it cannot finish.
func (s *Service) abandon() {
	s.stopParts(context.Background())
	for _, l := range s.listeners {
		l.Close()
	}
	if s.adminLn != nil {
		s.adminLn.Close()
	}
	// The storage the Service opened is closed; a caller's Sink or Items
	// stays the caller's until a Start succeeds (it may retry with it).
	if s.cfg.Sink == nil && s.cfg.Items == nil {
		s.closeStorage()
	}
	close(s.stop)
	for _, name := range s.metrics.ListMetricNames() {
		if !s.preStart[name] {
			s.metrics.UnregisterMetric(name)
		}
	}
}

// stopParts stops the Kafka source, then forwarding: the reverse of their
// start.
func (s *Service) stopParts(ctx context.Context) {
	if s.kafka != nil {
		if err := s.kafka.stop(ctx); err != nil {
			s.logger.Warn("the Kafka source did not stop cleanly", "err", err)
		}
		s.kafka = nil
	}
	if s.fwd != nil {
		// Records in flight get a moment to be acknowledged and every
		// cursor is committed; what is left is sent after the next start.
		if err := s.fwd.Close(); err != nil {
			s.logger.Warn("forwarding did not stop cleanly", "err", err)
		}
		s.fwd = nil
	}
}

// Shutdown stops the receiver gracefully: readiness fails, health turns
// NOT_SERVING, export streams rotate, GOAWAY goes to every connection,
// requests in flight finish (until ctx ends: then the connections are
// closed), so that every acknowledged request is written; then the Kafka
// source and forwarding stop, and the storage is synced and closed.
// Later calls return the first one's result.
// A Shutdown before Start succeeded is refused without latching: the
// Shutdown after a later Start still stops the receiver.
func (s *Service) Shutdown(ctx context.Context) error {
	if s.srv == nil {
		return errors.New("service: Shutdown before Start succeeded")
	}
	s.shutdown.Do(func() { s.err = s.doShutdown(ctx) })
	return s.err
}

func (s *Service) doShutdown(ctx context.Context) error {
	defer close(s.stop)
	if s.admin != nil {
		s.admin.SetReady(false)
	}
	if err := s.srv.Shutdown(ctx); err != nil {
		s.logger.Warn("requests did not finish in time; closing connections", "err", err)
	}
	// A listener whose Serve goroutine had not yet started is closed by
	// it only when it runs: closed here, the ports are free on return.
	for _, l := range s.listeners {
		l.Close()
	}
	s.stopParts(ctx)
	err := s.closeStorage()
	// The admin listener serves /metrics until the storage is closed, and
	// is released even when that fails: the caller's process goes on.
	if s.adminSrv != nil {
		s.adminSrv.Close()
		// Closed here too: Serve, on its own goroutine, may not have
		// taken the listener yet, and would close it only later.
		s.adminLn.Close()
	}
	if err != nil {
		return fmt.Errorf("cannot close storage: %w", err)
	}
	s.logger.Info("stopped")
	return nil
}

// Err receives the error of a listener that stopped serving on its own
// (not by Shutdown): the receiver is then not serving, and the caller
// should shut it down.
func (s *Service) Err() <-chan error { return s.errc }

// GRPCAddr is the OTLP/gRPC listener's address as bound (a :0 port
// resolved); "" before Start.
func (s *Service) GRPCAddr() string { return addr(s.listeners, 0) }

// HTTPAddr is the OTLP/HTTP listener's address, or GRPCAddr when it is
// the same listener.
func (s *Service) HTTPAddr() string {
	if len(s.listeners) > 1 {
		return addr(s.listeners, 1)
	}
	return s.GRPCAddr()
}

// AdminAddr is the admin listener's address; "" without one.
func (s *Service) AdminAddr() string {
	if s.adminLn == nil {
		return ""
	}
	return s.adminLn.Addr().String()
}

func addr(ls []net.Listener, i int) string {
	if i >= len(ls) {
		return ""
	}
	return ls[i].Addr().String()
}

// Metrics is the set every part of the receiver registers its metrics in.
func (s *Service) Metrics() *metrics.Set { return s.metrics }

// Handler is the pipeline (OTLP/gRPC, the streaming mode and OTLP/HTTP on
// one http.Handler); nil before Start.
func (s *Service) Handler() *handler.Handler { return s.handler }

// Store is the disk log when the storage is disk, else nil.
func (s *Service) Store() *disk.Store { return s.store }

// Logger is the receiver's logger.
func (s *Service) Logger() *slog.Logger { return s.logger }

// statusSettings is what the status page shows of the configuration: the
// listeners as bound, and the storage's durability and retention.
func (s *Service) statusSettings() admin.Settings {
	cfg := s.cfg
	st := admin.Settings{Storage: cfg.storageKind(), Effective: cfg.Effective, Version: cfg.Version}
	scheme := "h2c and HTTP/1.1"
	if s.tls != nil {
		scheme = "TLS (h2 and HTTP/1.1)"
		if cfg.TLSClientCA != "" {
			scheme = "mTLS (h2 and HTTP/1.1)"
		}
	}
	if s.auth != nil {
		scheme += ", bearer tokens"
	}
	for i, ln := range s.listeners {
		name := "OTLP gRPC + HTTP"
		if i > 0 {
			name = "OTLP HTTP + gRPC"
		}
		st.Listeners = append(st.Listeners, admin.Setting{Name: name, Value: ln.Addr().String() + " · " + scheme})
	}
	if s.adminLn != nil {
		st.Listeners = append(st.Listeners, admin.Setting{Name: "admin", Value: s.adminLn.Addr().String() + " · /metrics /healthz /readyz /config /status.json"})
	}
	if s.store == nil {
		return st
	}
	st.DataDir = cfg.DataDir
	opts, err := cfg.Disk.Options()
	if err != nil {
		return st // New refused it already
	}
	switch opts.Sync {
	case disk.SyncAlways:
		st.Sync = "always: an OK means fsynced"
	case disk.SyncInterval:
		st.Sync = "interval: fsync every " + admin.ShortDuration(opts.SyncInterval) + " (a power loss may lose that window)"
	default:
		st.Sync = "none: left to the operating system"
	}
	var ret []string
	if opts.MaxBytes > 0 {
		ret = append(ret, "at most "+admin.FormatBytes(float64(opts.MaxBytes)))
		st.MaxBytes = opts.MaxBytes
	}
	if opts.MaxAge > 0 {
		ret = append(ret, "at most "+admin.ShortDuration(opts.MaxAge)+" old")
	}
	st.Retention = strings.Join(ret, ", ")
	if st.Retention == "" {
		st.Retention = "none: everything is kept"
	}
	return st
}

// logEffectiveConfig logs the configuration the receiver runs with, as the
// command parsed it (secrets already hidden), as one info line: every
// flag's value in the group config, and which flags came from the command
// line and which from the environment.
func logEffectiveConfig(logger *slog.Logger, entries []admin.ConfigEntry) {
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
