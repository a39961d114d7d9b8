package otlpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

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
	// ReportPartial reports a partial success (an acknowledgement whose
	// rejected count is not zero) to Send's done as a *PartialError
	// instead of nil, for callers that must act on the rejected items
	// (a forwarder keeps such a request aside). Off, it is counted in
	// Stats().Rejected only.
	ReportPartial bool
	// DisableStreamCompression stops the exporter from offering stateful
	// compression (docs/streaming.md, "Stateful compression"): by default
	// each stream offers it, and when the server accepts, one zstd
	// encoder compresses all of the stream's messages, each flushed as it
	// is sent, instead of compressing each message alone with
	// Compression. (Compression still applies to streams whose server
	// does not accept, and to the messages a stream sends before its
	// response headers arrive: nothing waits for them.)
	DisableStreamCompression bool
	// StreamCompressionLevel is the zstd level of the stateful encoder
	// (compression.NewStreamEncoderLevel): zero means
	// compression.DefaultStreamLevel (7), which sends 8-16 % fewer bytes
	// than zstd's default level 3 on real data for about 1.3-1.8 times the
	// client's compression CPU of per-message zstd (level 3: 0.8-1.1
	// times); the server's cost is the same at every level.
	StreamCompressionLevel int
	// DisableStreamColumns stops the exporter from offering, with
	// stateful compression, the columnar transform under it (otlpcolumns;
	// docs/streaming.md, "Columns"). By default it is offered: when the
	// server accepts, each request is laid out in columns, and what the
	// stream has sent before (a data point's or span's attributes, a
	// span's name) is a reference, before the zstd. On the demo data it
	// sends 0.39x per-message zstd's bytes for metrics and 0.58x for
	// traces in requests of 8,192 items (stateful zstd alone: 0.77x and
	// 0.90x; OTel-Arrow 0.48x and 0.59x), and the whole server spends
	// 0.6-0.7x per-message zstd's CPU per point and 0.8-1.1x per span
	// (stateful zstd alone: 0.6-0.96x and 0.8-1.2x; BENCHMARKS.md, "The
	// whole server"). What it costs here: the stream's encoder, at most
	// otlpcolumns.EncoderCost (about 14.5 MiB) per stream beside the
	// zstd encoder, and more CPU to encode (1.3-1.6x per-message zstd's
	// for traces). A server that does not know it, or has no room for
	// its decoder, accepts zstd alone.
	DisableStreamColumns bool
	// ClientID names the client to the server for exactly-once storage
	// (otlp.StreamClientIDHeader, sent when each stream opens): the key
	// of each request is ClientID with the request's id
	// (otlp.StreamIdempotencyKey), so a request resent on another stream,
	// or by another exporter with the same ClientID after a crash, is
	// stored once by a server keeping a window of keys. A resend keeps
	// its id; a caller whose requests must keep their ids across its own
	// crashes gives them with SendID. Empty: no identity (a random one
	// with Config.IdempotencyKeys). It must pass CheckIdempotencyKey and
	// be at most otlp.MaxStreamClientIDLen bytes.
	ClientID string
}

// PartialError is a request the server stored in part: Rejected of its
// items were refused, Message says why (OTLP v1.11 "Partial Success").
// Reported only with StreamConfig.ReportPartial.
type PartialError struct {
	ID       uint64
	Rejected int64
	Message  string
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("request %d stored in part: %d items rejected: %s", e.ID, e.Rejected, e.Message)
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
//
// The exporter is in four files: this one has the public API (Send, Close,
// ...); stream_lifecycle.go opens, retires and ends streams;
// stream_pending.go keeps AckPending (pendingReq and its states,
// acknowledgements, retry and expiry timers, outcomes); stream_io.go has
// the writer and reader goroutines and the framing.
//
// The fields above mu are set by NewStreamExporter and not changed after
// (slots, c, pool and reporting are safe for concurrent use); the fields
// below mu, and pendingReq's and stream's as their comments say, are under
// mu. Outcomes are reported (complete) and counters counted outside mu.
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
	// clientIDErr is why cfg.ClientID cannot be sent, returned by
	// every Send.
	clientIDErr error
	// reporting counts requests whose done callback has not returned yet:
	// Close waits for it, so no outcome is reported after Close returns.
	reporting sync.WaitGroup

	mu        sync.Mutex
	cond      *sync.Cond // queue, current or closing changed
	nextID    uint64
	fixedIDs  bool                   // SendID was used: an id of Send's may be taken
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
	if cfg.ClientID == "" && cfg.IdempotencyKeys {
		cfg.ClientID = NewIdempotencyKey()
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
	if cfg.ClientID != "" {
		if err := CheckIdempotencyKey(cfg.ClientID); err != nil {
			e.clientIDErr = fmt.Errorf("stream client id: %w", err)
		} else if len(cfg.ClientID) > otlp.MaxStreamClientIDLen {
			// Its keys (StreamIdempotencyKey) would be too long.
			e.clientIDErr = fmt.Errorf("stream client id: %w: %d bytes, more than %d", ErrBadIdempotencyKey, len(cfg.ClientID), otlp.MaxStreamClientIDLen)
		}
	}
	if e.timeout > 0 {
		go e.expireLoop()
	}
	if stall := cfg.streamStallTimeout(); stall > 0 {
		go e.stallLoop(stall)
	}
	return e
}

// Send queues req, a serialized Export{Trace,Metrics,Logs,Profiles}ServiceRequest
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
	return e.send(ctx, 0, req, done)
}

// ErrIDInUse is returned by SendID for an id that a request still waiting
// for its acknowledgement has.
var ErrIDInUse = errors.New("otlpclient: request id already pending")

// SendID is Send with the request's id chosen by the caller instead of the
// exporter's counter: with StreamConfig.ClientID, the request's
// idempotency key is ClientID and id, so a caller that derives id from
// where the data comes from (a log position) sends the same key when it
// resends the data after a crash. id must not be zero, nor the id of a
// request still pending (ErrIDInUse); requests given to Send afterwards
// get ids above the largest given here.
func (e *StreamExporter) SendID(ctx context.Context, id uint64, req []byte, done func(error)) error {
	if id == 0 {
		return errors.New("otlpclient: request id 0")
	}
	return e.send(ctx, id, req, done)
}

// send is Send and SendID: id 0 takes the next of the exporter's ids.
func (e *StreamExporter) send(ctx context.Context, id uint64, req []byte, done func(error)) error {
	if e.clientIDErr != nil {
		return e.clientIDErr
	}
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
	if id == 0 {
		e.nextID++
		for e.fixedIDs && e.pending[e.nextID] != nil {
			e.nextID++ // a SendID took it
		}
		id = e.nextID
	} else if e.pending[id] != nil {
		e.mu.Unlock()
		<-e.slots
		*p = pendingReq{}
		e.pool.Put(p)
		return fmt.Errorf("%w: %d", ErrIDInUse, id)
	} else {
		e.nextID, e.fixedIDs = max(e.nextID, id), true
	}
	p.id = id
	e.pending[p.id] = p
	e.reporting.Add(1) // under e.mu while !closing: never after Close's Wait
	e.enqueueLocked(p, false)
	e.mu.Unlock()
	return nil
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
