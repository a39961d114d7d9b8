// Package hostiledest is a misbehaving OTLP destination, for tests: one
// server speaking OTLP/HTTP, OTLP/gRPC (unary Export) and otlp-lite's stream
// mode on one port (h2c and HTTP/1.1), that answers honestly or with one of
// the Faults a hostile or broken receiver can show: lies about retry
// delays, stalls before or after the response headers, garbage bodies,
// resets in the middle of a response, huge bodies and headers, redirects,
// endless partial successes, instant stream rotations.
//
// It counts every attempt a client makes (each HTTP request, each gRPC
// call, each stream opened and each message on a stream), so that a test can
// bound a client's attempts per second against each fault, and it keeps the
// export requests it acknowledged honestly, so that a test can check that
// nothing a client was told was delivered is missing.
//
// Forwarding (package forward) and `otlp-lite replay` are tested against it;
// Listen serves it over TCP on a free port, ListenPipe over in-memory
// connections for tests in a testing/synctest bubble.
package hostiledest

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/internal/pipenet"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// Fault is one way the destination misbehaves. A fault is chosen when a
// request (HTTP, gRPC) or a stream arrives and holds for all of it.
type Fault int32

const (
	// Honest stores and acknowledges every request.
	Honest Fault = iota
	// LieDelayDate refuses as retryable, asking for a wait that ends in
	// the year 9999: 503 with Retry-After: Fri, 31 Dec 9999 23:59:59 GMT;
	// UNAVAILABLE with a RetryInfo of 9223372036 s (gRPC, and a stream
	// acknowledgement's retry_delay).
	LieDelayDate
	// LieDelayHours refuses as retryable asking for three hours: 429 with
	// Retry-After: 10800, UNAVAILABLE with a RetryInfo of 10800 s.
	LieDelayHours
	// StallBeforeHeaders reads the request and never answers.
	StallBeforeHeaders
	// StallAfterHeaders sends the response headers, then nothing: a
	// stream is accepted and never acknowledged.
	StallAfterHeaders
	// Garbage answers success with a body that is not the protocol's
	// response (HTTP 200, gRPC OK, a stream frame that is no
	// ExportResponse).
	Garbage
	// ResetMidResponse sends half a response, then resets the stream
	// (HTTP/2) or the connection (HTTP/1.1).
	ResetMidResponse
	// HugeBody answers success with an 8 MiB body (a partial success
	// whose message is 8 MiB; for gRPC an 8 MiB message).
	HugeBody
	// HugeHeaders stores the request and answers success with 1 MiB of
	// response headers.
	HugeHeaders
	// Redirect answers 307 to the same URL.
	Redirect
	// EndlessPartial answers a partial success that rejects one item with
	// a 512 KiB error message.
	EndlessPartial
	// NegativePartial answers a partial success that rejects -5 items.
	NegativePartial
	// RotateNow ends each gRPC call and stream at once with UNAVAILABLE
	// and a RetryInfo of zero, a stream's "reconnect now".
	RotateNow
	// RefuseData refuses every request for good: 400, INVALID_ARGUMENT,
	// FailedNoneRetryable. Not in Faults (a client rightly gives up).
	RefuseData
	numFaults
)

var faultNames = [...]string{"honest", "lie-delay-date", "lie-delay-hours", "stall-before-headers", "stall-after-headers",
	"garbage", "reset-mid-response", "huge-body", "huge-headers", "redirect", "endless-partial", "negative-partial", "rotate-now", "refuse-data"}

func (f Fault) String() string {
	if f < 0 || f >= numFaults {
		return fmt.Sprintf("fault(%d)", int32(f))
	}
	return faultNames[f]
}

// Faults lists every fault but Honest and RefuseData: those a client must
// survive without giving up on a request.
func Faults() []Fault {
	fs := make([]Fault, 0, numFaults-2)
	for f := Honest + 1; f < RefuseData; f++ {
		fs = append(fs, f)
	}
	return fs
}

// Sizes of the floods, each far over what a client should hold.
const (
	hugeBody     = 8 << 20   // twice the clients' response limit
	hugeHeaders  = 2 << 20   // twice net/http's default header limit
	partialBytes = 512 << 10 // within every client's response limit
	// hostileSeconds is the RetryInfo seconds of LieDelayDate: the
	// largest whole number of seconds a time.Duration holds, so that any
	// jitter added overflows.
	hostileSeconds = 9223372036
)

// Server is the destination. Its methods are safe for concurrent use.
type Server struct {
	// Addr is "host:port" (TCP) or "pipe" (ListenPipe).
	Addr string

	fault    atomic.Int32
	attempts atomic.Int64
	streams  atomic.Int64
	release  chan struct{}
	once     sync.Once
	srv      *http.Server

	mu       sync.Mutex
	accepted [][]byte
}

// New returns a server answering honestly; serve it with Serve, or use
// Listen or ListenPipe.
func New() *Server {
	s := &Server{release: make(chan struct{})}
	s.srv = &http.Server{Handler: s, Protocols: new(http.Protocols)}
	s.srv.Protocols.SetUnencryptedHTTP2(true)
	s.srv.Protocols.SetHTTP1(true)
	return s
}

// Listen serves a new Server on a free TCP port of 127.0.0.1 until Close.
func Listen() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := New()
	s.Addr = ln.Addr().String()
	go s.srv.Serve(ln)
	return s, nil
}

// ListenPipe serves a new Server over in-memory connections until Close,
// and returns the dialer that reaches it (whatever the address): a
// goroutine blocked on such a connection is durably blocked, so tests in a
// testing/synctest bubble advance their fake clock past stalls at once.
func ListenPipe() (*Server, func(ctx context.Context, network, addr string) (net.Conn, error)) {
	ln := pipenet.Listen()
	s := New()
	s.Addr = "pipe:1"
	go s.srv.Serve(ln)
	return s, ln.DialContext
}

// Close releases every stalled answer and stops the server.
func (s *Server) Close() error {
	s.once.Do(func() { close(s.release) })
	return s.srv.Close()
}

// SetFault makes requests and streams that arrive from now on misbehave as
// f (Honest: answer honestly).
func (s *Server) SetFault(f Fault) { s.fault.Store(int32(f)) }

// Attempts counts the client's attempts: HTTP requests, gRPC calls,
// streams opened and messages received on streams.
func (s *Server) Attempts() int64 { return s.attempts.Load() }

// Streams counts the streams opened.
func (s *Server) Streams() int64 { return s.streams.Load() }

// Accepted returns copies of the export requests acknowledged as stored,
// decompressed, in the order they were acknowledged.
func (s *Server) Accepted() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.accepted))
	copy(out, s.accepted)
	return out
}

func (s *Server) accept(req []byte) {
	s.mu.Lock()
	s.accepted = append(s.accepted, bytes.Clone(req))
	s.mu.Unlock()
}

// stall blocks until the client goes away or the server closes.
func (s *Server) stall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.release:
	}
}

// FloodLimit is the number of attempts past which the server stops
// answering (it stalls every new attempt until Close): a client that floods
// it in a testing/synctest bubble keeps the bubble busy and its fake clock
// still, so the flood must end by count for the test to see it.
const FloodLimit = 10000

// attempt counts an attempt and reports whether to answer it.
func (s *Server) attempt(r *http.Request) bool {
	if s.attempts.Add(1) > FloodLimit {
		s.stall(r)
		return false
	}
	return true
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := Fault(s.fault.Load())
	switch {
	case otlp.SignalByHTTPPath(r.URL.Path) != 0:
		if s.attempt(r) {
			s.serveHTTP(w, r, f)
		}
	case strings.HasPrefix(r.URL.Path, "/"+otlp.StreamService+"/"):
		s.streams.Add(1)
		if s.attempt(r) {
			s.serveStream(w, r, f)
		}
	case strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc"):
		if s.attempt(r) {
			s.serveUnary(w, r, f)
		}
	default:
		http.NotFound(w, r)
	}
}

// --- OTLP/HTTP ---

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request, f Fault) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil && r.Header.Get("Content-Encoding") == "gzip" {
		body, err = compression.Decompress(nil, compression.Gzip, body, 64<<20)
	}
	if err != nil {
		http.Error(w, "cannot read the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	ct := "application/x-protobuf"
	if r.Header.Get("Content-Type") == "application/json" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	switch f {
	case Honest:
		s.accept(body)
		if ct == "application/json" {
			io.WriteString(w, "{}")
		}
	case LieDelayDate:
		w.Header().Set("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT")
		w.WriteHeader(http.StatusServiceUnavailable)
	case LieDelayHours:
		w.Header().Set("Retry-After", "10800")
		w.WriteHeader(http.StatusTooManyRequests)
	case StallBeforeHeaders:
		s.stall(r)
	case StallAfterHeaders:
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		s.stall(r)
	case Garbage:
		w.Write(garbage)
	case ResetMidResponse:
		resp := partialResponse(1, "half of this is never sent")
		w.Header().Set("Content-Length", fmt.Sprint(len(resp)))
		w.WriteHeader(http.StatusOK)
		w.Write(resp[:len(resp)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	case HugeBody:
		w.Write(partialResponse(1, strings.Repeat("x", hugeBody)))
	case HugeHeaders:
		s.accept(body)
		hugeHeader(w.Header(), "X-Flood-")
	case Redirect:
		http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
	case EndlessPartial:
		w.Write(partialResponse(1, strings.Repeat("x", partialBytes)))
	case NegativePartial:
		w.Write(partialResponse(-5, "minus five"))
	case RotateNow:
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
	case RefuseData:
		w.WriteHeader(http.StatusBadRequest)
	}
}

// garbage is a body no protobuf decoder accepts: a field tag whose varint
// never ends.
var garbage = bytes.Repeat([]byte{0xff}, 16)

// partialResponse is an Export*ServiceResponse with a partial_success
// (the signals share the layout; the traces names stand for all).
func partialResponse(rejected int64, msg string) []byte {
	var m easyproto.Marshaler
	ps := m.MessageMarshaler().AppendMessage(otlppb.ExportTraceServiceResponsePartialSuccess)
	ps.AppendInt64(otlppb.ExportTracePartialSuccessRejectedSpans, rejected)
	ps.AppendString(otlppb.ExportTracePartialSuccessErrorMessage, msg)
	return m.Marshal(nil)
}

func hugeHeader(h http.Header, prefix string) {
	v := strings.Repeat("v", 64<<10)
	for i := range hugeHeaders / len(v) {
		h.Set(fmt.Sprintf("%s%d", prefix, i), v)
	}
}

// --- OTLP/gRPC unary ---

// readFrame reads one gRPC message of body, decompressed.
func readFrame(body io.Reader, codec compression.Codec) ([]byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(body, hdr[:]); err != nil {
		return nil, err
	}
	n := int(hdr[1])<<24 | int(hdr[2])<<16 | int(hdr[3])<<8 | int(hdr[4])
	if n > 64<<20 {
		return nil, fmt.Errorf("message of %d bytes", n)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(body, msg); err != nil {
		return nil, err
	}
	if hdr[0] == 1 {
		return compression.Decompress(nil, codec, msg, 64<<20)
	}
	return msg, nil
}

func frame(msg []byte) []byte {
	n := len(msg)
	return append([]byte{0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, msg...)
}

// retryInfoStatus is a google.rpc.Status of code with a RetryInfo of sec
// seconds, base64 for grpc-status-details-bin; written by hand, since a
// time.Duration cannot hold what a hostile server sends.
func retryInfoStatus(code int32, sec int64) string {
	var m easyproto.Marshaler
	st := m.MessageMarshaler()
	st.AppendInt32(otlppb.RPCStatusCode, code)
	st.AppendString(otlppb.RPCStatusMessage, "come back later")
	anyv := st.AppendMessage(otlppb.RPCStatusDetails)
	anyv.AppendString(otlppb.AnyTypeURL, otlppb.RetryInfoTypeURL)
	var ri easyproto.Marshaler
	ri.MessageMarshaler().AppendMessage(otlppb.RetryInfoRetryDelay).AppendInt64(otlppb.DurationSeconds, sec)
	anyv.AppendBytes(otlppb.AnyValue, ri.Marshal(nil))
	return base64.RawStdEncoding.EncodeToString(m.Marshal(nil))
}

const codeUnavailable = 14

func (s *Server) serveUnary(w http.ResponseWriter, r *http.Request, f Fault) {
	codec, err := compression.Parse(r.Header.Get("Grpc-Encoding"))
	var req []byte
	if err == nil {
		req, err = readFrame(r.Body, codec)
	}
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	if err != nil {
		h.Set("Grpc-Status", "3")
		h.Set("Grpc-Message", "cannot read the request")
		w.WriteHeader(http.StatusOK)
		return
	}
	trailersOnly := func(code int, details string) {
		h.Set("Grpc-Status", fmt.Sprint(code))
		if details != "" {
			h.Set("Grpc-Status-Details-Bin", details)
		}
		w.WriteHeader(http.StatusOK)
	}
	ok := func(msg []byte) {
		h.Set("Trailer", "Grpc-Status")
		w.WriteHeader(http.StatusOK)
		w.Write(frame(msg))
		h.Set("Grpc-Status", "0")
	}
	switch f {
	case Honest:
		s.accept(req)
		ok(nil)
	case LieDelayDate:
		trailersOnly(codeUnavailable, retryInfoStatus(codeUnavailable, hostileSeconds))
	case LieDelayHours:
		trailersOnly(codeUnavailable, retryInfoStatus(codeUnavailable, 3*3600))
	case StallBeforeHeaders:
		s.stall(r)
	case StallAfterHeaders:
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		s.stall(r)
	case Garbage:
		ok(garbage)
	case ResetMidResponse:
		w.WriteHeader(http.StatusOK)
		fr := frame(partialResponse(1, "half of this is never sent"))
		w.Write(fr[:len(fr)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	case HugeBody:
		ok(partialResponse(1, strings.Repeat("x", hugeBody)))
	case HugeHeaders:
		s.accept(req)
		hugeHeader(h, "X-Flood-")
		ok(nil)
	case Redirect:
		http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
	case EndlessPartial:
		ok(partialResponse(1, strings.Repeat("x", partialBytes)))
	case NegativePartial:
		ok(partialResponse(-5, "minus five"))
	case RotateNow:
		trailersOnly(codeUnavailable, retryInfoStatus(codeUnavailable, 0))
	case RefuseData:
		trailersOnly(3, "") // INVALID_ARGUMENT
	}
}

// --- the stream mode ---

// rawAck is an ExportResponse written by hand: retry_delay of sec seconds
// (otlp.AppendAck takes a time.Duration, which cannot hold a hostile one).
func rawAck(id uint64, code int32, sec int64, rejected int64, msg string) []byte {
	var m easyproto.Marshaler
	mm := m.MessageMarshaler()
	mm.AppendUint64(1, id)
	if code != 0 {
		mm.AppendInt32(2, code)
	}
	if msg != "" {
		mm.AppendString(3, msg)
	}
	if code == int32(otlp.FailedRetryable) {
		mm.AppendMessage(4).AppendInt64(1, sec)
	}
	if rejected != 0 {
		mm.AppendInt64(5, rejected)
	}
	return m.Marshal(nil)
}

func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, f Fault) {
	codec, err := compression.Parse(r.Header.Get("Grpc-Encoding"))
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	if err != nil {
		h.Set("Grpc-Status", "3")
		w.WriteHeader(http.StatusOK)
		return
	}
	switch f {
	case StallBeforeHeaders:
		s.stall(r)
		return
	case RotateNow:
		h.Set("Grpc-Status", fmt.Sprint(codeUnavailable))
		h.Set("Grpc-Status-Details-Bin", retryInfoStatus(codeUnavailable, 0))
		w.WriteHeader(http.StatusOK)
		return
	case Redirect:
		http.Redirect(w, r, r.URL.String(), http.StatusTemporaryRedirect)
		return
	case HugeHeaders:
		hugeHeader(h, "X-Flood-")
	}
	h.Set("Trailer", "Grpc-Status")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	rc := http.NewResponseController(w)
	rc.EnableFullDuplex()
	send := func(ack []byte) bool {
		if _, err := w.Write(frame(ack)); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for {
		msg, err := readFrame(r.Body, codec)
		if err != nil {
			h.Set("Grpc-Status", "0")
			return
		}
		if !s.attempt(r) {
			return
		}
		id, req, err := otlp.UnwrapEnvelope(bytes.Clone(msg))
		if err != nil {
			h.Set("Grpc-Status", "3")
			return
		}
		// A stalled stream stays stalled; the faults of one answer
		// follow SetFault, message by message.
		mf := f
		if f != StallAfterHeaders {
			mf = Fault(s.fault.Load())
		}
		var ack []byte
		switch mf {
		default: // Honest, and the faults of a whole stream
			s.accept(req)
			ack = rawAck(id, 0, 0, 0, "")
		case LieDelayDate:
			ack = rawAck(id, int32(otlp.FailedRetryable), hostileSeconds, 0, "come back in the year 9999")
		case LieDelayHours:
			ack = rawAck(id, int32(otlp.FailedRetryable), 3*3600, 0, "come back in three hours")
		case StallAfterHeaders:
			continue // read, never acknowledged
		case Garbage:
			ack = garbage
		case ResetMidResponse:
			fr := frame(rawAck(id, 0, 0, 0, "half of this is never sent"))
			w.Write(fr[:len(fr)/2])
			rc.Flush()
			panic(http.ErrAbortHandler)
		case HugeBody:
			ack = rawAck(id, 0, 0, 1, strings.Repeat("x", hugeBody))
		case EndlessPartial:
			ack = rawAck(id, 0, 0, 1, strings.Repeat("x", partialBytes))
		case NegativePartial:
			ack = rawAck(id, 0, 0, -5, "minus five")
		case RefuseData:
			ack = rawAck(id, int32(otlp.FailedNoneRetryable), 0, 0, "refused")
		}
		if !send(ack) {
			return
		}
	}
}
