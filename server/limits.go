package server

import "time"

// Limits are a Server's HTTP/1.1 and HTTP/2 limits. The fields up to
// WriteByteTimeout go to net/http as they are, zero meaning net/http's own
// default (or no limit) as documented there. DefaultLimits returns what
// otlp-lite serves with, and each field says why its default is what it is.
type Limits struct {
	// MaxConcurrentStreams is the HTTP/2 concurrent streams per connection.
	// 256: OTLP exporters send few concurrent requests per connection, and
	// streaming and async clients keep at most hundreds open. Every stream
	// holds a unit of the handler's process-wide stream bound
	// (handler.AdmissionConfig.MaxStreams, 4096 by default) while it is
	// served, so it is not multiplied by MaxConnections; 256 is a
	// sixteenth of that bound, so one connection cannot hold it alone,
	// and a flood of streams that must be refused costs a sixteenth of
	// the CPU it did at 1000 (40 connections x 1000 HEADERS-only streams
	// kept an honest client waiting 3.4 s; x 256, 1.1 s).
	MaxConcurrentStreams int
	// StreamWindow and ConnWindow are the HTTP/2 receive windows per stream
	// and per connection, in bytes. They bound what a client may send that
	// the server has not read yet, which sits in memory outside the
	// admission budget until a handler reads it: up to ConnWindow per
	// connection, so every connection open can add it. The default is
	// derived from the admission budget, WindowFor(128 MiB,
	// MaxConnections): 256 KiB for 4096 connections. It is a trade: in the
	// side-by-side benchmark (grpc-go client, 500 spans x 10 attributes)
	// the server's CPU per span is 20% higher at 256 KiB than at net/http's
	// 1 MiB (75% at 64 KiB: more window updates), while at 1 MiB 640
	// connections filling their windows held 672 MiB (cmd/otlp-lite
	// TestFloodUnreadWindows; 349 MiB at 256 KiB with 2560). Handlers read
	// every stream as its bytes arrive and charge them to the budget; an
	// export stream that stops reading while it waits is charged its
	// window in the waiting budget, or reset when that does not fit
	// (handler.AdmissionConfig.StreamWindow). What stays outside the
	// budget is what arrived and is not read yet while handlers catch up,
	// at most MaxConnections x ConnWindow. A stream carries at most
	// window/RTT: 256 KiB is 250 MiB/s at 1 ms, 1.25 MiB/s at 200 ms; for
	// long links, lower MaxConnections (otlp-lite serve derives the
	// windows from -max-connections and -admission-request-limit) or set
	// the windows.
	StreamWindow, ConnWindow int
	// MaxFrameSize is the largest HTTP/2 frame the server accepts: 16 KiB,
	// HTTP/2's default. net/http reads each frame into a buffer of the
	// connection that grows to the largest frame read and is kept for the
	// connection's life, so this is a cost per connection, multiplied by
	// MaxConnections (1 MiB, the default before, made 320 connections
	// that each sent one large frame hold 320 MiB). grpc-go, which OTLP
	// exporters use, sends 16 KiB frames whatever the server allows; Go's
	// HTTP/2 client sends larger ones when allowed, and costs the server
	// more CPU per byte with 16 KiB (raise it for such clients).
	MaxFrameSize int
	// MaxHeaderBytes bounds a request's header block, HTTP/1.1 and HTTP/2
	// (where it is also SETTINGS_MAX_HEADER_LIST_SIZE, counted as HPACK
	// does: name, value and 32 bytes a field): 64 KiB is far more than any
	// OTLP client sends (a few hundred bytes; Envoy's default is 60 KiB,
	// nginx's 32 KiB) and bounds what HPACK lets a client make us decode
	// and hold per stream from a few wire bytes (one-byte references to a
	// large dynamic-table entry): at 1 MiB, 1000 such HEADERS-only streams
	// (30 MB on the wire) held 532 MB and cost 19.5 s of CPU, at 64 KiB
	// 18 MB and 1.1 s (issue 21's review).
	MaxHeaderBytes int
	// ReadHeaderTimeout is the time a client has to send request headers
	// (and an h2c connection its preface): 10 s stops slowloris clients; it
	// does not limit long connections or streams.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes connections idle this long. Idle connections cost
	// memory; 5 minutes outlives any exporter's batching interval, so
	// healthy clients keep their connection.
	IdleTimeout time.Duration
	// WriteByteTimeout drops an HTTP/2 connection that accepts no response
	// bytes for this long. Off (0) by default: net/http implements it by
	// setting a write deadline before every write, which cost 7% of server
	// CPU in the side-by-side benchmark; stalled readers are already bounded
	// by flow control and by the ping timeout.
	WriteByteTimeout time.Duration
	// MaxConnectionAge, when positive, ends connections older than it
	// (±10% jitter, drawn once per connection when it is accepted): the
	// next response carries Connection: close, which HTTP/2 turns into a
	// GOAWAY, so clients reconnect and L7 balancers rebalance. Off (0) by
	// default: with one server there is nothing to rebalance to.
	MaxConnectionAge time.Duration
	// MaxConnectionAgeGrace is how long requests and streams may finish
	// after MaxConnectionAge before the connection is closed (zero: closed
	// at once); 30 s by default.
	MaxConnectionAgeGrace time.Duration
	// MaxConnections bounds the client connections open at once, across
	// the listeners; at it, the oldest idle connection is closed to make
	// room (its client reconnects; nothing was in flight), else the busy
	// one whose streams sent no body bytes for longest, at least a second,
	// tokenless ones first (connTracker.ShedQuiet), else the new one is
	// closed. Connections that have not presented valid credentials keep
	// to a quarter of it. Each open connection holds up to ConnWindow of
	// unread request bytes and about 100 KiB of buffers (the 64 KiB read
	// buffer, a frame buffer of MaxFrameSize, pending writes, HTTP/2
	// state; about 45 KiB measured for a connection holding one health
	// Watch), so the limit multiplies them; 4096 (one per OTLP client, as
	// exporters hold one connection) is the default the other defaults
	// are derived for: raise it, and the memory limit, for a larger
	// fleet. 0 means no bound but the descriptor limit, at which idle
	// connections are shed all the same.
	MaxConnections int
}

// DefaultLimits returns the limits the otlp-lite binary serves with unless
// its flags (-http2-*, -max-header-bytes, -read-header-timeout,
// -idle-timeout, -write-timeout, -max-connection-age*, -max-connections)
// say otherwise.
func DefaultLimits() Limits {
	return Limits{
		MaxConcurrentStreams:  256,
		StreamWindow:          WindowFor(defaultBudget, defaultMaxConnections),
		ConnWindow:            WindowFor(defaultBudget, defaultMaxConnections),
		MaxFrameSize:          16 << 10,
		MaxHeaderBytes:        64 << 10,
		ReadHeaderTimeout:     10 * time.Second,
		IdleTimeout:           5 * time.Minute,
		WriteByteTimeout:      0,
		MaxConnectionAge:      0,
		MaxConnectionAgeGrace: 30 * time.Second,
		MaxConnections:        defaultMaxConnections,
	}
}

const (
	defaultMaxConnections = 4096
	// defaultBudget is handler.DefaultAdmissionRequestLimit (this package
	// does not import handler).
	defaultBudget = 128 << 20
)

// Window bounds: 256 KiB is the floor, since a smaller window costs honest
// clients CPU and latency (see Limits.StreamWindow); 4 MiB keeps one
// stream at 20 MiB/s over a 200 ms link, more than an OTLP exporter sends.
const (
	minWindow = 256 << 10
	maxWindow = 4 << 20
)

// WindowFor returns the HTTP/2 receive window (per stream and per
// connection) that keeps maxConns connections' windows, all full, within
// budget bytes: budget / maxConns, between 256 KiB and 4 MiB (0
// connections means no limit: 256 KiB). Below 512 connections for the
// default budget it keeps them within it; above, the floor wins.
func WindowFor(budget int64, maxConns int) int {
	if maxConns <= 0 {
		return minWindow
	}
	return int(min(max(budget/int64(maxConns), minWindow), maxWindow))
}
