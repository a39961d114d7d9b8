package handler

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/internal/connstate"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// Stream defaults. The proposal's load-balancing advice is "server closes
// stream every 30 s or 1000 batches"; 16 requests in flight per stream keep a
// high-latency link busy (at 500 spans per batch) while bounding per-stream
// memory to 16 request buffers.
const (
	DefaultStreamMaxInFlight = 16
	DefaultStreamMaxAge      = 30 * time.Second
	DefaultStreamMaxRequests = 1000
)

// StreamConfig bounds one export stream.
type StreamConfig struct {
	// MaxInFlight is how many requests of one stream are processed at once;
	// when reached, the server stops reading the stream and HTTP/2 flow
	// control pushes back on the client.
	MaxInFlight int
	// MaxAge and MaxRequests trigger rotation: the server stops reading,
	// acknowledges what it read, and ends the stream with UNAVAILABLE and a
	// zero RetryInfo so the client reconnects, possibly elsewhere. MaxAge
	// gets ±10% jitter so streams opened together do not rotate together.
	// Negative disables the bound.
	MaxAge      time.Duration
	MaxRequests int
	// CompressionWindow is the largest zstd window a stream with
	// stateful compression may use (streamzstd.go), a power of two: the
	// server's decoder holds about compression.StreamDecoderCost of it
	// per such stream, charged to the admission budget. Zero means
	// DefaultStreamCompressionWindow; negative turns stateful
	// compression off (clients then compress each message alone). It is
	// rounded down to a power of two within compression's bounds.
	CompressionWindow int
}

func (c *StreamConfig) setDefaults() {
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultStreamMaxInFlight
	}
	if c.MaxAge == 0 {
		c.MaxAge = DefaultStreamMaxAge
	}
	if c.MaxRequests == 0 {
		c.MaxRequests = DefaultStreamMaxRequests
	}
	if c.CompressionWindow == 0 {
		c.CompressionWindow = DefaultStreamCompressionWindow
	}
	if c.CompressionWindow > 0 {
		c.CompressionWindow = streamWindowOf(c.CompressionWindow)
	}
}

// exportStream serves one StreamExporter call. See stream.proto for the
// protocol, and in particular which requests a client must resend.
func (h *Handler) exportStream(call *grpcwire.Call, kind *signalKind) {
	clientID, st := streamClientID(call.Request().Header)
	if st != nil {
		h.refuseGRPC(call, ingest.GRPCStream, st)
		return
	}
	s := &exportStreamState{
		clientID: clientID,
		h:        h, call: call, kind: kind,
		conn:     connstate.FromContext(call.Context()),
		slots:    make(chan struct{}, h.stream.MaxInFlight),
		inFlight: map[uint64]bool{},
		readDone: make(chan *grpcwire.Status, 1),
		rotate:   make(chan struct{}),
	}
	// The decoder is the read loop's, which closes it.
	s.codec = h.negotiateStreamCompression(call, kind.signal)
	call.WriteHeaders()
	call.Flush()
	h.m.openStreams.Add(1)
	defer h.m.openStreams.Add(-1)
	// One guard for the stream's life: each acknowledgement write marks
	// its start and end (writeAck).
	s.guard = h.guards.get(call, nil)
	defer h.guards.put(s.guard)
	go s.readLoop()

	var ageTimer <-chan time.Time
	if age := h.stream.MaxAge; age > 0 {
		jitter := time.Duration((rand.Float64()*0.2 - 0.1) * float64(age))
		t := time.NewTimer(age + jitter)
		defer t.Stop()
		ageTimer = t.C
	}
	var end *grpcwire.Status
	rotated := false
	select {
	case st := <-s.readDone:
		end = st // nil: the client half-closed
	case <-s.rotate:
		rotated = true
	case <-ageTimer:
		rotated = true
	case <-h.health.shuttingDown():
		rotated = true
	case <-call.Context().Done():
		// The client's grpc-timeout passed (DEADLINE_EXCEEDED) or it
		// went away (CANCELLED).
		end = ingest.DeadlineStatus(call.Context(), "on the export stream")
	}
	if rotated {
		// Normal operation, counted in otlplite_stream_rotations_total,
		// not a refusal.
		h.m.rotations.Inc()
		end = rotationStatus()
	}
	// Stop taking requests, then let every request already read finish and
	// be acknowledged before the trailers: a read request is never left
	// without an answer while the stream is alive.
	s.stopAccepting()
	s.wg.Wait()
	if end != nil && !rotated {
		h.recordRefusal(call.Request(), ingest.GRPCStream, 0, end)
	}
	// Every acknowledgement is flushed (writeAck): what net/http writes
	// after we return is the trailers, which flow control does not hold.
	call.WriteStatus(end)
	// The read loop may still be blocked reading; from here on it must not
	// touch the ResponseWriter (it only sees the body close and exits).
	call.Finish()
}

func rotationStatus() *grpcwire.Status {
	st := grpcwire.Errorf(grpcwire.Unavailable, "stream rotated: reconnect and resend the requests that were not acknowledged")
	st.RetryDelay = -1 // RetryInfo with a zero delay
	return st
}

type exportStreamState struct {
	h     *Handler
	call  *grpcwire.Call
	kind  *signalKind
	slots chan struct{} // one per request being processed or acknowledged
	// conn is the stream's connection (nil under another server): the
	// units of the stream bound its requests take are counted there.
	conn *connstate.Conn

	mu       sync.Mutex
	stopped  bool
	inFlight map[uint64]bool
	wg       sync.WaitGroup
	requests int
	writeMu  sync.Mutex
	ackBuf   []byte // the acknowledgement being written (under writeMu)
	// ackWriters counts acknowledgements waiting for or holding writeMu.
	ackWriters atomic.Int32
	// guard resets the stream when an acknowledgement write blocks past
	// the write timeout (writeguard.go).
	guard     *writeGuard
	readDone  chan *grpcwire.Status // the read loop's end: nil on half-close
	rotate    chan struct{}         // closed when MaxRequests is reached
	rotateOne sync.Once
	// codec is the stream's stateful decompressor, nil when the stream
	// compresses each message alone; used by the read loop only.
	codec *streamCodec
	// clientID is the stream's client identity (StreamClientIDHeader),
	// read once; "" when the client sends none (its requests have no
	// key).
	clientID string
}

// key is the idempotency key of the stream's request id, "" when the
// stream has no client identity.
func (s *exportStreamState) key(id uint64) string {
	if s.clientID == "" {
		return ""
	}
	return otlp.StreamIdempotencyKey(s.clientID, id)
}

func (s *exportStreamState) stopAccepting() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// readLoop reads requests until the stream ends, the stream is stopped, or a
// protocol error. It takes a processing slot before reading each request, so
// at most MaxInFlight requests are held; when none is free it does not read,
// and HTTP/2 flow control stops the client.
func (s *exportStreamState) readLoop() {
	ctx := s.call.Context()
	if s.codec != nil {
		defer s.codec.close(s.h)
	}
	for {
		if !s.takeSlot(ctx) {
			return
		}
		t := s.h.getTicket(ctx)
		s.call.SetBudget(t)
		var st *grpcwire.Status
		t.Msg, t.Scratch, st = s.call.ReadMessage(t.Msg, t.Scratch)
		// A request's duration starts when it has arrived, not while the
		// stream waited for it.
		s.h.p.StartLog(ctx, t, s.call.Request().RemoteAddr, ingest.GRPCStream, s.kind.signal)
		if st != nil && s.call.Skipped() {
			// Admission refused the request part way: consume the rest
			// and answer FailedRetryable, keeping the stream open.
			if s.refuse(t, st) {
				continue
			}
			s.readDone <- st
			return
		}
		if st != nil {
			s.h.putTicket(t)
			<-s.slots
			if grpcwire.IsEndOfStream(st) {
				st = nil
			}
			s.readDone <- st
			return
		}
		// The bytes counted are the envelope's, as they arrived.
		wire := s.call.LastWireSize()
		var pre ingest.Validated // what the columns' decoder vouches for (streamCodec.vouched)
		if s.codec != nil && compression.IsStreamMessage(t.Msg) {
			if st := s.codec.decode(s.h, t); st != nil {
				s.h.putTicket(t)
				<-s.slots
				s.readDone <- st
				return
			}
			pre = s.codec.vouched()
		}
		size := len(t.Msg)
		// buf is t.Msg's whole buffer: unwrapping leaves t.Msg a slice
		// from the envelope's payload on, its capacity short of the
		// envelope's header, and a buffer pooled so would lose that much
		// at every request it carries, until the largest request of a
		// stream no longer fits and is allocated again (process gives
		// the ticket its whole buffer back, with the envelope's length,
		// which ingest.Pipeline.Done's recentSizes keeps buffers to).
		buf := t.Msg
		id, err := unwrapStreamRequest(t)
		if err != nil {
			s.h.putTicket(t)
			<-s.slots
			s.readDone <- grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode stream request: %v", err)
			return
		}
		s.mu.Lock()
		if s.stopped {
			// The stream is ending: this request is not processed and
			// gets no response, so the client resends it.
			s.mu.Unlock()
			s.h.putTicket(t)
			<-s.slots
			return
		}
		if s.inFlight[id] {
			s.mu.Unlock()
			s.h.putTicket(t)
			<-s.slots
			s.readDone <- grpcwire.Errorf(grpcwire.InvalidArgument, "request id %d reused while still in flight: an id may be sent again only after its acknowledgement", id)
			return
		}
		s.inFlight[id] = true
		s.requests++
		last := s.h.stream.MaxRequests > 0 && s.requests >= s.h.stream.MaxRequests
		if last {
			s.stopped = true
		}
		s.wg.Add(1)
		s.mu.Unlock()
		// Each request is processed by a goroutine of its own, which holds
		// a unit of the process-wide stream bound; when none is free the
		// read loop processes it itself, and the stream is read again
		// once it is acknowledged (no goroutine is made that the bound
		// does not count).
		if s.h.gate.tryAcquire(s.conn) {
			go s.process(id, t, buf, wire, size, true, pre)
		} else if !s.h.p.ParkWindow() {
			// Nor can its window wait unread: the request is dropped
			// unacknowledged (its client resends it) with the stream.
			s.mu.Lock()
			delete(s.inFlight, id)
			s.mu.Unlock()
			s.wg.Done()
			s.h.putTicket(t)
			<-s.slots
			s.resetBusy()
			return
		} else {
			s.process(id, t, buf, wire, size, false, pre)
			s.h.p.UnparkWindow()
		}
		if last {
			s.rotateOne.Do(func() { close(s.rotate) })
			return
		}
	}
}

// takeSlot takes a request slot, waiting for one as long as the stream
// lasts; it reports false when the read loop must end. While it waits the
// stream is not read and its client may fill the stream's window: the
// window is charged to the admission waiting budget for the wait
// (admission.park), and when it does not fit the stream is reset at once
// (net/http then stops taking its data) and ends with UNAVAILABLE: its
// client resends what was not acknowledged. So streams that wait hold at
// most the waiting budget in flow-control buffers, whatever their number.
func (s *exportStreamState) takeSlot(ctx context.Context) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
	}
	if !s.h.p.ParkWindow() {
		s.resetBusy()
		return false
	}
	defer s.h.p.UnparkWindow()
	select {
	case s.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// resetBusy resets the stream and ends the read loop with a retryable
// refusal, for a stream whose window cannot wait unread.
func (s *exportStreamState) resetBusy() {
	s.call.ResetStream()
	s.readDone <- s.h.p.BusyStatus("no room in the waiting budget for the stream's unread window")
}

// refuse answers a request that admission refused with FailedRetryable. It
// reports false when the stream cannot go on: the rest of the message could
// not be consumed, or its id could not be read (compressed, or id not
// first), in which case the stream ends with the refusal and the client
// resends everything unacknowledged.
func (s *exportStreamState) refuse(t *ingest.Ticket, refusal *grpcwire.Status) bool {
	defer func() {
		s.h.putTicket(t)
		<-s.slots
	}()
	// Nothing of the refused request is kept: its charge goes back now,
	// before the rest is skipped (under the message read deadline).
	t.Release()
	s.h.p.Refused(t, ingest.GRPCStream, s.kind.signal, refusal)
	prefix, compressed, st := s.call.SkipRefusedMessage(t.Msg)
	t.Msg = prefix
	if st != nil || compressed || s.codec != nil && compression.IsStreamMessage(prefix) {
		// The decoder cannot skip a stream message: the stream ends
		// with the refusal, and the client's next stream starts a new
		// state.
		return false
	}
	id, ok := leadingID(prefix)
	if !ok {
		return false
	}
	// Register like a request in flight, so the handler waits for this
	// answer before it ends the stream (and never returns while we write).
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return false
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	s.h.recordRefusal(s.call.Request(), ingest.GRPCStream, 0, refusal)
	return s.writeAck(id, ingest.Result{}, refusal) == nil
}

// leadingID finds the request id in the first bytes of a stream request, if
// a serializer wrote it first (every protobuf library writes fields in
// number order). The bytes may end anywhere after it.
func leadingID(prefix []byte) (uint64, bool) {
	var fc easyproto.FieldContext
	if _, err := fc.NextField(prefix); err != nil || fc.FieldNum != otlp.EnvelopeID {
		return 0, false
	}
	return fc.Uint64()
}

// process exports one request and writes its acknowledgement. The request's
// budget and buffers are released as soon as it is stored, before the
// acknowledgement is written: a client that does not read acknowledgements
// holds nothing but its slots, and only until the ack write times out.
//
// unit says the caller took a unit of the stream bound for it, which it
// returns. pre is what the columns' decoder vouched for in the request
// (the zero Validated, nothing, is validated as Export does). buf is the
// buffer t.Msg was unwrapped from, given back to t before it is pooled.
func (s *exportStreamState) process(id uint64, t *ingest.Ticket, buf []byte, wire, size int, unit bool, pre ingest.Validated) {
	defer s.wg.Done()
	if unit {
		defer s.h.gate.release(s.conn)
	}
	out, err := s.h.p.ExportValidated(s.call.Context(), ingest.Request{
		Transport: ingest.GRPCStream, Signal: s.kind.signal, Body: t.Msg,
		WireSize: wire, Size: size, Ticket: t, IdempotencyKey: s.key(id),
	}, pre)
	t.Msg = buf
	s.h.putTicket(t)
	var st *grpcwire.Status
	if err != nil {
		st = err.(*grpcwire.Status)
		s.h.recordRefusal(s.call.Request(), ingest.GRPCStream, 0, st)
	}
	if err := s.writeAck(id, out, st); err != nil {
		s.h.log.Debug("cannot write stream response", "peer", s.call.Request().RemoteAddr, "err", err)
	}
	<-s.slots
}

// writeAck writes the ExportResponse of request id. Acknowledgements that
// complete together share one flush: each writer announces itself before
// taking the lock, and only the last one in line flushes — every ack is
// flushed by the writer that follows it or by itself. (A flush per ack cost
// 6% of server CPU in the side-by-side benchmark.)
//
// The id leaves the in-flight set just before its acknowledgement is
// written: the client cannot see the ack before that, so an id it resends
// as soon as the ack arrives is always free (stream.proto allows it).
func (s *exportStreamState) writeAck(id uint64, out ingest.Result, st *grpcwire.Status) error {
	s.ackWriters.Add(1)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.ackBuf = appendStreamResponse(s.ackBuf[:0], id, out, st, s.h.retryDelay)
	s.mu.Lock()
	delete(s.inFlight, id)
	s.mu.Unlock()
	s.guard.begin()
	err := s.call.WriteMessage(s.ackBuf)
	if s.ackWriters.Add(-1) == 0 {
		s.call.Flush()
	}
	s.guard.end()
	return err
}

// exportEnvelopeUnary serves UnaryExporter: the stream's envelope, one
// request per call, answered with an ExportResponse (status OK).
func (h *Handler) exportEnvelopeUnary(call *grpcwire.Call, kind *signalKind) {
	// A key: the idempotency-key metadata, or else the stream client
	// identity with the envelope's request id, as on a stream.
	key, kst := grpcIdempotencyKey(call.Request().Header)
	var clientID string
	if kst == nil && key == "" {
		clientID, kst = streamClientID(call.Request().Header)
	}
	if kst != nil {
		h.refuseGRPC(call, ingest.GRPC, kst)
		return
	}
	t := h.getTicket(call.Context())
	defer h.putTicket(t)
	h.p.StartLog(call.Context(), t, call.Request().RemoteAddr, ingest.GRPC, kind.signal)
	call.SetBudget(t)
	var st *grpcwire.Status
	t.Msg, t.Scratch, st = call.ReadUnary(t.Msg, t.Scratch)
	if st != nil {
		h.p.Refused(t, ingest.GRPC, kind.signal, st)
		h.refuseGRPC(call, ingest.GRPC, st)
		return
	}
	// The bytes counted are the envelope's, as they arrived.
	wire, size := call.LastWireSize(), len(t.Msg)
	// The ticket is pooled with the buffer the envelope is unwrapped
	// from, its whole capacity (as the stream's process does).
	defer giveBack(t, t.Msg)
	id, err := unwrapStreamRequest(t)
	if err != nil {
		st := grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode request: %v", err)
		h.p.Refused(t, ingest.GRPC, kind.signal, st)
		h.refuseGRPC(call, ingest.GRPC, st)
		return
	}
	if clientID != "" {
		key = otlp.StreamIdempotencyKey(clientID, id)
	}
	out, err := h.p.Export(call.Context(), ingest.Request{
		Transport: ingest.GRPC, Signal: kind.signal, Body: t.Msg,
		WireSize: wire, Size: size, Ticket: t, IdempotencyKey: key,
	})
	if err != nil {
		// Answered in the ExportResponse, with the call itself OK.
		st = err.(*grpcwire.Status)
		h.recordRefusal(call.Request(), ingest.GRPC, 0, st)
	}
	t.Resp = appendStreamResponse(t.Resp[:0], id, out, st, h.retryDelay)
	_ = h.writeUnaryResponse(call, t.Resp)
}

// giveBack gives t the buffer buf its request was unwrapped from, before
// t is pooled: unwrapping leaves t.Msg short of the envelope's header.
func giveBack(t *ingest.Ticket, buf []byte) { t.Msg = buf }

// unwrapStreamRequest turns the envelope in t.Msg into the plain
// Export*ServiceRequest, in place (otlp.UnwrapEnvelope), and returns its id.
func unwrapStreamRequest(t *ingest.Ticket) (uint64, error) {
	id, req, err := otlp.UnwrapEnvelope(t.Msg)
	if err != nil {
		return 0, err
	}
	t.Msg = req
	return id, nil
}
