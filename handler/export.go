package handler

import (
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
)

// exportUnary serves one OTLP Export call: read the message (charged to
// the request's ticket as its frames arrive), hand it to the pipeline, and
// answer.
//
// OTLP v1.11, "OTLP/gRPC Response": on full success the response has
// partial_success unset (not an empty message — the collector sends an empty
// one; the spec says the server MUST leave the field unset); when some items
// are rejected, partial_success carries their count and a message, and the
// call is still OK so the client does not retry them; a request that cannot
// be decoded at all gets INVALID_ARGUMENT (not retryable).
//
// The request is read and answered here, on net/http's goroutine; the
// pipeline's work between runs on an export worker (exportworkers.go).
func (h *Handler) exportUnary(call *grpcwire.Call, kind *signalKind) {
	r := call.Request()
	key, kst := grpcIdempotencyKey(r.Header)
	if kst != nil {
		h.refuseGRPC(call, ingest.GRPC, kst)
		return
	}
	t := h.getTicket(call.Context())
	defer h.putTicket(t)
	h.p.StartLog(call.Context(), t, r.RemoteAddr, ingest.GRPC, kind.signal)
	call.SetBudget(t)
	// The body read timeout is watched by a read guard rather than a
	// read deadline on the stream: a deadline is a message to
	// net/http's connection goroutine and a timer per call; a guard is
	// two atomic stores and a clock read, its watchdog shared by every
	// call. The request is cut off between the timeout and 1.25 times
	// it, with the same DEADLINE_EXCEEDED. (Here, not in a helper: a
	// request stalled in the read holds this stack, and a deeper one
	// doubled it, measured by TestHostileStalledStreamFlood.)
	var g *writeGuard
	if h.readGuards != nil {
		g = h.readGuards.get(call, nil)
		call.WatchReadTimeout()
		g.begin()
	}
	var st *grpcwire.Status
	t.Msg, t.Scratch, st = call.ReadUnary(t.Msg, t.Scratch)
	h.readGuards.put(g)
	if st != nil {
		t.Release()
		h.p.Refused(t, ingest.GRPC, kind.signal, st)
		h.refuseGRPC(call, ingest.GRPC, st)
		return
	}
	// Export releases the request's budget before it returns, so a
	// client that does not read the response holds none.
	res, err := h.exports.export(h.p, call.Context(), ingest.Request{
		Transport: ingest.GRPC, Signal: kind.signal, Body: t.Msg,
		WireSize: call.LastWireSize(), Ticket: t, IdempotencyKey: key,
	})
	if err != nil {
		h.refuseGRPC(call, ingest.GRPC, err.(*grpcwire.Status))
		return
	}
	t.Resp = appendExportResponse(t.Resp[:0], res)
	if err := h.writeUnaryResponse(call, t.Resp); err != nil {
		h.log.Debug("cannot write response", "peer", r.RemoteAddr, "err", err)
	}
}
