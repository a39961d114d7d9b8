package otlpclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// StreamConfig configures a StreamExporter.
type StreamConfig struct {
	Config

	// MaxPending bounds the requests sent or queued but not yet
	// acknowledged; Send blocks when it is reached. It must cover the
	// bandwidth-delay product in requests: at 200ms and 1000 requests/s,
	// 200. Zero means 256.
	MaxPending int
	// RebalanceTimeout and RebalanceRequests are the client side of the
	// proposal's load-balancer advice: after this age or this many
	// requests the client half-closes the stream, keeps reading its
	// acknowledgements, and opens a new stream (possibly to another
	// server behind a balancer) for new requests. Zero disables either.
	RebalanceTimeout  time.Duration
	RebalanceRequests int
	// DisableResend drops, instead of resending, the requests that were
	// not acknowledged when a stream broke or was rotated by the server.
	// Resending is on by default: after a rotation those requests were
	// never read (stream.proto), after a break they may or may not have
	// been stored, so resending gives at-least-once delivery.
	DisableResend bool
}

// StreamExporter pipelines export requests on an otlplite.v1.StreamExporter
// bidirectional stream (proto/otlplite/v1/stream.proto). Each request gets
// a fresh id (the exporter's counter, never reused); the server acknowledges
// each id, in any order, and until then the request stays in the AckPending
// map so that it can be resent. It is safe for concurrent use.
//
// One writer goroutine per stream sends queued requests into the HTTP/2
// request body; one reader goroutine per stream reads the
// acknowledgements. When the server stops reading (its in-flight bound),
// HTTP/2 flow control blocks the writer, and MaxPending blocks Send.
type StreamExporter struct {
	cfg     StreamConfig
	hc      *http.Client
	url     string
	timeout time.Duration
	slots   chan struct{} // one per pending request
	ctx     context.Context
	cancel  context.CancelFunc
	closeCh chan struct{} // closed when Close starts
	c       counters
	pool    sync.Pool // *pendingReq
	// reporting counts requests whose done callback has not returned yet:
	// Close waits for it, so no outcome is reported after Close returns.
	reporting sync.WaitGroup

	mu        sync.Mutex
	cond      *sync.Cond // queue, current or closing changed
	nextID    uint64
	pending   map[uint64]*pendingReq // AckPending
	queue     []*pendingReq          // waiting for a stream's writer; resends first
	current   *stream                // the stream taking new requests
	opening   bool                   // a goroutine is opening the next stream
	reopenIn  time.Duration          // its delay
	failures  int                    // consecutive failed streams, for back-off
	live      int                    // streams opened and not yet ended
	closing   bool
	closed    bool
	drained   chan struct{} // closed when closing and nothing is pending
	noStreams chan struct{} // closed when closing and live reaches zero
	lastError error         // the last stream failure, for Close's error
	// holding is what keeps requests from being stored: the last stream
	// failure or retryable refusal, nil after a success (LastError).
	holding error
	written uint64 // requests handed to writers, for pendingReq.seq
}

// pendingReq is one request between Send and its final outcome.
//
// Ids are never reused, so code that must act on a request later (a retry
// timer) holds its id and looks it up in AckPending, never a stale pointer
// to a recycled pendingReq.
type pendingReq struct {
	id       uint64
	payload  []byte
	done     func(error)
	deadline time.Time
	attempts int
	on       *stream // the stream it was last written to; nil while queued or waiting to retry
	// seq orders requests as they were last written, and wire and size
	// are the message's length on the wire (compressed) and before
	// compression: what a server's "message larger than max" status
	// speaks of (see tooLarge).
	seq        uint64
	wire, size int
	queued     bool
	finished   bool
	// writing is set while a writer copies payload into a frame; an
	// outcome reached meanwhile is parked in err and reported by the
	// writer, so the caller never gets req back while it is being read.
	writing bool
	parked  bool
	err     error
}

// stream is one StreamExporter call.
type stream struct {
	e      *StreamExporter
	pr     *io.PipeReader
	pw     *io.PipeWriter
	cancel context.CancelFunc
	sent   int
	timer  *time.Timer // RebalanceTimeout
}

// Errors passed to Send's done callback.
var (
	// ErrClosed: the exporter was closed before the request was sent or
	// acknowledged.
	ErrClosed = errors.New("otlpclient: exporter closed")
	// ErrStreamBroken: the stream carrying the request ended before its
	// acknowledgement and DisableResend is set.
	ErrStreamBroken = errors.New("otlpclient: stream ended before the request was acknowledged")
)

// RequestError is a request's refusal by the server: FailedNoneRetryable,
// RESOURCE_EXHAUSTED for a request larger than the server's message limit
// (which ends the stream; the other requests on it are resent), or another
// non-retryable status that ended the stream carrying it.
type RequestError struct {
	ID      uint64
	Message string
	// Stream, when set, is the non-retryable status that ended the whole
	// stream the request was on (UNAUTHENTICATED, UNIMPLEMENTED, ...): a
	// refusal of the client or the endpoint, not of this request, which a
	// caller should not treat as a verdict on its data.
	Stream *grpcwire.Status
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("request %d refused: %s", e.ID, e.Message)
}

// NewStreamExporter returns an exporter for cfg. The first stream is opened
// by the first Send.
func NewStreamExporter(cfg StreamConfig) *StreamExporter {
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 256
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &StreamExporter{
		cfg:     cfg,
		hc:      cfg.httpClient(),
		url:     cfg.baseURL() + signalInfo(cfg.Signal).StreamPath,
		timeout: cfg.requestTimeout(),
		slots:   make(chan struct{}, cfg.MaxPending),
		ctx:     ctx,
		cancel:  cancel,
		closeCh: make(chan struct{}),
		pending: make(map[uint64]*pendingReq, cfg.MaxPending),
	}
	e.cond = sync.NewCond(&e.mu)
	if e.timeout > 0 {
		go e.expireLoop()
	}
	return e
}

// Send queues req, a serialized Export{Trace,Metrics,Logs}ServiceRequest
// of the exporter's signal, and returns without waiting for the server. It
// blocks while MaxPending requests are unacknowledged, until ctx ends.
//
// done, if not nil, is called exactly once, from another goroutine, with
// the request's final outcome: nil when stored, a *RequestError when
// refused, an error wrapping ErrDropped when its timeout passed, ErrClosed,
// ErrStreamBroken, or an error saying why no stream can be opened (a
// malformed Endpoint). Only a *RequestError means the server refused the
// request itself. The exporter keeps req until then: the caller must
// not modify it before done is called (or Close returns).
//
// Send returns an error, and does not call done, if req is not a valid
// protobuf message, ctx ended, or the exporter is closed.
func (e *StreamExporter) Send(ctx context.Context, req []byte, done func(error)) error {
	if err := otlp.CheckExportRequest(req); err != nil {
		return err
	}
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-e.closeCh:
		return ErrClosed
	}
	p, _ := e.pool.Get().(*pendingReq)
	if p == nil {
		p = &pendingReq{}
	}
	*p = pendingReq{payload: req, done: done}
	if e.timeout > 0 {
		p.deadline = time.Now().Add(e.timeout)
	}
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		<-e.slots
		return ErrClosed
	}
	e.nextID++
	p.id = e.nextID
	e.pending[p.id] = p
	e.reporting.Add(1) // under e.mu while !closing: never after Close's Wait
	e.enqueueLocked(p, false)
	e.mu.Unlock()
	return nil
}

// enqueueLocked puts p in the queue (at the front for a resend, so resent
// requests keep their order ahead of new ones) and makes sure a stream
// will take it.
func (e *StreamExporter) enqueueLocked(p *pendingReq, front bool) {
	p.queued = true
	p.on = nil
	if front {
		e.queue = slices.Insert(e.queue, 0, p)
	} else {
		e.queue = append(e.queue, p)
	}
	e.cond.Broadcast()
	e.ensureStreamLocked()
}

// ensureStreamLocked starts opening a stream, after reopenIn, if none is
// taking requests and none is being opened.
func (e *StreamExporter) ensureStreamLocked() {
	if e.current != nil || e.opening || e.closed {
		return
	}
	e.opening = true
	delay := e.reopenIn
	e.reopenIn = 0
	go e.open(delay)
}

// open opens a stream after delay and starts its writer and reader.
func (e *StreamExporter) open(delay time.Duration) {
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-e.ctx.Done():
			t.Stop()
		}
	}
	ctx, cancel := context.WithCancel(e.ctx)
	pr, pw := io.Pipe()
	s := &stream{e: e, pr: pr, pw: pw, cancel: cancel}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, pr)
	if err != nil {
		// A malformed Endpoint: no stream can ever be opened, so every
		// request fails now rather than at its timeout. Not a
		// RequestError: the server never saw the requests.
		cancel()
		e.failAll(fmt.Errorf("otlpclient: cannot open stream: %w", err))
		return
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	req.Header.Set("Grpc-Accept-Encoding", compression.Supported)
	if e.cfg.Compression != compression.Identity {
		req.Header.Set("Grpc-Encoding", e.cfg.Compression.String())
	}

	e.mu.Lock()
	e.opening = false
	if e.closed {
		e.mu.Unlock()
		cancel()
		return
	}
	e.current = s
	e.live++
	if e.cfg.RebalanceTimeout > 0 {
		s.timer = time.AfterFunc(e.cfg.RebalanceTimeout, func() { e.rebalance(s) })
	}
	e.cond.Broadcast()
	e.mu.Unlock()
	e.c.streams.Add(1)

	go s.writeLoop()
	go s.readLoop(req)
}

// rebalance retires s: its writer half-closes it, its reader keeps reading
// the acknowledgements, and a new stream takes new requests.
func (e *StreamExporter) rebalance(s *stream) {
	e.mu.Lock()
	e.retireLocked(s)
	e.mu.Unlock()
}

func (e *StreamExporter) retireLocked(s *stream) {
	if e.current != s {
		return
	}
	e.current = nil
	e.cond.Broadcast()
	if !e.closing {
		e.ensureStreamLocked()
	}
}

// writeLoop sends queued requests while s is the current stream, then
// half-closes s.
func (s *stream) writeLoop() {
	e := s.e
	defer s.pw.Close() // half-close: the server acknowledges the rest and ends with OK
	var frame, scratch []byte
	for {
		e.mu.Lock()
		for e.current == s && len(e.queue) == 0 && !e.closing {
			e.cond.Wait()
		}
		if e.current != s {
			e.mu.Unlock()
			return
		}
		if len(e.queue) == 0 {
			// Closing and nothing left to send.
			e.retireLocked(s)
			e.mu.Unlock()
			return
		}
		p := e.queue[0]
		e.queue[0] = nil
		e.queue = e.queue[1:]
		p.queued = false
		p.on = s
		p.writing = true
		e.written++
		p.seq = e.written
		s.sent++
		last := e.cfg.RebalanceRequests > 0 && s.sent >= e.cfg.RebalanceRequests
		if last {
			e.retireLocked(s)
		}
		id, payload := p.id, p.payload
		e.mu.Unlock()

		var err error
		frame, scratch, err = appendFrame(frame[:0], scratch, e.cfg.Compression, id, payload)
		e.mu.Lock()
		p.writing = false
		if err == nil {
			p.wire, p.size = len(frame)-5, len(frame)-5
			if e.cfg.Compression != compression.Identity {
				p.size = len(scratch) // the envelope, before compression
			}
		}
		parked, perr := p.parked, p.err
		e.mu.Unlock()
		if parked {
			// Finished (dropped) while being copied: report it now, and
			// do not send it.
			e.complete(p, perr)
			continue
		}
		if err != nil {
			// Send checked the request, so only compression can fail here.
			e.finish(id, &RequestError{ID: id, Message: err.Error()}, &e.c.failed)
			continue
		}
		e.c.sent.Add(1)
		if _, err := s.pw.Write(frame); err != nil {
			// The stream is gone; its reader will see it end and resend
			// p with the rest.
			return
		}
		if last {
			return
		}
	}
}

// appendFrame appends the gRPC length-prefixed message (PROTOCOL-HTTP2.md,
// "Length-Prefixed-Message") carrying the envelope of payload with id.
func appendFrame(dst, scratch []byte, codec compression.Codec, id uint64, payload []byte) ([]byte, []byte, error) {
	dst = append(dst, 0, 0, 0, 0, 0)
	var err error
	if codec == compression.Identity {
		dst, err = AppendEnvelope(dst, id, payload)
	} else {
		scratch, err = AppendEnvelope(scratch[:0], id, payload)
		if err == nil {
			dst, err = compression.Compress(dst, codec, scratch)
			dst[0] = 1
		}
	}
	if err != nil {
		return dst[:0], scratch, err
	}
	n := len(dst) - 5
	dst[1], dst[2], dst[3], dst[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return dst, scratch, nil
}

// readLoop makes the call and reads acknowledgements until the stream
// ends, then hands the stream's end to streamEnded.
func (s *stream) readLoop(req *http.Request) {
	e := s.e
	resp, err := e.hc.Do(req)
	if err != nil {
		e.streamEnded(s, nil, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		st := grpcwire.StatusFromHeader(resp.Header)
		if st == nil {
			st = grpcwire.Errorf(grpcwire.Unknown, "HTTP status %d", resp.StatusCode)
		}
		e.streamEnded(s, st, nil)
		return
	}
	if st := grpcwire.StatusFromHeader(resp.Header); st != nil { // Trailers-Only
		e.streamEnded(s, st, nil)
		return
	}
	codec, err := compression.Parse(resp.Header.Get("Grpc-Encoding"))
	if err != nil {
		e.streamEnded(s, nil, fmt.Errorf("cannot read stream responses: %w", err))
		return
	}
	var hdr [5]byte
	var msg, plain []byte
	var a Ack
	for {
		if _, err = io.ReadFull(resp.Body, hdr[:]); err != nil {
			break
		}
		n := int(hdr[1])<<24 | int(hdr[2])<<16 | int(hdr[3])<<8 | int(hdr[4])
		if n > maxAckSize {
			err = fmt.Errorf("cannot read stream response: %d bytes is more than the %d allowed", n, maxAckSize)
			break
		}
		msg = slices.Grow(msg[:0], n)[:n]
		if _, err = io.ReadFull(resp.Body, msg); err != nil {
			break
		}
		body := msg
		if hdr[0] == 1 {
			if plain, err = compression.Decompress(plain[:0], codec, msg, maxAckSize); err != nil {
				err = fmt.Errorf("cannot decompress stream response: %w", err)
				break
			}
			body = plain
		}
		if err = ParseAck(body, &a); err != nil {
			break
		}
		e.handleAck(s, &a)
	}
	if err == io.EOF {
		if st := grpcwire.StatusFromHeader(resp.Trailer); st != nil {
			e.streamEnded(s, st, nil)
			return
		}
		err = errors.New("stream ended without grpc-status")
	}
	e.streamEnded(s, nil, err)
}

// maxAckSize bounds one ExportResponse: a server cannot make the client
// buffer more than this per message.
const maxAckSize = 1 << 20

// handleAck applies one acknowledgement from s.
func (e *StreamExporter) handleAck(s *stream, a *Ack) {
	e.mu.Lock()
	p := e.pending[a.ID]
	if p == nil || (a.Code == FailedRetryable && p.on != s) {
		// Already acknowledged or dropped, or a retry verdict on a copy
		// that has since been resent.
		e.mu.Unlock()
		e.c.dups.Add(1)
		return
	}
	e.failures = 0 // the server is answering
	id := a.ID
	switch a.Code {
	case Success:
		e.holding = nil
		e.mu.Unlock()
		if a.Rejected > 0 {
			e.c.rejected.Add(uint64(a.Rejected))
		}
		e.finish(id, nil, &e.c.acked)
	case FailedRetryable:
		e.holding = fmt.Errorf("request %d: %v: %s", id, a.Code, a.Message)
		p.on = nil
		p.attempts++
		d := e.cfg.Backoff.Delay(p.attempts, a.RetryDelay)
		e.mu.Unlock()
		e.c.retried.Add(1)
		time.AfterFunc(d, func() {
			e.mu.Lock()
			if p := e.pending[id]; p != nil && !p.queued && p.on == nil && !e.closed {
				e.enqueueLocked(p, true)
			}
			e.mu.Unlock()
		})
	default:
		// FailedNoneRetryable, or a code this client does not know:
		// resending cannot be assumed to help.
		msg := string(a.Message)
		e.mu.Unlock()
		e.finish(id, &RequestError{ID: id, Message: a.Code.String() + ": " + msg}, &e.c.failed)
	}
}

// finish ends request id, if still pending, with err, counting it in ctr,
// and reports the outcome.
func (e *StreamExporter) finish(id uint64, err error, ctr *atomic.Uint64) {
	e.mu.Lock()
	p := e.pending[id]
	if p == nil {
		e.mu.Unlock()
		return
	}
	report := e.finishLocked(p, err)
	e.mu.Unlock()
	ctr.Add(1)
	if report {
		e.complete(p, err)
	}
}

// finishLocked removes p from AckPending and the queue. It returns true if
// the caller must call complete(p, err) outside the lock, false if a writer
// is copying p and will report err itself.
func (e *StreamExporter) finishLocked(p *pendingReq, err error) bool {
	p.finished = true
	delete(e.pending, p.id)
	if p.queued {
		if i := slices.Index(e.queue, p); i >= 0 {
			e.queue = slices.Delete(e.queue, i, i+1)
		}
		p.queued = false
	}
	if e.closing && len(e.pending) == 0 && e.drained != nil {
		close(e.drained)
		e.drained = nil
	}
	if p.writing {
		p.parked, p.err = true, err
		return false
	}
	return true
}

// complete reports p's outcome, frees its slot and recycles it.
func (e *StreamExporter) complete(p *pendingReq, err error) {
	if p.done != nil {
		p.done(err)
	}
	*p = pendingReq{}
	<-e.slots
	e.pool.Put(p)
	e.reporting.Done()
}

// streamEnded handles the end of s: with st, the gRPC status it ended with,
// or err, a transport failure. Every request still pending on s is resent
// (or dropped with DisableResend, or failed when the status says resending
// cannot help), and the next stream is opened after the right delay.
func (e *StreamExporter) streamEnded(s *stream, st *grpcwire.Status, err error) {
	// Unblock a writer stuck on flow control and release the HTTP/2
	// stream.
	s.pr.CloseWithError(ErrStreamBroken)
	s.cancel()
	if s.timer != nil {
		s.timer.Stop()
	}

	e.mu.Lock()
	if e.current == s {
		e.current = nil
	}
	e.cond.Broadcast() // a writer waiting on s must see it gone
	var lost []*pendingReq
	for _, p := range e.pending {
		if p.on == s {
			lost = append(lost, p)
		}
	}
	// In the order they were written: the order the server read them in,
	// and the order to resend them in.
	slices.SortFunc(lost, func(a, b *pendingReq) int { return cmp.Compare(a.seq, b.seq) })

	var (
		fail      error
		failCtr   *atomic.Uint64
		permanent = st != nil && st.Code != grpcwire.OK && !otlp.Retryable(st)
		oversize  *pendingReq
	)
	if permanent && st.Code == grpcwire.ResourceExhausted {
		// A server ends the whole stream when one message is over its
		// size limit, as it cannot read past it: the status is about that
		// one request, and the requests written after it were never read.
		// Failing them all would lose good data for one bad request.
		if oversize = tooLarge(lost, st); oversize != nil {
			lost = slices.DeleteFunc(lost, func(p *pendingReq) bool { return p == oversize })
			permanent = false
		}
	}
	switch {
	case err != nil:
		e.failures++
		e.reopenIn = e.cfg.Backoff.Delay(e.failures, 0)
		if !e.closed {
			// Not Close cancelling the stream: a real failure.
			e.lastError, e.holding = err, err
		}
	case st.Code == grpcwire.OK:
		// Our half-close, answered in full.
		e.reopenIn = 0
	case st.RetryDelay < 0:
		// Rotation: RetryInfo of zero means reconnect now
		// (stream.proto), not a failure.
		e.reopenIn = 0
	case oversize != nil:
		// The server is fine; the request was not. Each such end fails
		// one request, so reconnecting at once cannot loop.
		e.reopenIn = 0
		e.lastError = st
	default:
		e.failures++
		e.reopenIn = e.cfg.Backoff.Delay(e.failures, serverDelay(st))
		e.lastError, e.holding = st, st
	}
	switch {
	case permanent:
		fail, failCtr = &RequestError{Message: "stream ended: " + st.Error(), Stream: st}, &e.c.failed
	case e.cfg.DisableResend || e.closed:
		fail, failCtr = ErrStreamBroken, &e.c.dropped
	}
	var finished []*pendingReq
	if oversize != nil {
		e.c.failed.Add(1)
		oerr := &RequestError{ID: oversize.id, Message: fmt.Sprintf("%d bytes (%d on the wire) is too large for the server: %v", oversize.size, oversize.wire, st)}
		if e.finishLocked(oversize, oerr) {
			oversize.err = oerr
			finished = append(finished, oversize)
		}
	}
	if fail != nil {
		for _, p := range lost {
			failCtr.Add(1)
			perr := fail
			if re, ok := fail.(*RequestError); ok {
				perr = &RequestError{ID: p.id, Message: re.Message, Stream: re.Stream}
			}
			if e.finishLocked(p, perr) {
				p.err = perr
				finished = append(finished, p)
			}
		}
	} else if len(lost) > 0 {
		e.queue = slices.Insert(e.queue, 0, lost...)
		for _, p := range lost {
			p.queued = true
			p.on = nil
		}
		e.c.retried.Add(uint64(len(lost)))
		e.cond.Broadcast()
	}
	if len(e.queue) > 0 {
		e.ensureStreamLocked()
	}
	e.live--
	if e.live == 0 && e.noStreams != nil {
		close(e.noStreams)
		e.noStreams = nil
	}
	e.mu.Unlock()

	for _, p := range finished {
		e.complete(p, p.err)
	}
}

// expireLoop drops requests whose RequestTimeout has passed.
func (e *StreamExporter) expireLoop() {
	tick := min(max(e.timeout/10, 10*time.Millisecond), time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	var expired []*pendingReq
	for {
		select {
		case <-t.C:
		case <-e.ctx.Done():
			return
		}
		now := time.Now()
		expired = expired[:0]
		e.mu.Lock()
		for _, p := range e.pending {
			if now.After(p.deadline) {
				e.c.dropped.Add(1)
				err := fmt.Errorf("%w: request %d not acknowledged within %v", ErrDropped, p.id, e.timeout)
				if e.finishLocked(p, err) {
					p.err = err
					expired = append(expired, p)
				}
			}
		}
		e.mu.Unlock()
		for _, p := range expired {
			e.complete(p, p.err)
		}
		clear(expired)
	}
}

// failAll ends every pending request with err (counted as failed), for an
// exporter that cannot open a stream at all.
func (e *StreamExporter) failAll(err error) {
	e.mu.Lock()
	e.opening = false
	e.lastError, e.holding = err, err
	var failed []*pendingReq
	for _, p := range e.pending {
		e.c.failed.Add(1)
		if e.finishLocked(p, err) {
			failed = append(failed, p)
		}
	}
	e.mu.Unlock()
	for _, p := range failed {
		e.complete(p, err)
	}
}

// Pending returns how many requests are waiting for acknowledgement.
func (e *StreamExporter) Pending() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.pending)
}

// Stats returns the exporter's counters.
func (e *StreamExporter) Stats() Stats { return e.c.snapshot() }

// LastError returns what keeps requests from being stored: the failure
// that ended the last stream (a transport error or a gRPC status) or the
// server's last retryable refusal of a request, until a request is stored
// again; nil if nothing failed since. A caller whose requests are not
// getting through can show it.
func (e *StreamExporter) LastError() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.holding
}

// Close stops taking requests and shuts the exporter down gracefully: it
// sends what is queued, half-closes the stream and waits, until ctx ends,
// for every pending request to be acknowledged (resending as needed) and
// for the streams to end. What is still pending when ctx ends is dropped
// (done gets ErrClosed) and the streams are cancelled. It returns nil when
// nothing was dropped.
func (e *StreamExporter) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		return ErrClosed
	}
	e.closing = true
	close(e.closeCh)
	var drained chan struct{}
	if len(e.pending) > 0 {
		drained = make(chan struct{})
		e.drained = drained
	}
	e.cond.Broadcast()
	e.mu.Unlock()

	if drained != nil {
		select {
		case <-drained:
		case <-ctx.Done():
		}
	}
	// Once nothing is pending no new stream is opened, so the count of
	// live streams only goes down.
	e.mu.Lock()
	streamsDone := make(chan struct{})
	if e.live == 0 {
		close(streamsDone)
	} else {
		e.noStreams = streamsDone
	}
	e.mu.Unlock()
	select {
	case <-streamsDone:
	case <-ctx.Done():
	}

	e.mu.Lock()
	e.closed = true
	var left []*pendingReq
	dropped := len(e.pending)
	for _, p := range e.pending {
		e.c.dropped.Add(1)
		if e.finishLocked(p, ErrClosed) {
			left = append(left, p)
		}
	}
	lastErr := e.lastError
	e.mu.Unlock()
	e.cancel()
	for _, p := range left {
		e.complete(p, ErrClosed)
	}
	<-streamsDone
	// A request leaves AckPending before its outcome is reported outside
	// the lock: wait for those reports, as Send's contract promises.
	e.reporting.Wait()
	if dropped > 0 {
		return fmt.Errorf("%d requests were not acknowledged before close (last stream error: %v)", dropped, lastErr)
	}
	return nil
}
