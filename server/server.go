// Package server is the HTTP server otlp-lite serves its handler with: what
// the otlp-lite binary wraps around handler.Handler, for embedders to get
// the same server in a few lines.
//
// A Server serves HTTP/1.1 and HTTP/2 on every listener — h2c with prior
// knowledge (how gRPC clients connect) in clear text, or h2 by ALPN with
// TLS — with:
//
//   - a buffered reader and a coalescing writer under every connection
//     (read and write syscalls were 14% and 22% of the server's CPU without
//     them; see bufconn.go and coalesce.go);
//   - the HTTP/1.1 and HTTP/2 limits of Limits, each default with its reason;
//   - a connection tracker: open and accepted connections as metrics, and
//     Limits.MaxConnectionAge with its deadline jittered once per
//     connection, so L7 balancers rebalance;
//   - TLS with certificate reload and mTLS (LoadTLS);
//   - Unix socket listeners (Listen, "unix:PATH") and the PROXY protocol
//     from trusted proxies (Config.ProxyProtocol);
//   - a graceful Shutdown.
//
// The package takes any http.Handler plus a shutdown hook (Config.OnShutdown,
// or the handler's own Shutdown method) and does not import package handler:
// the dependencies go one way, cmd → server → http.Handler, so handler never
// learns about the server around it, and the server can front other handlers
// (a mux with the OTLP handler and your own routes, a different receiver).
// The hook is all graceful shutdown needs from the handler: a gRPC server has
// long streams (export streams, health Watch) that net/http's Shutdown would
// wait for until its deadline; the hook ends them.
//
// Embedding (see Example):
//
//	h := handler.New(handler.Config{Sink: sink})
//	srv := server.New(h, server.Config{})
//	go srv.Serve(ln)
//	...
//	srv.Shutdown(ctx) // then close sink
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Config configures a Server. The zero value serves clear text with
// DefaultLimits.
type Config struct {
	// Addrs are the addresses ListenAndServe listens on: "host:port", or
	// "unix:PATH" for a Unix socket (see Listen). Serve does not use them.
	Addrs []string
	// TLS, when set, makes every listener speak TLS, HTTP/2 negotiated by
	// ALPN ("h2") and HTTP/1.1; it must provide a certificate
	// (Certificates, GetCertificate or GetConfigForClient). LoadTLS builds
	// one from PEM files, reloaded when they change, with optional mTLS.
	// Nil serves h2c and HTTP/1.1 in clear text.
	TLS *tls.Config
	// Limits are the HTTP/1.1 and HTTP/2 limits; nil means DefaultLimits().
	Limits *Limits
	// OnShutdown is called first by Shutdown, before listeners close and
	// connections get GOAWAY. It should make the handler stop holding
	// requests open (report NOT_SERVING to health checks, end long-lived
	// streams so clients reconnect elsewhere) and return without waiting
	// for them. Nil means the handler's own Shutdown() method, if it has
	// one (*handler.Handler has); set it when the handler is wrapped.
	OnShutdown func()
	// Metrics is the VictoriaMetrics/metrics set that receives the
	// connection metrics (otlplite_open_connections,
	// otlplite_connections_total, otlplite_connections_dropped_total); nil
	// keeps them in a private set. The global default set is never used.
	Metrics *metrics.Set
	// Logger receives net/http's connection errors (failed TLS handshakes,
	// malformed requests) and PROXY header refusals at debug level. Nil
	// means slog.Default().
	Logger *slog.Logger
	// ProxyProtocol, when it trusts any peer, makes every listener take
	// PROXY protocol headers from those peers, and refuse them from any
	// other (see ProxyProtocol). The zero value leaves the protocol off:
	// a PROXY header is then bytes net/http refuses as a bad request.
	ProxyProtocol ProxyProtocol
}

// Server serves one http.Handler on any number of listeners. Its methods
// may be called concurrently.
type Server struct {
	http       *http.Server
	tls        *tls.Config
	addrs      []string
	onShutdown func()

	conns       *connTracker
	maxConns    int
	proxy       *proxyAcceptor // nil: the PROXY protocol is off
	trackerCtx  context.Context
	stopTracker context.CancelFunc
	startOnce   sync.Once

	mu     sync.Mutex
	served []net.Addr
}

// New returns a Server for h; it does not listen yet (see Serve,
// ListenAndServe).
func New(h http.Handler, cfg Config) *Server {
	limits := DefaultLimits()
	if cfg.Limits != nil {
		limits = *cfg.Limits
	}
	reg := cfg.Metrics
	if reg == nil {
		reg = metrics.NewSet()
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	onShutdown := cfg.OnShutdown
	if sh, ok := h.(interface{ Shutdown() }); ok && onShutdown == nil {
		onShutdown = sh.Shutdown
	}
	conns := newConnTracker(limits.MaxConnectionAge, limits.MaxConnectionAgeGrace, reg)
	srv := newHTTPServer(conns.wrap(h), limits, cfg.TLS != nil, conns)
	srv.TLSConfig = cfg.TLS
	srv.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelDebug)
	var proxy *proxyAcceptor
	if cfg.ProxyProtocol.Enabled() {
		proxy = newProxyAcceptor(cfg.ProxyProtocol, reg, logger)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		proxy:       proxy,
		http:        srv,
		tls:         cfg.TLS,
		addrs:       cfg.Addrs,
		onShutdown:  onShutdown,
		conns:       conns,
		maxConns:    limits.MaxConnections,
		trackerCtx:  ctx,
		stopTracker: cancel,
	}
}

// Serve accepts connections on ln and serves them until Shutdown or Close;
// it may be called for several listeners at once. It always returns a
// non-nil error: http.ErrServerClosed after Shutdown or Close, else the
// error that stopped accepting. Serve takes ownership of ln and closes it.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.served = append(s.served, ln.Addr())
	s.mu.Unlock()
	return s.serve(ln)
}

func (s *Server) serve(ln net.Listener) error {
	// The tracker's goroutine starts with the first listener, so a Server
	// that never serves has none to stop.
	s.startOnce.Do(func() { go s.conns.closeExpired(s.trackerCtx) })
	if ul, ok := ln.(*net.UnixListener); ok {
		// A Unix listener not from Listen: its clients get addresses
		// of their own all the same.
		ln = unixPeerListener{ul}
	}
	ln = bufferedListener{connLimitListener{ln, s.conns, s.maxConns}}
	if s.proxy != nil {
		// Under TLS too: the header comes before the handshake.
		ln = proxyListener{ln, s.proxy}
	}
	if s.tls != nil {
		// ServeTLS adds "h2" to the ALPN protocols.
		return s.http.ServeTLS(ln, "", "")
	}
	return s.http.Serve(ln)
}

// ListenAndServe listens on every Config.Addrs — on all of them or, if one
// fails, on none — and serves them until Shutdown or Close. It returns like
// Serve, when the first listener stops. To learn the ports of ":0"
// addresses, or to bind before the handler exists, use Listen and Serve.
func (s *Server) ListenAndServe() error {
	if len(s.addrs) == 0 {
		return errors.New("server: ListenAndServe with no Config.Addrs")
	}
	lns, err := Listen(s.addrs...)
	if err != nil {
		return err
	}
	s.mu.Lock()
	for _, ln := range lns {
		s.served = append(s.served, ln.Addr())
	}
	s.mu.Unlock()
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { errc <- s.serve(ln) }()
	}
	return <-errc
}

// Addrs returns the addresses of the listeners served so far, in the order
// Serve was called or as in Config.Addrs (with the ports chosen for ":0").
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]net.Addr(nil), s.served...)
}

// Shutdown stops the server gracefully: it calls the OnShutdown hook (health
// turns NOT_SERVING, export streams rotate), closes the listeners, sends
// GOAWAY on HTTP/2 connections (Connection: close on HTTP/1.1 ones), and
// waits until every request in flight has finished and its response been
// written. Then it returns nil; the caller may close what the handler writes
// to (its storage.Sink).
//
// An HTTP/2 connection is closed a second after its GOAWAY unless the client
// closes it first (net/http leaves the client time to read the GOAWAY), so
// Shutdown takes about a second while any client keeps its connection.
//
// If ctx ends first, Shutdown closes every connection still open and returns
// ctx's error; handlers still running then see their request's context
// cancelled, but may not have returned yet.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.onShutdown != nil {
		s.onShutdown()
	}
	err := s.http.Shutdown(ctx)
	if err != nil {
		s.http.Close()
	}
	s.stopTracker()
	return err
}

// Close closes the listeners and every connection at once, without the
// graceful sequence of Shutdown (the OnShutdown hook is not called) and
// without waiting for handlers.
func (s *Server) Close() error {
	s.stopTracker()
	return s.http.Close()
}

// newHTTPServer returns the http.Server behind a Server: HTTP/1.1 and h2c,
// or HTTP/1.1 and h2 (ALPN) with TLS.
//
// We use net/http's built-in HTTP/2 (Go 1.24+) rather than x/net/http2: it
// serves h2c with prior knowledge (how every gRPC client connects) and
// HTTP/1.1 on the same port without the deprecated Upgrade dance, exposes
// the same limits through http.HTTP2Config, and is one HTTP/2
// implementation less to keep in step. Measured with the decode benchmarks
// in bench/, the transport is not where our CPU goes.
//
// x/net/http2's Server (ServeConn, ConfigureServer) would not cost a unary
// call less: net/http's HTTP/2 server is x/net/http2 bundled, and what a
// profile of bench/cmd/sidebyside at 100 spans per request charges to
// HTTP/2 (issue 26) is the same code in x/net v0.62.0: a goroutine started
// for every HEADERS frame written (writeResHeaders.staysWithinBuffer is
// false: response headers and trailers, two per unary response, whose
// stacks grow in the HPACK encoder, 6% of server CPU), a WINDOW_UPDATE
// for every 4 KiB a handler reads (inflowMinRefresh), and a message to
// the connection's goroutine per body read and per frame a handler
// writes. Not measured side by side for that reason.
func newHTTPServer(h http.Handler, l Limits, withTLS bool, conns *connTracker) *http.Server {
	srv := &http.Server{
		Handler:   h,
		Protocols: new(http.Protocols),
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          l.MaxConcurrentStreams,
			MaxReadFrameSize:              l.MaxFrameSize,
			MaxReceiveBufferPerStream:     l.StreamWindow,
			MaxReceiveBufferPerConnection: l.ConnWindow,
			WriteByteTimeout:              l.WriteByteTimeout,
			// Answer pings and find dead peers on idle connections.
			SendPingTimeout: 30 * time.Second,
			PingTimeout:     15 * time.Second,
		},
		// ReadHeaderTimeout bounds the first bytes of a connection and
		// HTTP/1 request headers. Go 1.25.13 and 1.26.x before the fix of
		// golang/go#80876 left it armed on h2c connections and killed
		// healthy ones; go.mod requires a release without that bug and
		// TestH2CConnectionOutlivesReadHeaderTimeout guards it.
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ConnState:         conns.track,
		ConnContext:       conns.connContext,
	}
	srv.HTTP2.MaxDecoderHeaderTableSize = 4096
	srv.Protocols.SetHTTP1(true)
	if withTLS {
		srv.Protocols.SetHTTP2(true)
	} else {
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	return srv
}
