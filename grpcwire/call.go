package grpcwire

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
)

// DefaultMaxRecvMsgSize is the default limit on one decompressed request
// message: 64 MiB, the size OTLP v1.11 recommends receivers accept
// ("OTLP/gRPC Throttling"/"Protocol Details": clients should keep requests
// well below it) — grpc-go's own default of 4 MiB rejects ordinary batches.
const DefaultMaxRecvMsgSize = 64 << 20

// Limits bound what one call may make the server hold.
type Limits struct {
	// MaxRecvMsgSize is the largest decompressed message accepted, and also
	// the largest compressed one. Zero means DefaultMaxRecvMsgSize.
	MaxRecvMsgSize int
}

func (l Limits) maxRecv() int {
	if l.MaxRecvMsgSize > 0 {
		return l.MaxRecvMsgSize
	}
	return DefaultMaxRecvMsgSize
}

// Call is one gRPC call in progress on an HTTP/2 stream.
type Call struct {
	w       http.ResponseWriter
	r       *http.Request
	limits  Limits
	codec   compression.Codec
	ctx     context.Context
	cancel  context.CancelFunc
	hdr     [5]byte
	started bool // response headers are written
	ended   bool // status is written
	budget  Budget
	// refused is set when the budget refused the last message part way;
	// skip is how many of its bytes are still unread, skipCompressed its
	// flag.
	refused        bool
	skip           int
	skipCompressed bool
	lastWire       int
	msgTimeout     time.Duration
	unary          bool // ReadUnary manages the read deadline itself
	// watched is set by WatchReadTimeout: the caller enforces msgTimeout
	// on ReadUnary (ExpireRead), so ReadUnary sets no deadline for it.
	watched bool
	// readOver (under deadlineMu) is set when a watched ReadUnary
	// returns while its deadline's expireOnDeadline may still be on its
	// way: that goroutine then leaves the stream alone.
	readOver bool
	// deadlineSet is true while a message's read deadline is armed (from
	// its first prefix byte until it, and any skip, is read).
	deadlineSet bool

	// deadlineMu serializes read-deadline changes with Finish: a reader
	// goroutine that outlives the handler must not touch the
	// ResponseWriter (net/http panics on a finished one).
	deadlineMu sync.Mutex
	finished   bool
}

// Finish marks the handler as about to return. After it, the Call no longer
// changes the stream's read deadline, so a reader goroutine still blocked
// in ReadMessage may finish safely after the handler has returned. Writing
// after Finish remains the caller's error.
func (c *Call) Finish() {
	c.deadlineMu.Lock()
	c.finished = true
	c.deadlineMu.Unlock()
}

// LimitMessageSize lowers the largest message the call accepts to n bytes,
// compressed or decompressed, for methods whose requests are known to be
// small.
func (c *Call) LimitMessageSize(n int) {
	if n < c.limits.maxRecv() {
		c.limits.MaxRecvMsgSize = n
	}
}

// SetMessageReadTimeout bounds how long each message may take to arrive
// once its first byte has: the rest of its 5-byte prefix, its body, and the
// bytes skipped after a refusal. A stalled sender (a slowloris, or a client
// that died without a reset) is cut off, while a healthy stream may still
// wait any time between messages. Zero disables.
func (c *Call) SetMessageReadTimeout(d time.Duration) { c.msgTimeout = d }

// ResetStream abandons the call's HTTP/2 stream at once (RST_STREAM): writes
// blocked on flow control return an error and reads fail. A server uses it
// for a peer that stopped reading its responses. It does nothing after
// Finish.
func (c *Call) ResetStream() {
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	if c.w != nil && !c.finished {
		// A write deadline in the past resets the stream immediately
		// (net/http's HTTP/2 server; over HTTP/1 it fails the writes).
		_ = http.NewResponseController(c.w).SetWriteDeadline(time.Unix(1, 0))
	}
}

// WatchReadTimeout tells ReadUnary that the caller enforces the message
// read timeout (SetMessageReadTimeout) itself, calling ExpireRead when a
// request has not arrived in time, so ReadUnary sets no read deadline on
// the stream for it. A read deadline costs a message to net/http's
// connection goroutine and a timer there, per call: a watchdog shared by
// every call (the handler's read guards) costs neither. The call still
// enforces its grpc-timeout deadline. Streaming reads (ReadMessage) are not
// affected.
func (c *Call) WatchReadTimeout() { c.watched = true }

// ExpireRead fails the request's pending and later body reads at once, as
// an expired read deadline does: ReadUnary and ReadMessage return
// DEADLINE_EXCEEDED. It does nothing after Finish.
func (c *Call) ExpireRead() { c.setReadDeadline(time.Unix(1, 0)) }

// armMessageDeadline starts the read deadline of a message whose first
// byte has arrived; disarmMessageDeadline ends it once the message is read.
// Each is a message to net/http's connection goroutine, so a stream pays
// two per message, and a unary call none (ReadUnary sets one deadline for
// the whole request).
func (c *Call) armMessageDeadline() {
	if c.msgTimeout > 0 && !c.unary && !c.deadlineSet {
		c.deadlineSet = true
		c.setReadDeadline(time.Now().Add(c.msgTimeout))
	}
}

func (c *Call) disarmMessageDeadline() {
	if c.deadlineSet {
		c.deadlineSet = false
		c.setReadDeadline(time.Time{})
	}
}

// setReadDeadline sets the stream's read deadline where the server supports
// it (net/http's HTTP/1 and HTTP/2 servers do).
func (c *Call) setReadDeadline(t time.Time) {
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	if c.w != nil && !c.finished {
		_ = http.NewResponseController(c.w).SetReadDeadline(t)
	}
}

// LastWireSize returns the size on the wire (before decompression, without
// the 5-byte prefix) of the last message read.
func (c *Call) LastWireSize() int { return c.lastWire }

// Budget is charged for the memory messages take while they are read, so a
// server can bound the bytes of all requests in flight (admission control).
// Errors it returns are sent to the client: a *Status as it is, any other
// error as UNAVAILABLE.
//
// Only bytes that arrived are charged, never what a length prefix or a
// Content-Length claims: a client that declares 64 MiB and sends ten bytes
// holds ten bytes of the budget (plus what HTTP/2 flow control lets it
// leave unread in the connection, which the server's window bounds).
type Budget interface {
	// Declare is called with a message's declared length, read from its
	// 5-byte prefix, before any of its bytes are read. It charges nothing:
	// it refuses at once a message that could never be admitted (larger
	// than the whole budget), so the client is not made to send it.
	Declare(n int) error
	// Charge is called with the number of wire bytes of a message that
	// just arrived, before more are read. It may wait for room, until ctx
	// is done; while it waits nothing more is read, so HTTP/2 flow control
	// holds the sender back.
	Charge(ctx context.Context, n int) error
	// Grow is called as decompression produces output, with the number of
	// new bytes. It must not wait: a request that cannot grow is refused.
	Grow(n int) error
}

// SetBudget makes the following reads charge b. The caller releases what was
// charged when it is done with the messages.
func (c *Call) SetBudget(b Budget) { c.budget = b }

// IsGRPCRequest reports whether r carries gRPC, judged by its content type:
// application/grpc or application/grpc+<subtype> (PROTOCOL-HTTP2.md,
// "Content-Type"). handler uses it to route one port to both gRPC and
// OTLP/HTTP.
func IsGRPCRequest(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	// "application/grpc-web" is another protocol: only the exact type or a
	// "+subtype" (optionally with parameters) is gRPC.
	return ct == "application/grpc" || strings.HasPrefix(ct, "application/grpc+") || strings.HasPrefix(ct, "application/grpc;")
}

// StartCall validates the request line and headers of a gRPC call and
// returns the Call. On failure it has already written the response (the HTTP
// statuses grpc-go's HTTP/2 transport uses: 405 for a method other than POST,
// 415 for a content type that is not application/grpc or
// application/grpc+proto, and a Trailers-Only gRPC status for a bad
// grpc-encoding or grpc-timeout) and returns the status it sent.
//
// The returned call's Context carries the grpc-timeout deadline. Callers must
// call Close when done.
func StartCall(w http.ResponseWriter, r *http.Request, limits Limits) (*Call, *Status) {
	c := &Call{w: w, r: r, limits: limits}
	if r.Method != http.MethodPost {
		st := Errorf(Internal, "invalid gRPC request method %q: gRPC requires POST", r.Method)
		w.Header().Set("Allow", http.MethodPost)
		c.writeEarly(http.StatusMethodNotAllowed, st)
		return nil, st
	}
	if !acceptableContentType(r.Header.Get("Content-Type")) {
		st := Errorf(InvalidArgument, "invalid gRPC request content-type %q: want application/grpc or application/grpc+proto", r.Header.Get("Content-Type"))
		c.writeEarly(http.StatusUnsupportedMediaType, st)
		return nil, st
	}
	codec, err := compression.Parse(r.Header.Get("Grpc-Encoding"))
	if err != nil {
		// Same code and wording as grpc-go, so clients' retry logic and
		// operators' searches match.
		st := Errorf(Unimplemented, "grpc: Decompressor is not installed for grpc-encoding %q", r.Header.Get("Grpc-Encoding"))
		c.writeEarly(http.StatusOK, st)
		return nil, st
	}
	c.codec = codec
	c.ctx = r.Context()
	if tv := r.Header.Get("Grpc-Timeout"); tv != "" {
		d, err := ParseTimeout(tv)
		if err != nil {
			st := Errorf(Internal, "malformed grpc-timeout: %v", err)
			c.writeEarly(http.StatusOK, st)
			return nil, st
		}
		c.ctx, c.cancel = context.WithTimeout(c.ctx, d)
	}
	return c, nil
}

func acceptableContentType(ct string) bool {
	if ct == "application/grpc" || ct == "application/grpc+proto" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/grpc" || mt == "application/grpc+proto")
}

// Context returns the call's context: the request's, with the grpc-timeout
// deadline if the client sent one.
func (c *Call) Context() context.Context { return c.ctx }

// Header returns the response headers, which a handler may add to before
// WriteHeaders.
func (c *Call) Header() http.Header { return c.w.Header() }

// Request returns the underlying HTTP request.
func (c *Call) Request() *http.Request { return c.r }

// Encoding returns the codec of the request messages.
func (c *Call) Encoding() compression.Codec { return c.codec }

// Close releases the call's timer and Finishes it. It does not write
// anything. (Finish here, not in another deferred call: a unary read's
// guard or grpc-timeout may fire after a panic in the read, and net/http
// panics, on the firing goroutine, on a finished ResponseWriter; a second
// defer grew serveGRPC's frame by 104 bytes, on every request's stack.)
func (c *Call) Close() {
	if c.cancel != nil {
		c.cancel()
	}
	c.Finish()
}

// ReadUnary reads the single request message of a unary call and returns
// it decompressed, appended to buf[:0] (buf is reused storage; the result
// may alias it). scratch holds the compressed bytes of a compressed message;
// both are returned for reuse. Errors are statuses as grpc-go sends them:
// no message or more than one message → INTERNAL (cardinality violation), a
// body that ends early → INTERNAL, too large → RESOURCE_EXHAUSTED.
func (c *Call) ReadUnary(buf, scratch []byte) (msg, scratchOut []byte, st *Status) {
	deadline, hasDeadline := c.ctx.Deadline()
	if c.watched {
		// The caller enforces msgTimeout (WatchReadTimeout); a
		// grpc-timeout deadline expires the read through the
		// context's own timer rather than a second one in net/http.
		// (No helper function: a request stalled here holds this
		// stack, and a deeper one doubled it, measured by
		// TestHostileStalledStreamFlood.)
		c.unary = true
		var stop func() bool
		if hasDeadline {
			stop = context.AfterFunc(c.ctx, c.expireOnDeadline)
		}
		msg, scratch, st = c.ReadMessage(buf, scratch)
		msg, scratch, st = c.endUnary(msg, scratch, st)
		if stop != nil && !stop() {
			c.endExpiry()
		}
		c.unary = false
		return msg, scratch, st
	}
	if c.msgTimeout > 0 || hasDeadline {
		// The whole request — prefix, message and end of stream — must
		// arrive within the timeout, and before the call's own deadline
		// (grpc-timeout): a body read does not watch the context, so
		// without it a stalled client past its deadline would be
		// answered only when the body timeout fires.
		//
		// The deadline is not cleared after the read: each change is a
		// message to net/http's connection goroutine, the stream's timer
		// is stopped when the stream closes, and firing after the body
		// was read in full only fails further body reads, of which a
		// unary handler makes none.
		if c.msgTimeout > 0 {
			if d := time.Now().Add(c.msgTimeout); !hasDeadline || d.Before(deadline) {
				deadline = d
			}
		}
		c.unary = true
		c.setReadDeadline(deadline)
		defer func() { c.unary = false }()
	}
	msg, scratch, st = c.ReadMessage(buf, scratch)
	return c.endUnary(msg, scratch, st)
}

// endExpiry is called when a watched ReadUnary's deadline passed as it
// read: expireOnDeadline was started on a goroutine of its own and may
// not have run yet. It must not set a read deadline once the handler has
// returned (net/http's HTTP/2 ResponseWriter panics on that goroutine,
// which kills the process), so it is told the read is over, under the
// lock it takes. Not inlined: ReadUnary's frame is on the stack of every
// request while it is read (and of every stalled one), and the lock
// inlined there grew it by 8 bytes.
//
//go:noinline
func (c *Call) endExpiry() {
	c.deadlineMu.Lock()
	c.readOver = true
	c.deadlineMu.Unlock()
}

// expireOnDeadline expires the request's read when the call's deadline
// passed, not when its context was cancelled otherwise (the client reset
// the stream: its reads fail on their own, with their own error). It
// runs on context.AfterFunc's goroutine, so it does nothing once the
// read is over (readOver) or the handler finished: ReadUnary does not
// wait for it.
func (c *Call) expireOnDeadline() {
	if !errors.Is(c.ctx.Err(), context.DeadlineExceeded) {
		return
	}
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	if c.w != nil && !c.finished && !c.readOver {
		_ = http.NewResponseController(c.w).SetReadDeadline(time.Unix(1, 0))
	}
}

// endUnary finishes ReadUnary after its message was read: maps the end of
// stream, and checks that no second message follows.
func (c *Call) endUnary(msg, scratch []byte, st *Status) ([]byte, []byte, *Status) {
	if st != nil {
		if st == errEndOfStream {
			return msg, scratch, Errorf(Internal, "cardinality violation: received no request message from non-client-streaming RPC")
		}
		return msg, scratch, st
	}
	// A unary request has exactly one message: anything after it is a
	// protocol violation, not something to ignore.
	var one [1]byte
	n, err := io.ReadFull(c.r.Body, one[:])
	if n > 0 {
		return msg, scratch, Errorf(Internal, "cardinality violation: received multiple request messages for non-client-streaming RPC")
	}
	if err != nil && err != io.EOF {
		return msg, scratch, c.readError(err)
	}
	return msg, scratch, nil
}

// errEndOfStream is returned by ReadMessage when the client half-closed the
// stream cleanly between messages.
var errEndOfStream = &Status{Code: OK, Message: "end of stream"}

// IsEndOfStream reports whether st is ReadMessage's clean end of stream.
func IsEndOfStream(st *Status) bool { return st == errEndOfStream }

// ReadMessage reads the next length-prefixed message of the call (for
// streaming calls; unary calls use ReadUnary). It returns a status for which
// IsEndOfStream is true when the client half-closed between messages.
//
// The 5-byte prefix is not trusted: a length over the limit is refused before
// anything is read, the Budget is charged only for bytes that arrived, and
// the buffer grows only as bytes actually arrive, so a lying prefix costs
// what was sent, not what was claimed. A compressed message is decompressed
// with the limit applied to the output, so a decompression bomb stops at the
// limit.
//
// When the Budget refuses the message part way, ReadMessage returns the
// refusal with the bytes read so far, and Skipped reports true: the caller
// either ends the call or consumes the rest with SkipRefusedMessage.
func (c *Call) ReadMessage(buf, scratch []byte) (msg, scratchOut []byte, st *Status) {
	if err := c.readPrefix(); err != nil {
		c.disarmMessageDeadline()
		if err == io.EOF {
			return buf[:0], scratch, errEndOfStream
		}
		return buf[:0], scratch, c.readError(err)
	}
	c.refused = false
	msg, scratch, st = c.readBody(buf, scratch)
	if !c.refused {
		c.disarmMessageDeadline()
	}
	return msg, scratch, st
}

// readPrefix reads a message's 5-byte prefix. Waiting for its first byte
// is waiting between messages and has no deadline; from the first byte on
// the message read deadline runs, so a client that sends part of a prefix
// and stalls is cut off like one that stalls inside a body. It returns
// io.EOF only for a clean end of stream before the first byte.
func (c *Call) readPrefix() error {
	n := 0
	for n == 0 {
		var err error
		n, err = c.r.Body.Read(c.hdr[:])
		if n == 0 && err != nil {
			return err
		}
	}
	c.armMessageDeadline()
	if n < len(c.hdr) {
		m, err := io.ReadFull(c.r.Body, c.hdr[n:])
		if err != nil {
			return eofToUnexpected(err, m, len(c.hdr)-n)
		}
	}
	return nil
}

// readBody reads the message announced by c.hdr.
func (c *Call) readBody(buf, scratch []byte) (msg, scratchOut []byte, st *Status) {
	compressed := c.hdr[0]
	length := uint64(c.hdr[1])<<24 | uint64(c.hdr[2])<<16 | uint64(c.hdr[3])<<8 | uint64(c.hdr[4])
	c.lastWire = int(length)
	limit := c.limits.maxRecv()
	if compressed > 1 {
		return buf[:0], scratch, Errorf(Internal, "grpc: received unexpected payload format %d", compressed)
	}
	if length > uint64(limit) {
		return buf[:0], scratch, Errorf(ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", length, limit)
	}
	if compressed == 1 && c.codec == compression.Identity {
		return buf[:0], scratch, Errorf(Internal, "grpc: compressed flag set with identity or empty encoding")
	}
	var grow func(int) error
	if c.budget != nil {
		if err := c.budget.Declare(int(length)); err != nil {
			c.refused, c.skip, c.skipCompressed = true, int(length), compressed == 1
			return buf[:0], scratch, budgetStatus(err)
		}
		grow = c.budget.Grow
	}
	dst := &msg
	*dst = buf[:0]
	if compressed == 1 {
		dst = &scratch
	}
	var err error
	*dst, err = c.readN((*dst)[:0], int(length), true)
	if err != nil {
		if st, ok := errors.AsType[*Status](err); ok {
			c.refused, c.skip, c.skipCompressed = true, int(length)-len(*dst), compressed == 1
			if compressed == 1 {
				// Compressed leading bytes are of no use to the caller.
				return buf[:0], scratch, st
			}
			return msg, scratch, st
		}
		return buf[:0], scratch, c.readError(err)
	}
	if compressed == 0 {
		return msg, scratch, nil
	}
	msg, err = compression.DecompressCharged(buf[:0], c.codec, scratch, limit, grow)
	if err != nil {
		if st, ok := errors.AsType[*Status](err); ok {
			return msg, scratch, st
		}
		if errors.Is(err, compression.ErrTooLarge) {
			return msg, scratch, Errorf(ResourceExhausted, "grpc: received message after decompression larger than max %d", limit)
		}
		return msg, scratch, Errorf(Internal, "grpc: failed to decompress the received message: %v", err)
	}
	return msg, scratch, nil
}

// readN appends exactly n bytes of the body to dst; with charge set, it
// charges the Budget for each read as it arrives (see Budget). The buffer
// grows only as data arrives: to at most twice what was read plus
// minReadBuffer, so that neither the allocation nor the charge follows a
// claimed length. A Budget refusal is returned as a *Status with the bytes
// read so far.
func (c *Call) readN(dst []byte, n int, charge bool) ([]byte, error) {
	want := len(dst) + n
	for len(dst) < want {
		if len(dst) == cap(dst) {
			next := min(max(2*cap(dst), minReadBuffer), want)
			if cap(dst) == 0 {
				next = min(firstReadBuffer, want)
			}
			nb := make([]byte, len(dst), next)
			copy(nb, dst)
			dst = nb
		}
		m, err := c.r.Body.Read(dst[len(dst):min(cap(dst), want)])
		dst = dst[:len(dst)+m]
		if m > 0 && charge && c.budget != nil {
			if cerr := c.budget.Charge(c.ctx, m); cerr != nil {
				return dst, budgetStatus(cerr)
			}
		}
		if err != nil {
			if err == io.EOF && len(dst) == want {
				break
			}
			return dst, eofToUnexpected(err, 0, 1)
		}
	}
	return dst, nil
}

// firstReadBuffer is the allocation for the first read into an empty
// buffer, which blocks until the peer sends: a stream that declares a large
// message, sends one byte and stalls holds this much and no more. 1 KiB
// matches the smallest chunk net/http's HTTP/2 server buffers a request body
// in, so a stalled stream's two buffers cost the same; measured by
// TestHostileStalledStreamFlood (cmd/otlp-lite), where 8 KiB made it the
// largest single cost of a stalled stream.
const firstReadBuffer = 1 << 10

// minReadBuffer is the least a buffer grows to once data has arrived. Small,
// because one byte of a lying prefix's body would otherwise make us allocate
// it in full; pooled buffers keep what they grew to.
const minReadBuffer = 8 << 10

// SkipRefusedMessage consumes the rest of the message that the last
// ReadMessage refused part way (the Budget refused it), so the stream can go
// on. got is what ReadMessage returned with the refusal; SkipRefusedMessage
// completes it to up to 64 leading bytes of the message (enough to find a
// request id that a serializer writes first), discards the rest, and returns
// them with whether the message was compressed, in which case they are
// compressed bytes. The message read deadline still applies.
func (c *Call) SkipRefusedMessage(got []byte) (prefix []byte, compressed bool, st *Status) {
	defer c.disarmMessageDeadline()
	n := c.skip
	compressed = c.skipCompressed
	c.refused, c.skip, c.skipCompressed = false, 0, false
	k := min(n, max(64-len(got), 0))
	if len(got) > 64 {
		got = got[:64]
	}
	// The skipped bytes are not kept, so not charged.
	prefix, err := c.readN(got, k, false)
	if err != nil {
		return prefix, compressed, c.readError(err)
	}
	if _, err := io.CopyN(io.Discard, c.r.Body, int64(n-k)); err != nil {
		return prefix, compressed, c.readError(eofToUnexpected(err, 0, 1))
	}
	return prefix, compressed, nil
}

// Skipped reports whether the last ReadMessage refused a message whose bytes
// are still unread (see SkipRefusedMessage).
func (c *Call) Skipped() bool { return c.refused }

// budgetStatus is the status for a Budget error.
func budgetStatus(err error) *Status {
	if st, ok := errors.AsType[*Status](err); ok {
		return st
	}
	return Errorf(Unavailable, "%v", err)
}

func eofToUnexpected(err error, got, want int) error {
	if err == io.EOF && got < want {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readError maps a body read error to the status grpc-go gives it.
func (c *Call) readError(err error) *Status {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if d, ok := c.ctx.Deadline(); ok && !time.Now().Before(d) {
			return Errorf(DeadlineExceeded, "context deadline exceeded while reading the request")
		}
		return Errorf(DeadlineExceeded, "request body stalled: no data within the %v read timeout", c.msgTimeout)
	}
	if ctxErr := c.ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return Errorf(DeadlineExceeded, "context deadline exceeded")
		}
		return Errorf(Canceled, "context canceled")
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return Errorf(Internal, "unexpected EOF: the request body ended inside a message")
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return Errorf(ResourceExhausted, "request body larger than %d bytes", mbe.Limit)
	}
	return Errorf(Canceled, "cannot read request: %v", err)
}

// writeEarly answers before any message: an HTTP status and, for gRPC
// peers, the status in the headers (Trailers-Only response).
func (c *Call) writeEarly(httpStatus int, st *Status) {
	h := c.w.Header()
	setResponseHeaders(h)
	setStatusHeaders(h, false, st)
	c.w.WriteHeader(httpStatus)
	c.started, c.ended = true, true
}

// Response header keys and values shared by every call. Assigning these
// slices to the header map, instead of Header.Set, saves an allocation per
// header and response; net/http copies the map when the headers are
// written and never modifies the values, and a len == cap slice cannot be
// appended to in place, so sharing them is safe.
var (
	contentTypeGRPC    = []string{"application/grpc"}
	acceptEncodingGRPC = []string{compression.Supported}
	statusCodeValues   = func() [][]string {
		v := make([][]string, Unauthenticated+1)
		for code := range v {
			v[code] = []string{strconv.Itoa(code)}
		}
		return v
	}()
)

// okStatus is WriteStatus(nil)'s status; it is only read.
var okStatus = Status{Code: OK}

// setResponseHeaders sets the headers of every gRPC response
// (PROTOCOL-HTTP2.md, "Responses").
//
// The nil Date entry stops net/http from adding a Date header: a gRPC
// response has none in PROTOCOL-HTTP2.md, grpc-go sends none, and
// formatting and hpack-encoding it was a measurable part of each unary
// response's cost.
func setResponseHeaders(h http.Header) {
	h["Content-Type"] = contentTypeGRPC
	h["Grpc-Accept-Encoding"] = acceptEncodingGRPC
	h["Date"] = nil
}

// setStatusHeaders sets st's grpc-status, grpc-message and
// grpc-status-details-bin, as trailers (net/http's TrailerPrefix form,
// announced after the headers went out) or as headers (Trailers-Only).
func setStatusHeaders(h http.Header, trailer bool, st *Status) {
	statusKey, messageKey, detailsKey := "Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin"
	if trailer {
		statusKey, messageKey, detailsKey = http.TrailerPrefix+"Grpc-Status", http.TrailerPrefix+"Grpc-Message", http.TrailerPrefix+"Grpc-Status-Details-Bin"
	}
	if int(st.Code) < len(statusCodeValues) {
		h[statusKey] = statusCodeValues[st.Code]
	} else {
		h.Set(statusKey, strconv.FormatUint(uint64(st.Code), 10))
	}
	if st.Message != "" {
		h.Set(messageKey, encodeGRPCMessage(st.Message))
	}
	if st.HasDetails() {
		h.Set(detailsKey, st.detailsHeaderValue())
	}
	if st.RetryDelay != 0 {
		// The RetryInfo again, alone under the metadata key of Google's
		// API convention: the OpenTelemetry Python exporter (grpcio)
		// reads the delay only there, not from grpc-status-details-bin,
		// and would otherwise retry on its own backoff, ignoring when
		// the server asked it to come back.
		key := "Google.rpc.retryinfo-Bin"
		if trailer {
			key = http.TrailerPrefix + key
		}
		h[key] = []string{st.retryInfoHeaderValue()}
	}
}

// WriteHeaders sends the response headers if they were not sent yet.
// Streaming handlers call it before the first message so the client sees the
// stream open; unary handlers need not.
func (c *Call) WriteHeaders() {
	if c.started {
		return
	}
	setResponseHeaders(c.w.Header())
	c.w.WriteHeader(http.StatusOK)
	c.started = true
}

// WriteMessage sends one uncompressed response message.
func (c *Call) WriteMessage(msg []byte) error {
	c.WriteHeaders()
	var hdr [5]byte
	n := len(msg)
	hdr[1], hdr[2], hdr[3], hdr[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	if _, err := c.w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := c.w.Write(msg)
	return err
}

// Flush pushes buffered response data to the client.
func (c *Call) Flush() {
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
}

// WriteResponse sends one message and an OK status: the whole of a
// successful unary response.
func (c *Call) WriteResponse(msg []byte) error {
	if err := c.WriteMessage(msg); err != nil {
		return err
	}
	c.WriteStatus(nil)
	return nil
}

// WriteStatus ends the call with st (nil means OK). Before any message it
// sends a Trailers-Only response; after, HTTP/2 trailers.
func (c *Call) WriteStatus(st *Status) {
	if c.ended {
		return
	}
	if st == nil {
		st = &okStatus
	}
	if !c.started {
		c.writeEarly(http.StatusOK, st)
		return
	}
	setStatusHeaders(c.w.Header(), true, st)
	c.ended = true
}

// ParseTimeout parses a grpc-timeout header value: at most 8 ASCII digits
// and a unit, H, M, S, m (milli), u (micro) or n (nano)
// (PROTOCOL-HTTP2.md, "Timeout"). Values that would overflow are clamped.
func ParseTimeout(s string) (time.Duration, error) {
	if len(s) < 2 {
		return 0, errors.New("timeout is too short: " + strconv.Quote(s))
	}
	if len(s) > 9 {
		return 0, errors.New("timeout has more than 8 digits: " + strconv.Quote(s))
	}
	var unit time.Duration
	switch s[len(s)-1] {
	case 'H':
		unit = time.Hour
	case 'M':
		unit = time.Minute
	case 'S':
		unit = time.Second
	case 'm':
		unit = time.Millisecond
	case 'u':
		unit = time.Microsecond
	case 'n':
		unit = time.Nanosecond
	default:
		return 0, errors.New("timeout unit is not one of H, M, S, m, u, n: " + strconv.Quote(s))
	}
	var v int64
	for _, ch := range []byte(s[:len(s)-1]) {
		if ch < '0' || ch > '9' {
			return 0, errors.New("timeout value is not a decimal number: " + strconv.Quote(s))
		}
		v = v*10 + int64(ch-'0')
	}
	// 99,999,999 hours overflows time.Duration; clamp to the largest value.
	if v > int64(1<<63-1)/int64(unit) {
		return time.Duration(1<<63 - 1), nil
	}
	return time.Duration(v) * unit, nil
}
