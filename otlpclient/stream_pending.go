package otlpclient

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"
)

// pendingReq is one request between Send and its final outcome.
//
// Ids are never reused, so code that must act on a request later (a retry
// timer) holds its id and looks it up in AckPending, never a stale pointer
// to a recycled pendingReq.
//
// id, payload, done and deadline are set by Send before p is published in
// AckPending and not changed until complete recycles p; every other field
// is under e.mu.
type pendingReq struct {
	id       uint64
	payload  []byte
	done     func(error)
	deadline time.Time
	attempts int
	sentAt   time.Time // when it was last written to on (stallLoop)
	state    reqState
	on       *stream // the stream it is written to, in reqWriting and reqSent; nil otherwise
	// seq orders requests as they were last written, and wire and size
	// are the message's length on the wire (compressed) and before
	// compression: what a server's "message larger than max" status
	// speaks of (see tooLarge).
	seq        uint64
	wire, size int
	// err is the outcome of a reqParked request, which its writer
	// reports, and a finished request's outcome on its way to complete.
	err error
}

// reqState is where a pendingReq is between Send and its outcome.
//
// Transitions (all under e.mu):
//
//	reqFree        -> reqQueued       Send (enqueueLocked)
//	reqQueued      -> reqWriting      a stream's writer takes it (writeLoop)
//	reqWriting     -> reqSent         its frame is built; the writer writes it to p.on
//	reqWriting     -> reqWritingLost  p.on ended meanwhile; p is put back in e.queue to be resent (streamEnded)
//	reqWritingLost -> reqQueued       its writer is done with payload (writeLoop)
//	reqSent        -> reqQueued       p.on ended before the acknowledgement; resent (streamEnded)
//	reqSent        -> reqRetryWait    FailedRetryable from p.on (handleAck)
//	reqRetryWait   -> reqQueued       the retry timer fires (handleAck)
//	reqQueued, reqSent, reqRetryWait
//	               -> reqFinished     an outcome: out of AckPending (finishLocked)
//	reqWriting, reqWritingLost
//	               -> reqFinished     its frame cannot be built (writeLoop)
//	reqWriting, reqWritingLost
//	               -> reqParked       an outcome while a writer reads payload (finishLocked)
//	reqFinished    -> reqFree         whoever finished it reports the outcome (complete)
//	reqParked      -> reqFree         the writer, once done with payload, reports it (complete)
//
// A request is in AckPending from reqQueued until reqFinished or
// reqParked, and in e.queue exactly while reqQueued or reqWritingLost.
// While a writer reads payload (reqWriting, reqWritingLost) no one else
// reports p, so the caller never gets req back while it is being read,
// and no other writer takes it (a writer waits for a reqWritingLost
// request at the front of the queue).
type reqState uint8

const (
	reqFree        reqState = iota // in the pool, or being filled in by Send
	reqQueued                      // in e.queue, waiting for a stream's writer
	reqWriting                     // a writer copies payload into a frame for p.on
	reqWritingLost                 // back in e.queue after p.on ended, but its writer still copies payload
	reqSent                        // written to p.on (or being written), waiting for its acknowledgement
	reqRetryWait                   // refused as retryable; a timer queues it again
	reqParked                      // has an outcome (err) while a writer reads payload; the writer reports it
	reqFinished                    // out of AckPending; its outcome is being reported
)

// enqueueLocked puts p in the queue (at the front for a resend, so resent
// requests keep their order ahead of new ones) and makes sure a stream
// will take it.
func (e *StreamExporter) enqueueLocked(p *pendingReq, front bool) {
	p.state = reqQueued
	p.on = nil
	if front {
		e.queue = slices.Insert(e.queue, 0, p)
	} else {
		e.queue = append(e.queue, p)
	}
	e.cond.Broadcast()
	e.ensureStreamLocked()
}

// handleAck applies one acknowledgement from s.
func (e *StreamExporter) handleAck(s *stream, a *Ack) {
	code := a.Code
	if code == Success && a.Rejected < 0 {
		// Not a success this protocol can say: retried, as garbage is.
		code = FailedRetryable
		a.Message = fmt.Appendf(nil, "partial success rejecting %d items", a.Rejected)
		a.RetryDelay = 0
	}
	e.mu.Lock()
	p := e.pending[a.ID]
	if p == nil || (code == FailedRetryable && (p.state != reqSent || p.on != s)) {
		// Already acknowledged or dropped, or a retry verdict on a copy
		// that has since been resent.
		e.mu.Unlock()
		e.c.dups.Add(1)
		return
	}
	e.failures = 0 // the server is answering
	s.acked, s.lastAck = true, time.Now()
	id := a.ID
	switch code {
	case Success:
		e.holding = nil
		e.mu.Unlock()
		var err error
		if a.Rejected > 0 {
			e.c.rejected.Add(uint64(a.Rejected))
			if e.cfg.ReportPartial {
				err = &PartialError{ID: id, Rejected: a.Rejected, Message: shortMessage(string(a.Message))}
			}
		}
		e.finish(id, err, &e.c.acked)
	case FailedRetryable:
		e.holding = fmt.Errorf("request %d: %v: %s", id, code, shortMessage(string(a.Message)))
		p.state, p.on = reqRetryWait, nil
		p.attempts++
		d := e.cfg.Backoff.Delay(p.attempts, a.RetryDelay)
		e.mu.Unlock()
		e.c.retried.Add(1)
		time.AfterFunc(d, func() {
			e.mu.Lock()
			if p := e.pending[id]; p != nil && p.state == reqRetryWait && !e.closed {
				e.enqueueLocked(p, true)
			}
			e.mu.Unlock()
		})
	default:
		// FailedNoneRetryable, or a code this client does not know:
		// resending cannot be assumed to help.
		msg := shortMessage(string(a.Message))
		e.mu.Unlock()
		e.finish(id, &RequestError{ID: id, Message: code.String() + ": " + msg}, &e.c.failed)
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
	e.forgetLocked(p)
	if p.state == reqWriting || p.state == reqWritingLost {
		p.state, p.err = reqParked, err
		return false
	}
	p.state = reqFinished
	return true
}

// forgetLocked removes p from AckPending and the queue, and tells Close
// when nothing is pending any more.
func (e *StreamExporter) forgetLocked(p *pendingReq) {
	delete(e.pending, p.id)
	if p.state == reqQueued || p.state == reqWritingLost {
		if i := slices.Index(e.queue, p); i >= 0 {
			e.queue = slices.Delete(e.queue, i, i+1)
		}
	}
	if e.closing && len(e.pending) == 0 && e.drained != nil {
		close(e.drained)
		e.drained = nil
	}
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
