package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/discard"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

type serveConfig struct {
	grpcAddr        string
	httpAddr        string
	corsOrigins     string
	corsHeaders     string
	corsMaxAge      int
	dataDir         string
	storageKind     string
	tlsCert, tlsKey string
	maxRecvMsgSize  int
	validateUTF8    bool
	logLevel        string
	shutdownTimeout time.Duration
	maxStreams      int
	streamWindow    int
	connWindow      int
	stream          handler.StreamConfig
}

func serve(args []string, stderr io.Writer) int {
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.grpcAddr, "grpc-addr", "localhost:4317", "address for OTLP/gRPC (host:port); the OTLP default port is 4317")
	fs.StringVar(&cfg.httpAddr, "http-addr", "localhost:4318", "address for OTLP/HTTP (host:port; empty to disable); the OTLP default port is 4318. Both ports serve both protocols")
	fs.StringVar(&cfg.corsOrigins, "cors-allowed-origins", "", "comma-separated origins allowed to send OTLP/HTTP from browsers: exact, with one wildcard (https://*.example.com), or *; empty disables CORS")
	fs.StringVar(&cfg.corsHeaders, "cors-allowed-headers", "", "comma-separated extra request headers allowed in CORS requests")
	fs.IntVar(&cfg.corsMaxAge, "cors-max-age", 7200, "seconds a browser may cache a CORS preflight answer")
	fs.StringVar(&cfg.dataDir, "data-dir", "./otlp-data", "directory of the disk store")
	fs.StringVar(&cfg.storageKind, "storage", "disk", "where data goes: disk (durable, default) or discard (count and drop, for benchmarks)")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "TLS certificate file (PEM); without it the server speaks h2c (HTTP/2 without TLS)")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fs.IntVar(&cfg.maxRecvMsgSize, "grpc-max-recv-msg-size", grpcwire.DefaultMaxRecvMsgSize, "largest request message in bytes, after decompression (OTLP recommends accepting 64 MiB)")
	fs.BoolVar(&cfg.validateUTF8, "validate-utf8", false, "reject items with invalid UTF-8 in string fields (proto3 requires valid UTF-8; off by default, as in the OpenTelemetry Collector)")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", 15*time.Second, "on SIGTERM, how long in-flight requests may take to finish")
	// 1000 streams: OTLP exporters send few concurrent requests per
	// connection, but a streaming or async client may keep hundreds open;
	// net/http's default of 250 would make them queue.
	fs.IntVar(&cfg.maxStreams, "http2-max-concurrent-streams", 1000, "HTTP/2 concurrent streams per connection")
	// HTTP/2 flow-control windows bound what one stream / connection may
	// have in flight unread. A stream carries at most bandwidth × RTT per
	// window: net/http's defaults (4 MiB per stream, 1 GiB per connection
	// total) would cap a 200 ms link at 20 MiB/s; 16 MiB per stream keeps
	// a 200 ms link at 80 MiB/s, and the connection bound stays far below
	// the admission budget.
	fs.IntVar(&cfg.streamWindow, "http2-stream-window", 16<<20, "HTTP/2 receive window per stream, bytes")
	fs.IntVar(&cfg.connWindow, "http2-conn-window", 64<<20, "HTTP/2 receive window per connection, bytes")
	fs.IntVar(&cfg.stream.MaxInFlight, "stream-max-in-flight", handler.DefaultStreamMaxInFlight, "requests of one export stream processed at once; beyond it the server stops reading the stream (flow-control back-pressure)")
	fs.DurationVar(&cfg.stream.MaxAge, "stream-max-age", handler.DefaultStreamMaxAge, "rotate an export stream after this age (±10% jitter) so clients rebalance; negative disables")
	fs.IntVar(&cfg.stream.MaxRequests, "stream-max-requests", handler.DefaultStreamMaxRequests, "rotate an export stream after this many requests; negative disables")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		fmt.Fprintf(stderr, "serve: bad -log-level: %v\n", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if err := runServer(cfg, logger); err != nil {
		logger.Error("server failed", "err", err)
		return 1
	}
	return 0
}

func openSink(cfg serveConfig) (storage.Sink, error) {
	switch cfg.storageKind {
	case "disk":
		return disk.Open(cfg.dataDir, disk.Options{})
	case "discard":
		return &discard.Sink{}, nil
	}
	return nil, fmt.Errorf("unknown -storage %q: want disk or discard", cfg.storageKind)
}

func runServer(cfg serveConfig, logger *slog.Logger) error {
	if (cfg.tlsCert == "") != (cfg.tlsKey == "") {
		return errors.New("-tls-cert and -tls-key must be given together")
	}
	sink, err := openSink(cfg)
	if err != nil {
		return err
	}
	h := handler.New(handler.Config{
		Sink:           sink,
		Logger:         logger,
		MaxRecvMsgSize: cfg.maxRecvMsgSize,
		Decode:         otlpdecode.Options{ValidateUTF8: cfg.validateUTF8},
		Stream:         cfg.stream,
		CORS: handler.CORSConfig{
			AllowedOrigins: splitList(cfg.corsOrigins),
			AllowedHeaders: splitList(cfg.corsHeaders),
			MaxAge:         cfg.corsMaxAge,
		},
	})

	srv := &http.Server{
		Handler:  h,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
		// net/http's own HTTP/2 (Go 1.24+) serves h2c with prior
		// knowledge, which is how gRPC clients connect, and HTTP/1.1 on
		// the same port; x/net/http2/h2c would add only the deprecated
		// Upgrade dance. One implementation less to keep in step.
		Protocols: new(http.Protocols),
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: cfg.maxStreams,
			// 1 MiB frames (the default is 16 KiB) cut per-frame overhead
			// for large OTLP batches while bounding what one frame makes
			// the server buffer; HTTP/2 allows up to 16 MiB.
			MaxReadFrameSize:              1 << 20,
			MaxReceiveBufferPerStream:     cfg.streamWindow,
			MaxReceiveBufferPerConnection: cfg.connWindow,
		},
		// Bounds the time a client may take to send headers; it does not
		// limit long-lived HTTP/2 connections.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       5 * time.Minute,
		MaxHeaderBytes:    1 << 20,
	}
	srv.Protocols.SetHTTP1(true)
	if cfg.tlsCert != "" {
		srv.Protocols.SetHTTP2(true) // h2 by ALPN
		cert, err := tls.LoadX509KeyPair(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			sink.Close()
			return fmt.Errorf("cannot load TLS key pair: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	} else {
		srv.Protocols.SetUnencryptedHTTP2(true)
	}

	// One server, one handler, two listeners: the gRPC port and the HTTP
	// port each serve both protocols (the handler dispatches on content
	// type), so a client pointed at the "wrong" one still works.
	addrs := []string{cfg.grpcAddr}
	if cfg.httpAddr != "" && cfg.httpAddr != cfg.grpcAddr {
		addrs = append(addrs, cfg.httpAddr)
	}
	var listeners []net.Listener
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			sink.Close()
			return fmt.Errorf("cannot listen on %s: %w", addr, err)
		}
		listeners = append(listeners, ln)
	}
	errc := make(chan error, len(listeners))
	for _, ln := range listeners {
		go func() {
			if cfg.tlsCert != "" {
				errc <- srv.ServeTLS(ln, "", "")
			} else {
				errc <- srv.Serve(ln)
			}
		}()
	}
	attrs := []any{"grpc_addr", listeners[0].Addr().String()}
	if len(listeners) > 1 {
		attrs = append(attrs, "http_addr", listeners[1].Addr().String())
	}
	logger.Info("otlp-lite serving", append(attrs, "storage", cfg.storageKind,
		"data_dir", cfg.dataDir, "tls", cfg.tlsCert != "", "version", version)...)

	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	select {
	case err := <-errc:
		sink.Close()
		return fmt.Errorf("server stopped: %w", err)
	case s := <-sigc:
		logger.Info("shutting down", "signal", s.String(), "timeout", cfg.shutdownTimeout)
	}
	// A second signal exits at once: the operator asked twice.
	go func() {
		<-sigc
		logger.Warn("second signal: exiting without waiting")
		os.Exit(1)
	}()

	h.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	// Shutdown closes the listener, sends GOAWAY on HTTP/2 connections and
	// waits for in-flight requests, so every acknowledged request has been
	// written before the store is closed.
	if err := srv.Shutdown(ctx); err != nil {
		logger.Warn("in-flight requests did not finish in time", "err", err)
		srv.Close()
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("cannot close storage: %w", err)
	}
	logger.Info("stopped")
	return nil
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
