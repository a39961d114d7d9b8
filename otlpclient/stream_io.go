package otlpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
)

// stream is one StreamExporter call: its writer goroutine (writeLoop)
// sends requests into the request body, pw, and its reader goroutine
// (readLoop) makes the call and reads the acknowledgements.
//
// pr, pw, cancel and timer are set by open before the goroutines start and
// not changed after; sent is under e.mu.
type stream struct {
	e      *StreamExporter
	pr     *io.PipeReader
	pw     *io.PipeWriter
	cancel context.CancelFunc
	sent   int
	timer  *time.Timer // RebalanceTimeout
	// acked is set by the first acknowledgement read from s (under
	// e.mu): a stream the server ends before acknowledging anything is a
	// failure, whatever its status says (streamEnded).
	acked bool
	// lastAck is when s opened or last acknowledged a request, and
	// stalled the failure stallLoop ended it with (under e.mu).
	lastAck time.Time
	stalled error
	// enc is the stream's stateful encoder, set by readLoop when the
	// response headers say the server accepts stateful compression; the
	// writer takes it for the next message it frames and every one after
	// (the messages before it are compressed alone: a server tells the
	// two apart by their first byte).
	enc atomic.Pointer[statefulEncoder]
}

// statefulEncoder is a stream's stateful compression: its zstd encoder
// and, when the server accepted columns (offered unless
// StreamConfig.DisableStreamColumns), the
// columnar transform under it, whose state (the series it has sent)
// follows the zstd's, message by message.
type statefulEncoder struct {
	z    *compression.StreamEncoder
	cols *otlpcolumns.Encoder
	buf  []byte // the envelope transformed
}

// writeLoop sends queued requests while s is the current stream, then
// half-closes s.
func (s *stream) writeLoop() {
	e := s.e
	defer s.pw.Close() // half-close: the server acknowledges the rest and ends with OK
	var enc *statefulEncoder
	defer func() {
		if enc != nil {
			enc.z.Close()
		}
	}()
	var frame, scratch []byte
	for {
		// What the writer keeps while it waits for the next request is
		// bounded (keepBuffer): one large request must not make a
		// long-lived stream hold its size, three times over, for the
		// stream's life.
		frame, scratch = keepBuffer(frame), keepBuffer(scratch)
		if enc != nil {
			enc.buf = keepBuffer(enc.buf)
		}
		e.mu.Lock()
		// A request at the front whose last writer still reads its
		// payload (reqWritingLost) is waited for, not skipped: resends
		// keep their order.
		for e.current == s && (len(e.queue) == 0 && !e.closing || len(e.queue) > 0 && e.queue[0].state == reqWritingLost) {
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
		p.state, p.on = reqWriting, s
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
		if enc == nil {
			enc = s.enc.Load()
		}
		if enc != nil {
			frame, scratch, err = appendStatefulFrame(frame[:0], scratch, enc, id, payload)
		} else {
			frame, scratch, err = appendFrame(frame[:0], scratch, e.cfg.Compression, id, payload)
		}
		e.mu.Lock()
		if err == nil {
			p.wire, p.size = len(frame)-5, len(frame)-5
			if enc != nil || e.cfg.Compression != compression.Identity {
				p.size = len(scratch) // the envelope, before compression
			}
		}
		switch {
		case p.state == reqParked:
			// Finished (dropped) while being copied: report it now, and
			// do not send it.
			perr := p.err
			e.mu.Unlock()
			e.complete(p, perr)
			if enc != nil && err == nil {
				// The encoder's state has the message: the server's
				// must have it too, so it is sent all the same (its
				// acknowledgement finds nothing pending).
				if _, err := s.pw.Write(frame); err != nil {
					return
				}
			}
			continue
		case err != nil:
			// Send checked the request, so only compression can fail here
			// (in reqWritingLost too: p leaves the queue).
			e.forgetLocked(p)
			p.state = reqFinished
			if enc != nil {
				// The encoder's state is lost with it: new requests go
				// to a new stream, and this one half-closes.
				e.retireLocked(s)
			}
			e.mu.Unlock()
			e.c.failed.Add(1)
			e.complete(p, &RequestError{ID: id, Message: err.Error()})
			if enc != nil {
				return
			}
			continue
		case p.state == reqWritingLost:
			// s ended while p was being copied, and streamEnded put p
			// back in the queue: another writer may take it now. s is no
			// longer current, so this writer is done. streamEnded counted
			// the resend, so this copy counts as sent (Sent is requests
			// plus resends).
			p.state = reqQueued
			e.cond.Broadcast()
			e.mu.Unlock()
			e.c.sent.Add(1)
			continue
		}
		p.state, p.sentAt = reqSent, time.Now()
		e.mu.Unlock()
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

// maxKeptBuffer is the largest buffer a stream's writer keeps from one
// request to the next (the frame, the envelope, the columns' output):
// 4 MiB covers the requests an SDK or a batch processor sends (a few KB
// to about 2 MB), so they reuse their buffers, while a rare large request
// (records up to the receiver's 64 MiB limit, when forwarding) is not held
// three times over for the stream's life. It matches what the columnar
// encoder keeps (otlpcolumns.EncoderCost).
const maxKeptBuffer = 4 << 20

// keepBuffer returns b to be reused for the next request, or nil when it
// is larger than maxKeptBuffer (the garbage collector takes it back).
func keepBuffer(b []byte) []byte {
	if cap(b) > maxKeptBuffer {
		return nil
	}
	return b
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

// appendStatefulFrame appends the gRPC length-prefixed message carrying the
// envelope of payload with id, compressed by the stream's encoder
// (compressed flag 0: the message is the stream's own framing,
// compression.StreamEncoder).
func appendStatefulFrame(dst, scratch []byte, enc *statefulEncoder, id uint64, payload []byte) ([]byte, []byte, error) {
	dst = append(dst, 0, 0, 0, 0, 0)
	scratch, err := AppendEnvelope(scratch[:0], id, payload)
	if err == nil {
		msg := scratch
		if enc.cols != nil {
			enc.buf = enc.cols.Append(enc.buf[:0], scratch)
			msg = enc.buf
		}
		dst, err = enc.z.AppendMessage(dst, msg)
	}
	if err != nil {
		return dst[:0], scratch, err
	}
	n := len(dst) - 5
	dst[1], dst[2], dst[3], dst[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return dst, scratch, nil
}

// negotiate reads the server's answer to the stream's offer of stateful
// compression from its response headers, and sets s.enc when it accepted.
func (s *stream) negotiate(resp *http.Response) {
	if s.e.cfg.DisableStreamCompression || resp.StatusCode != http.StatusOK {
		return
	}
	w := otlp.AcceptedStreamZstd(resp.Header.Get(otlp.StreamCompressionHeader))
	if w <= 0 {
		return
	}
	// The server's window bounds ours; ours is at most the default,
	// which keeps nearly all of the gain.
	w = min(w, compression.DefaultStreamWindow)
	if w < compression.MinStreamWindow {
		return
	}
	w = 1 << (bits.Len(uint(w)) - 1)
	level := s.e.cfg.StreamCompressionLevel
	if level <= 0 {
		level = compression.DefaultStreamLevel
	}
	if enc, err := compression.NewStreamEncoderLevel(w, level); err == nil {
		se := &statefulEncoder{z: enc}
		if !s.e.cfg.DisableStreamColumns && otlp.AcceptedStreamColumns(resp.Header.Get(otlp.StreamCompressionHeader)) {
			sig := s.e.cfg.Signal
			if sig.Info() == nil {
				sig = Traces
			}
			se.cols = otlpcolumns.NewEncoder(otlpcolumns.Signal(sig))
		}
		s.enc.Store(se)
	}
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
	s.negotiate(resp)
	if resp.StatusCode != http.StatusOK {
		st := grpcwire.StatusFromHeader(resp.Header)
		if st == nil {
			st = grpcwire.StatusFromHTTP(resp)
		}
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
