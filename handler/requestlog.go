package handler

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/storage"
)

// The request log: at debug level, one line per export request once it is
// answered (for a stream, per request message), with what an operator
// needs to follow one client without a packet capture:
//
//	level=DEBUG msg=request peer=10.0.0.7:51234 transport=grpc signal=traces
//	  items=500 rejected=0 wire_bytes=21034 bytes=98311 result=OK duration=1.2ms
//
// transport is the otlplite_requests_total label (grpc, grpc_stream, http),
// so a line can be matched with its series; HTTP lines add encoding
// (protobuf or json) and http_status. A request that is not OK adds reason
// (the otlplite_refusals_total label) and the message its client got.
// Requests refused before their signal is known (unknown path, method,
// content type, failed authentication) have no request line: they have the
// rate-limited "request refused" line of refuse.go.
//
// Cost when debug is off: one Logger.Enabled call per request (startLog)
// and a few stores; no clock read, no allocation (BenchmarkExport* in
// handler_timing_test.go report allocs/op; TestRequestLogOffAllocs pins it).

// requestLog is the debug record of one request, kept in its pooled
// requestBuffers so that it costs no allocation.
type requestLog struct {
	on    bool // debug logging was enabled when the request started
	done  bool // countRequest recorded an outcome
	json  bool // OTLP/JSON body (HTTP)
	t     transport
	sig   storage.Signal
	r     *http.Request
	start time.Time
	// tenant is the request's tenant, logged when not empty. Requests
	// carry no tenant yet; whatever resolves one (the authenticator, a
	// header) sets it here, and the line shows it with no other change.
	tenant      string
	wire, bytes int
	out         exportOutcome
	st          *grpcwire.Status
	httpStatus  int
}

// startLog begins the request log of bufs, if debug logging is on: the
// only cost of the request log when it is off is this Enabled check.
func (h *Handler) startLog(bufs *requestBuffers, r *http.Request, t transport, sig storage.Signal) {
	if !h.log.Enabled(r.Context(), slog.LevelDebug) {
		return
	}
	bufs.rlog = requestLog{on: true, t: t, sig: sig, r: r, start: time.Now()}
}

// countBytes counts a request's bytes, on the wire and decompressed, in the
// metrics and its request log.
func (h *Handler) countBytes(bufs *requestBuffers, t transport, wire, decompressed int) {
	h.m.countBytes(t, wire, decompressed)
	if bufs.rlog.on {
		bufs.rlog.wire, bufs.rlog.bytes = wire, decompressed
	}
}

// countRequest counts one export request's outcome in the metrics and
// records it in its request log, which putBuffers then writes.
func (h *Handler) countRequest(bufs *requestBuffers, t transport, sig storage.Signal, out exportOutcome, st *grpcwire.Status) {
	h.m.countRequest(t, sig, out, st)
	h.countTenant(bufs, out, st)
	if bufs.rlog.on {
		bufs.rlog.done, bufs.rlog.out, bufs.rlog.st = true, out, st
	}
}

// writeRequestLog writes the line of a request that has an outcome, and
// clears the record (it must not keep the request reachable from the pool).
func (h *Handler) writeRequestLog(l *requestLog) {
	if l.done {
		h.logRequestLine(l)
	}
	*l = requestLog{}
}

func (h *Handler) logRequestLine(l *requestLog) {
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs,
		slog.String("peer", l.r.RemoteAddr),
		slog.String("transport", transportNames[l.t]),
		slog.String("signal", l.sig.String()))
	if l.tenant != "" {
		attrs = append(attrs, slog.String("tenant", l.tenant))
	}
	if l.t == transportHTTP {
		enc := "protobuf"
		if l.json {
			enc = "json"
		}
		attrs = append(attrs, slog.String("encoding", enc))
	}
	attrs = append(attrs,
		slog.Int("items", l.out.items),
		slog.Int("rejected", l.out.rejected),
		slog.Int("wire_bytes", l.wire),
		slog.Int("bytes", l.bytes))
	result := "OK"
	if l.st != nil {
		result = l.st.Code.String()
	}
	attrs = append(attrs, slog.String("result", result))
	if l.t == transportHTTP {
		status := l.httpStatus
		if status == 0 {
			status = http.StatusOK
			if l.st != nil {
				status = httpStatusOf(l.st)
			}
		}
		attrs = append(attrs, slog.Int("http_status", status))
	}
	if l.st != nil {
		attrs = append(attrs,
			slog.String("reason", reasonNames[reasonOf(l.httpStatus, l.st)]),
			slog.String("message", l.st.Message))
	} else if l.out.rejected > 0 {
		attrs = append(attrs, slog.String("message", l.out.message))
	}
	attrs = append(attrs, slog.Duration("duration", time.Since(l.start)))
	h.log.LogAttrs(l.r.Context(), slog.LevelDebug, "request", attrs...)
}
