package server

import "time"

// Limits are a Server's HTTP/1.1 and HTTP/2 limits. The fields up to
// WriteByteTimeout go to net/http as they are, zero meaning net/http's own
// default (or no limit) as documented there. DefaultLimits returns what
// otlp-lite serves with, and each field says why its default is what it is.
type Limits struct {
	// MaxConcurrentStreams is the HTTP/2 concurrent streams per connection.
	// 1000: OTLP exporters send few concurrent requests per connection, but
	// streaming and async clients keep hundreds open; net/http's default of
	// 250 would make them queue.
	MaxConcurrentStreams int
	// StreamWindow and ConnWindow are the HTTP/2 receive windows per stream
	// and per connection, in bytes: 4 MiB and 8 MiB. They bound what a
	// client may send that the server has not read yet: that data sits in
	// memory outside the handler's admission budget, so each connection can
	// add up to its window. A stream carries at most window/RTT: 4 MiB keeps
	// one stream at 20 MiB/s over a 200 ms link (about 80 batches of 500
	// spans a second, 17 times sequential unary); raise both for faster long
	// links, lower them to bound memory under many abusive connections (the
	// overload test runs with 1 MiB / 4 MiB).
	StreamWindow, ConnWindow int
	// MaxFrameSize is the largest HTTP/2 frame the server accepts: 1 MiB
	// (HTTP/2's default is 16 KiB) cuts per-frame overhead for large OTLP
	// batches while bounding what one frame makes us buffer.
	MaxFrameSize int
	// MaxHeaderBytes bounds a request's header block, HTTP/1.1 and HTTP/2
	// (where it is also SETTINGS_MAX_HEADER_LIST_SIZE): 1 MiB is far more
	// than any OTLP client sends (a few hundred bytes) yet caps what a
	// header flood can make us hold.
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
	// room (its client reconnects; nothing was in flight), or the new one
	// when none is idle. Each open connection holds about 100 KiB before
	// its first request (the 64 KiB read buffer, HTTP/2 state), and every
	// per-stream limit multiplies by the connections, so 4096 (one per
	// OTLP client, as exporters hold one connection) bounds that at about
	// 400 MiB; raise it, and the memory limit, for a larger fleet. 0 means
	// no bound but the descriptor limit, at which idle connections are
	// shed all the same.
	MaxConnections int
}

// DefaultLimits returns the limits the otlp-lite binary serves with unless
// its flags (-http2-*, -max-header-bytes, -read-header-timeout,
// -idle-timeout, -write-timeout, -max-connection-age*, -max-connections)
// say otherwise.
func DefaultLimits() Limits {
	return Limits{
		MaxConcurrentStreams:  1000,
		StreamWindow:          4 << 20,
		ConnWindow:            8 << 20,
		MaxFrameSize:          1 << 20,
		MaxHeaderBytes:        1 << 20,
		ReadHeaderTimeout:     10 * time.Second,
		IdleTimeout:           5 * time.Minute,
		WriteByteTimeout:      0,
		MaxConnectionAge:      0,
		MaxConnectionAgeGrace: 30 * time.Second,
		MaxConnections:        4096,
	}
}
