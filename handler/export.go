package handler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/storage"
)

// exportOutcome is what one export request came to.
type exportOutcome struct {
	items    int // items in the request
	rejected int // items refused as invalid (partial success)
	message  string
	// counted and countedRejected are items and rejected in the unit of
	// the otelcol_receiver_* counters: the items, or for profiles their
	// samples (signalKind.countSamples).
	counted, countedRejected int
	// chargedItems and chargedBytes are what the request cost its
	// tenant's quota: the items (profile samples for profiles) and
	// protobuf bytes handed to the sink, unless the sink promised that
	// nothing was stored (storage.ErrNotStored).
	chargedItems, chargedBytes int
}

// exportUnary serves one OTLP Export call: read the message, validate it,
// store the valid items, and answer.
//
// OTLP v1.11, "OTLP/gRPC Response": on full success the response has
// partial_success unset (not an empty message — the collector sends an empty
// one; the spec says the server MUST leave the field unset); when some items
// are rejected, partial_success carries their count and a message, and the
// call is still OK so the client does not retry them; a request that cannot
// be decoded at all gets INVALID_ARGUMENT (not retryable).
func (h *Handler) exportUnary(call *grpcwire.Call, kind *signalKind) {
	bufs := h.getBuffers(call.Context())
	defer h.putBuffers(bufs)
	h.startLog(bufs, call.Request(), transportGRPC, kind.signal)
	call.SetBudget(&bufs.ticket)
	var st *grpcwire.Status
	bufs.msg, bufs.scratch, st = call.ReadUnary(bufs.msg, bufs.scratch)
	if st != nil {
		bufs.ticket.release()
		h.countRequest(bufs, transportGRPC, kind.signal, exportOutcome{}, st)
		h.refuseGRPC(call, transportGRPC, st)
		return
	}
	h.countBytes(bufs, transportGRPC, call.LastWireSize(), len(bufs.msg))
	out, st := h.export(call.Context(), transportGRPC, kind, bufs)
	// Stored (or not): the request's budget is free before the response
	// is written, so a client that does not read it holds none.
	bufs.ticket.release()
	if st != nil {
		h.refuseGRPC(call, transportGRPC, st)
		return
	}
	bufs.resp = appendExportResponse(bufs.resp[:0], out)
	if err := h.writeUnaryResponse(call, bufs.resp); err != nil {
		h.log.Debug("cannot write response", "peer", call.Request().RemoteAddr, "err", err)
	}
}

// export validates bufs.msg and stores its valid items. It is shared by every
// transport; the status it returns is translated to each one's form. It
// counts the request in the metrics.
func (h *Handler) export(ctx context.Context, t transport, kind *signalKind, bufs *requestBuffers) (exportOutcome, *grpcwire.Status) {
	out, st := h.validateAndStore(ctx, kind, bufs)
	h.countRequest(bufs, t, kind.signal, out, st)
	return out, st
}

// countTenant counts a request's outcome for its tenant, if tenancy is on.
// countRequest calls it, so every path that counts a request counts it.
func (h *Handler) countTenant(bufs *requestBuffers, out exportOutcome, st *grpcwire.Status) {
	if bufs.tenant != nil {
		bufs.tenant.m.Load().count(st, bufs.throttled || bufs.ticket.throttled, out.chargedItems, out.chargedBytes)
		if bufs.rlog.on {
			// The name as sent (the state of an overflowed tenant is
			// shared): a checked name, at most storage.MaxTenantNameLength.
			bufs.rlog.tenant, _ = storage.TenantFrom(bufs.rlog.r.Context())
		}
	}
}

func (h *Handler) validateAndStore(ctx context.Context, kind *signalKind, bufs *requestBuffers) (exportOutcome, *grpcwire.Status) {
	ts := bufs.tenant
	if ts != nil {
		// Bytes are known before decoding: a request the tenant's byte
		// bucket cannot hold yet is throttled before the decoder
		// spends anything on it.
		st, throttled := ts.beforeDecode(h.ten.reg.quotas, h.ten.reg.now(), len(bufs.msg))
		if st != nil {
			bufs.throttled = throttled
			return exportOutcome{}, st
		}
	}
	res, err := h.checks.run(&bufs.check, kind.check, bufs.msg, &h.decodeOpts)
	if p, ok := errors.AsType[*decoderPanic](err); ok {
		// Our bug, not the client's: INTERNAL, and the stack for the
		// report.
		h.log.Error("decoder panicked; the request was refused", "request", kind.Request, "panic", fmt.Sprint(p.value), "stack", string(p.stack))
		return exportOutcome{}, grpcwire.Errorf(grpcwire.Internal, "cannot decode %s: internal error (%v); please report it", kind.Request, p.value)
	}
	if err != nil {
		return exportOutcome{}, badRequest(grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode %s: %v", kind.Request, err), err)
	}
	out := exportOutcome{items: res.Items, rejected: res.Rejected, counted: res.Items, countedRejected: res.Rejected}
	if kind.countSamples {
		out.counted, out.countedRejected = res.Samples, res.RejectedSamples
	}
	if res.IgnoredStrindex > 0 {
		h.warnIgnoredStrindex(kind, res.IgnoredStrindex)
	}
	data := bufs.msg
	if res.Rejected > 0 {
		out.message = fmt.Sprintf("%d of %d %s rejected; first: %s", res.Rejected, res.Items, kind.Items, res.FirstRejection)
		bufs.filtered, err = kind.filter(bufs.filtered[:0], bufs.msg, &h.decodeOpts)
		if err != nil {
			// Check accepted the same bytes, so this is our bug.
			return out, grpcwire.Errorf(grpcwire.Internal, "cannot remove rejected %s: %v", kind.Items, err)
		}
		data = bufs.filtered
	}
	stored := res.Items - res.Rejected
	if stored == 0 {
		// An empty request, or one whose every item was rejected: nothing
		// to store, and nothing for the client to retry.
		return out, nil
	}
	if ctx.Err() != nil {
		// The client has stopped waiting (its deadline passed while the
		// request was read, waited or validated): storing it now would
		// store data the client will resend, since it is told the
		// request failed.
		return out, deadlineStatus(ctx, "before the data was stored; nothing was stored")
	}
	if ts != nil {
		// Items are known only once decoded: they are charged here,
		// with the bytes, both or neither, before anything is stored
		// (a throttled request stores nothing and costs its tenant
		// nothing but the decoding). Charged is what is stored, in the
		// quota's units: the bytes handed to the sink (without the
		// rejected items), and its items, samples for profiles.
		out.chargedItems, out.chargedBytes = out.counted-out.countedRejected, len(data)
		st, throttled := ts.take(h.ten.reg.quotas, h.ten.reg.now(), out.chargedBytes, out.chargedItems)
		if st != nil {
			out.chargedItems, out.chargedBytes = 0, 0
			bufs.throttled = throttled
			return out, st
		}
	}
	start := time.Now()
	err = h.sink.Write(ctx, kind.signal, data, stored)
	h.m.observeStorage(kind.signal, start)
	if err != nil {
		if ts != nil && errors.Is(err, storage.ErrNotStored) {
			// The sink promises nothing was stored: the client sends
			// it again, and is not charged twice. Any other error may
			// have stored it (a deadline that passed during the
			// durable write): it stays charged, or a client timing
			// its deadline to that window would store without limit.
			ts.refund(out.chargedBytes, out.chargedItems)
			out.chargedItems, out.chargedBytes = 0, 0
		}
		return out, h.storageStatus(ctx, err)
	}
	return out, nil
}

// warnIgnoredStrindex logs that a traces, metrics or logs request used
// KeyValue.key_strindex or AnyValue.string_value_strindex. common.proto
// (v1.11) defines them for profiles only and asks a receiver of another
// signal to log a warning and process the data as if they were absent: the
// request is stored as sent (otlpdecode checks nothing about them there).
// The warning shares the refusal log's rate limit.
func (h *Handler) warnIgnoredStrindex(kind *signalKind, n int) {
	if ok, _ := h.logLimit.allow(time.Now()); ok {
		h.log.Warn("request uses *_strindex fields, defined for profiles only; processed as if absent",
			"signal", kind.Name, "fields", n)
	}
}

// badRequest adds to st, an INVALID_ARGUMENT for undecodable data, the
// google.rpc.BadRequest detail OTLP asks for ("Bad Data": the Status
// "SHOULD contain a BadRequest that describes the bad data"): the position
// of the bad data inside the request, when the decoder knows it, and what
// is wrong there.
func badRequest(st *grpcwire.Status, err error) *grpcwire.Status {
	v := grpcwire.FieldViolation{Description: err.Error()}
	if field, desc, ok := otlpdecode.ErrorPosition(err); ok {
		v = grpcwire.FieldViolation{Field: field, Description: desc}
	}
	st.Violations = []grpcwire.FieldViolation{v}
	return st
}

// storageStatus maps a Sink error to the status the client gets. Storage
// failures are retryable — the data was not stored and the client still has
// it (OTLP v1.11 "Failures": UNAVAILABLE is retryable, with RetryInfo telling
// when) — except ErrRejected, which no retry can fix.
func (h *Handler) storageStatus(ctx context.Context, err error) *grpcwire.Status {
	if ctx.Err() != nil {
		// The sink stopped waiting, not necessarily writing: a record
		// already handed to the disk log is still written. Say so, as a
		// retry may then store it twice (OTLP allows duplicates; it does
		// not allow claiming a loss that did not happen).
		return deadlineStatus(ctx, "before storage confirmed the data (it may still be stored; a retry can duplicate it)")
	}
	if errors.Is(err, storage.ErrRejected) {
		// Retrying the same request cannot succeed: INVALID_ARGUMENT,
		// HTTP 400, stream FailedNoneRetryable.
		return grpcwire.Errorf(grpcwire.InvalidArgument, "storage cannot accept this request as sent: %v", err)
	}
	st := grpcwire.Errorf(grpcwire.Unavailable, "cannot store data, retry later: %v", err)
	st.RetryDelay = h.retryDelay
	return st
}

// deadlineStatus is the status of a request whose context ended: its
// deadline passed (DEADLINE_EXCEEDED) or the client went away (CANCELLED);
// when says at what point.
func deadlineStatus(ctx context.Context, when string) *grpcwire.Status {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return grpcwire.Errorf(grpcwire.DeadlineExceeded, "deadline exceeded %s", when)
	}
	return grpcwire.Errorf(grpcwire.Canceled, "request canceled %s", when)
}
