package otlpclient

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

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
	s := &stream{e: e, pr: pr, pw: pw, cancel: cancel, lastAck: time.Now()}
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
	if !e.cfg.DisableStreamCompression {
		offer := otlp.StreamZstd
		if !e.cfg.DisableStreamColumns {
			offer += "; " + otlp.StreamColumns
		}
		req.Header.Set(otlp.StreamCompressionHeader, offer)
	}
	if e.cfg.ClientID != "" {
		req.Header.Set(otlp.StreamClientIDHeader, e.cfg.ClientID)
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

	if s.stalled != nil {
		// The watchdog ended s (stallLoop): whatever its reader saw
		// after, the failure is the stall.
		st, err = nil, s.stalled
	}
	var (
		fail      error
		failCtr   *atomic.Uint64
		permanent = st != nil && st.Code != grpcwire.OK && Classify(st) != Retryable
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
	// A stream that ended with requests on it and not one acknowledged
	// delivered nothing, whatever its status: reopening at once would let
	// a server that ends every stream so (OK, or "reconnect now") make
	// the client reconnect and resend in a loop. It is a failure, backed
	// off.
	unproductive := !s.acked && len(lost) > 0 && st != nil && !permanent && oversize == nil
	var retryErr error // told to OnRetry
	switch {
	case err != nil:
		e.failures++
		e.reopenIn = e.cfg.Backoff.Delay(e.failures, 0)
		if !e.closed {
			// Not Close cancelling the stream: a real failure.
			e.lastError, e.holding = err, err
			retryErr = err
		}
	case st.Code == grpcwire.OK && !unproductive:
		// Our half-close, answered in full.
		e.reopenIn = 0
	case st.RetryDelay < 0 && !unproductive:
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
		var why error = st
		if unproductive {
			why = fmt.Errorf("stream ended (%v) before acknowledging any of its %d requests", st, len(lost))
		}
		e.lastError, e.holding = why, why
		if !e.closed {
			retryErr = why
		}
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
			if p.state == reqWriting {
				// s's writer still reads its payload: no other writer
				// takes it until that one is done (writeLoop).
				p.state, p.on = reqWritingLost, nil
			} else {
				p.state, p.on = reqQueued, nil
			}
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
	reopenIn := e.reopenIn
	e.mu.Unlock()

	if retryErr != nil && !permanent && e.cfg.OnRetry != nil {
		e.cfg.OnRetry(retryErr, reopenIn)
	}
	for _, p := range finished {
		e.complete(p, p.err)
	}
}

// stallLoop ends every stream on which a request has waited
// Config.AttemptTimeout for its acknowledgement while the stream
// acknowledged nothing for as long: a server that accepted the stream
// and stopped answering (or never sent its headers). streamEnded resends
// its requests on a new stream after a back-off, and LastError (a
// forwarder's state) says why. Without it a stalled stream would hold its
// requests for good: HTTP/2 pings only notice a dead connection, not a
// live one whose server ignores the stream.
func (e *StreamExporter) stallLoop(limit time.Duration) {
	t := time.NewTicker(max(limit/4, time.Millisecond))
	defer t.Stop()
	var stalled []*stream
	for {
		select {
		case <-t.C:
		case <-e.ctx.Done():
			return
		}
		now := time.Now()
		stalled = stalled[:0]
		e.mu.Lock()
		for _, p := range e.pending {
			s := p.on
			if p.state != reqSent || s == nil || s.stalled != nil {
				continue
			}
			if now.Sub(p.sentAt) > limit && now.Sub(s.lastAck) > limit {
				s.stalled = fmt.Errorf("otlpclient: stream stalled: no acknowledgement for %v with requests waiting (timeout); replaced", limit)
				stalled = append(stalled, s)
			}
		}
		e.mu.Unlock()
		for _, s := range stalled {
			// Ending the call makes its reader fail, which hands the
			// stream to streamEnded; the pipe unblocks its writer.
			s.cancel()
			s.pr.CloseWithError(ErrStreamBroken)
		}
		clear(stalled)
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
