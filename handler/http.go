package handler

import (
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/internal/quote"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// OTLP/HTTP (OTLP v1.11 specification, "OTLP/HTTP"): POST a serialized
// Export*ServiceRequest to /v1/traces, /v1/metrics or /v1/logs, as binary
// protobuf (application/x-protobuf) or OTLP/JSON (application/json); the
// response uses the request's content type.
//
// Where the collector differs, the specification wins:
//   - every 4xx and 5xx response carries a google.rpc.Status body in the
//     request's encoding ("Failures": the body MUST be a Status), including
//     404, 405 and 415;
//   - a body over the size limit, compressed or decompressed, gets 413
//     Payload Too Large rather than 400;
//   - full success leaves partial_success unset.

const (
	contentTypeProtobuf = "application/x-protobuf"
	contentTypeJSON     = "application/json"
)

// httpRoute maps an OTLP/HTTP path to its signal.
func httpRoute(path string) *signalKind {
	return kindOf(otlp.SignalByHTTPPath(path))
}

// httpEncoding is how one OTLP/HTTP exchange is encoded, and how far its
// request body was read.
type httpEncoding struct {
	json        bool
	contentType string // echoed in the response
	gzipReply   bool   // the client accepts a gzipped response
	// bodyRead is set once the request body was read to its end: an
	// error after that can keep an HTTP/1.1 connection alive.
	bodyRead bool
}

// requestEncoding is the encoding of the response to r: JSON when the
// request says it is JSON, binary protobuf otherwise ("The server MUST use
// the same Content-Type in the response as it received in the request";
// protobuf is OTLP/HTTP's default for requests we cannot read at all).
func requestEncoding(r *http.Request) httpEncoding {
	enc := httpEncoding{contentType: contentTypeProtobuf, gzipReply: acceptsGzip(r.Header.Get("Accept-Encoding"))}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil {
		switch mt {
		case contentTypeJSON:
			enc.json, enc.contentType = true, contentTypeJSON
		case contentTypeProtobuf, "application/protobuf":
			enc.contentType = mt
		}
	}
	return enc
}

// unreadBodyLinger bounds how long an HTTP/1.1 connection whose request
// was refused before its body was read stays open to let the client finish
// sending (nginx's lingering_timeout has the same default and purpose).
// Handler.unreadLinger holds it, so tests need not wait for it.
const unreadBodyLinger = 5 * time.Second

// serveOTLPHTTP serves one OTLP/HTTP request.
func (h *Handler) serveOTLPHTTP(w http.ResponseWriter, r *http.Request) {
	enc := requestEncoding(r)
	if h.cors.apply(w, r) {
		return // a CORS preflight, answered
	}
	kind := httpRoute(r.URL.Path)
	if kind == nil {
		h.writeHTTPError(w, r, enc, http.StatusNotFound, grpcwire.Errorf(grpcwire.NotFound,
			"unknown path %s: OTLP/HTTP paths are /v1/traces, /v1/metrics and /v1/logs", quote.String(r.URL.Path)))
		return
	}
	if r.Method == http.MethodOptions {
		// Not a CORS preflight (those were answered above): a plain
		// request for the path's options (RFC 9110 section 9.3.7).
		w.Header().Set("Allow", "POST, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		h.writeHTTPError(w, r, enc, http.StatusMethodNotAllowed, grpcwire.Errorf(grpcwire.Unimplemented,
			"method %s is not allowed: OTLP/HTTP requests are POST", r.Method))
		return
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err == nil && (mt == contentTypeJSON || mt == contentTypeProtobuf || mt == "application/protobuf"):
		// requestEncoding has set the response's type.
	default:
		h.writeHTTPError(w, r, enc, http.StatusUnsupportedMediaType, grpcwire.Errorf(grpcwire.InvalidArgument,
			"unsupported content type %s: use application/x-protobuf or application/json", quote.String(ct)))
		return
	}
	codec, err := contentCoding(r.Header)
	if err != nil {
		h.writeHTTPError(w, r, enc, http.StatusUnsupportedMediaType, grpcwire.Errorf(grpcwire.InvalidArgument,
			"unsupported Content-Encoding %s: use one of gzip, zstd, deflate, snappy or identity", quote.String(strings.Join(r.Header.Values("Content-Encoding"), ", "))))
		return
	}
	if st := kind.headerStatus(r.Header); st != nil {
		h.writeHTTPError(w, r, enc, http.StatusBadRequest, st)
		return
	}
	key, st := httpIdempotencyKey(r.Header)
	if st != nil {
		h.writeHTTPError(w, r, enc, http.StatusBadRequest, st)
		return
	}

	t := h.getTicket(r.Context())
	defer h.putTicket(t)
	h.p.StartLog(r.Context(), t, r.RemoteAddr, ingest.HTTP, kind.signal)
	t.LogJSON(enc.json)
	body, httpStatus, st := h.readHTTPBody(w, r, codec, &enc, t)
	if st != nil {
		t.Release()
		h.p.Refused(t, ingest.HTTP, kind.signal, st)
		if t.Throttled() {
			// Over the tenant's budget share: 429, as a rate refusal.
			httpStatus = http.StatusTooManyRequests
		}
		t.LogHTTPStatus(httpStatus)
		h.writeHTTPError(w, r, enc, httpStatus, st)
		return
	}
	format := ingest.Proto
	if enc.json {
		format = ingest.JSON
	}
	// Export decompresses and transcodes the body within the limits,
	// validates and stores it, and releases the request's budget before
	// it returns, so a client that does not read the response holds none.
	req := ingest.Request{
		Transport: ingest.HTTP, Signal: kind.signal, Body: body,
		Format: format, Codec: codec, Ticket: t, IdempotencyKey: key,
	}
	var res ingest.Result
	if r.ProtoMajor == 2 {
		// net/http serves each HTTP/2 request on a fresh goroutine, as it
		// does a gRPC call: the export workers keep the stack the
		// pipeline's work grows (exportworkers.go). An HTTP/1.1
		// connection's goroutine keeps its own from one request to the
		// next, and a hop to a worker would only add a hand-off.
		res, err = h.exports.export(h.p, r.Context(), req)
	} else {
		res, err = h.p.Export(r.Context(), req)
	}
	if err != nil {
		st := err.(*grpcwire.Status)
		httpStatus := ingest.HTTPStatus(st)
		if res.Throttled {
			// Over the tenant's quota or budget share: 429 with
			// Retry-After (OTLP v1.11 "OTLP/HTTP Throttling"), where
			// gRPC gets UNAVAILABLE.
			httpStatus = http.StatusTooManyRequests
			t.LogHTTPStatus(httpStatus)
		}
		h.writeHTTPError(w, r, enc, httpStatus, st)
		return
	}
	// t.Scratch is free again: build the response there.
	t.Resp = appendExportResponse(t.Resp[:0], res)
	if enc.json {
		t.Scratch, err = otlpjson.Marshal(t.Scratch[:0], kind.jsonResponse, t.Resp)
		if err != nil {
			h.writeHTTPError(w, r, enc, http.StatusInternalServerError, grpcwire.Errorf(grpcwire.Internal, "cannot encode response: %v", err))
			return
		}
		t.Resp = append(t.Resp[:0], t.Scratch...)
	}
	h.writeHTTPBody(w, enc, http.StatusOK, t.Resp)
}

// readHTTPBody reads the request body, as sent (compressed, JSON or
// protobuf), into one of t's buffers, charging it to t as it arrives, and
// returns it: t.Msg for an uncompressed protobuf body, t.Scratch otherwise,
// as ingest.Request.Body asks, so that the pipeline decompresses and
// transcodes into t.Msg.
func (h *Handler) readHTTPBody(w http.ResponseWriter, r *http.Request, codec compression.Codec, enc *httpEncoding, t *ingest.Ticket) ([]byte, int, *grpcwire.Status) {
	limit := h.p.MaxRecvMsgSize()
	if r.ContentLength > int64(limit) {
		return nil, http.StatusRequestEntityTooLarge, ingest.BodyTooLarge(limit)
	}
	// Admission: a declared length that could never be admitted is
	// refused at once; otherwise bytes are charged as they arrive (and
	// may wait for room), never as declared, so a lying Content-Length
	// costs what was sent. Decompressed bytes are charged as produced
	// (by the pipeline).
	if err := t.Declare(int(max(r.ContentLength, 0))); err != nil {
		st := err.(*grpcwire.Status)
		return nil, ingest.HTTPStatus(st), st
	}
	if n := t.MaxRequest(); n > 0 && n < int64(limit) {
		// The tenant's max_request_bytes bounds its body too.
		limit = int(n)
	}
	raw := &t.Scratch
	if codec == compression.Identity && !enc.json {
		raw = &t.Msg
	}
	var err error
	if h.bodyTimeout > 0 {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(h.bodyTimeout))
		defer rc.SetReadDeadline(time.Time{})
	}
	// Read to the size the body declares, so that the buffer (which the
	// ticket's pool keeps) is the request's size, not up to twice it; the
	// claim never raises an allocation above what arrived.
	*raw, err = compression.ReadAllSized((*raw)[:0], r.Body, limit, int(max(r.ContentLength, 0)), t.ChargeFunc(r.Context()))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, http.StatusRequestTimeout, grpcwire.Errorf(grpcwire.DeadlineExceeded,
			"request body stalled: not received within %v", h.bodyTimeout)
	}
	if err != nil {
		if errors.Is(err, compression.ErrTooLarge) {
			return nil, http.StatusRequestEntityTooLarge, ingest.BodyTooLarge(limit)
		}
		if st, ok := errors.AsType[*grpcwire.Status](err); ok {
			return nil, ingest.HTTPStatus(st), st
		}
		// The connection failed mid-body: the client went away (or
		// its network did). Nothing is wrong with what it sent, so this
		// is CANCELLED, as grpcwire names the same failure for gRPC, and
		// logged at debug level (ingest's refusalLevel); the status
		// (499, nginx's "client closed request") likely reaches nobody.
		st := grpcwire.Errorf(grpcwire.Canceled, "cannot read request body: %v", err)
		return nil, ingest.HTTPStatus(st), st
	}
	enc.bodyRead = true
	return *raw, 0, nil
}

// writeHTTPError answers with httpStatus and a google.rpc.Status body in
// the exchange's encoding. Throttling statuses (429, 503) carry Retry-After
// when the status has a retry delay (OTLP v1.11 "OTLP/HTTP Throttling").
func (h *Handler) writeHTTPError(w http.ResponseWriter, r *http.Request, enc httpEncoding, httpStatus int, st *grpcwire.Status) {
	h.recordRefusal(r, ingest.HTTP, httpStatus, st)
	unread := r.ProtoMajor == 1 && !enc.bodyRead && r.ContentLength != 0
	if unread {
		// Refused before or while reading the body: answer, then close.
		// Without "Connection: close" net/http would drain the body, with
		// no deadline, before answering — a client that lied about
		// Content-Length would never get the answer. With it, net/http
		// answers first and then drains up to 256 KiB before closing,
		// which lets a client still uploading finish and read the answer
		// (closing on unread data sends a TCP reset that can destroy the
		// answer in flight) — but again with no deadline. So the read
		// deadline is set to unreadBodyLinger once the answer is out: a
		// stalled or refused client cannot hold the connection. An error
		// after the whole body was read keeps the connection ("The client
		// SHOULD keep the connection alive between requests").
		w.Header().Set("Connection", "close")
		defer func() {
			rc := http.NewResponseController(w)
			_ = rc.Flush()
			_ = rc.SetReadDeadline(time.Now().Add(h.unreadLinger))
		}()
	}
	// 409: an idempotency key whose first request is still in flight
	// (docs/exactly-once.md) says when to come back too.
	if st.RetryDelay > 0 && (httpStatus == http.StatusTooManyRequests || httpStatus == http.StatusServiceUnavailable || httpStatus == http.StatusConflict) {
		w.Header().Set("Retry-After", retryAfter(st.RetryDelay))
	}
	body := st.AppendProto(nil)
	if enc.json {
		js, err := otlpjson.Marshal(nil, otlpjson.Status, body)
		if err == nil {
			body = js
		} else {
			body = fmt.Appendf(nil, `{"code":%d,"message":%q}`, st.Code, grpcwire.BoundMessage(st.Message))
		}
	}
	h.writeHTTPBody(w, enc, httpStatus, body)
}

func (h *Handler) writeHTTPBody(w http.ResponseWriter, enc httpEncoding, httpStatus int, body []byte) {
	hdr := w.Header()
	hdr.Set("Content-Type", enc.contentType)
	if enc.gzipReply && len(body) > 0 {
		if gz, err := compression.Compress(nil, compression.Gzip, body); err == nil {
			hdr.Set("Content-Encoding", "gzip")
			body = gz
		}
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	g := h.guards.get(nil, w)
	g.begin()
	w.WriteHeader(httpStatus)
	w.Write(body)
	http.NewResponseController(w).Flush()
	h.guards.put(g)
}

// contentCoding returns the codec of a request body from its
// Content-Encoding fields. Several fields are one comma-separated list
// (RFC 9110 section 5.3) of codings in the order they were applied;
// identity entries change nothing and are dropped, and at most one real
// coding remains, since no OTLP client stacks compressions.
func contentCoding(h http.Header) (compression.Codec, error) {
	codec := compression.Identity
	n := 0
	for _, field := range h.Values("Content-Encoding") {
		for name := range strings.SplitSeq(field, ",") {
			name = strings.TrimSpace(name)
			if name == "" || strings.EqualFold(name, "identity") {
				continue
			}
			c, err := compression.ParseContentCoding(strings.ToLower(name))
			if err != nil {
				return codec, err
			}
			codec = c
			n++
		}
	}
	if n > 1 {
		return codec, errors.New("stacked content codings are not supported")
	}
	return codec, nil
}

// acceptsGzip reports whether an Accept-Encoding value allows gzip with a
// non-zero quality (RFC 9110 section 12.5.3).
func acceptsGzip(v string) bool {
	for part := range strings.SplitSeq(v, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.TrimSpace(name) != "*" {
			continue
		}
		q := strings.TrimSpace(params)
		if strings.HasPrefix(q, "q=") {
			if f, err := strconv.ParseFloat(q[2:], 64); err == nil && f == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// retryAfter is the Retry-After value for d, in whole seconds, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}
