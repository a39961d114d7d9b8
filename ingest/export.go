package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpjson"
	"github.com/otlp-lite/otlp-lite/otlppb"
	"github.com/otlp-lite/otlp-lite/storage"
)

// Export validates one request and stores its valid items, then counts it
// in the metrics and its request log. See Request for what the transport
// has done before (read and charged the body) and what Export does
// (charge, decompress, transcode, validate, store).
//
// OTLP v1.11, "Full Success" and "Partial Success": a nil error means the
// valid items are stored as durably as the sink promises; Result.Rejected
// items were invalid and are not stored, and a client is not to retry
// them. Otherwise the error is a *grpcwire.Status (its code, message,
// retry delay and BadRequest details are what each transport conveys):
// otlp.Retryable tells whether sending the same request again may
// succeed (storage unavailable, admission busy, quota throttled, ctx
// ended) or never can (undecodable, too large, storage.ErrRejected). A
// request of which nothing was valid (or an empty one) is a success with
// nothing stored.
//
// Export never retains req.Body; the ticket's charge is returned before
// it returns.
func (p *Pipeline) Export(ctx context.Context, req Request) (Result, error) {
	kind := kindOf(req.Signal)
	if kind == nil {
		return Result{}, grpcwire.Errorf(grpcwire.InvalidArgument, "cannot ingest %v: not an OTLP signal", req.Signal)
	}
	if req.Transport >= numTransports {
		return Result{}, grpcwire.Errorf(grpcwire.InvalidArgument, "cannot ingest %v: unknown transport %d", req.Signal, req.Transport)
	}
	if len(req.IdempotencyKey) > otlp.MaxIdempotencyKeyLen {
		return Result{}, grpcwire.Errorf(grpcwire.InvalidArgument, "idempotency key of %d bytes is longer than %d bytes", len(req.IdempotencyKey), otlp.MaxIdempotencyKeyLen)
	}
	t := req.Ticket
	own := t == nil
	if own {
		t = p.Take(ctx)
		defer p.Done(t)
	}
	// The request's connection is busy, not quiet, while the pipeline
	// works on it (connstate.Conn.AddBusy): under a flood that fills the
	// stream bound, the server sheds quiet connections to make room, and
	// an honest request that waited for its unit must not be shed while
	// it is served.
	cs := t.c.conn // Take found it in ctx
	cs.AddBusy(1)
	defer cs.AddBusy(-1)
	var res Result
	st := p.export(ctx, kind, t, &req, own, &res)
	// Stored (or not): the request's budget is free before the response
	// is written, so a client that does not read it holds none.
	t.c.release()
	p.countRequest(t, req.Transport, req.Signal, &res, st)
	if st != nil {
		res.Throttled = t.Throttled()
		return res, st
	}
	return res, nil
}

// Refused counts a request its transport refused before it reached
// Export (its body could not be read, was too large, or was refused by
// admission while it arrived), with st, in the metrics and the request
// log, as Export counts the requests it answers.
func (p *Pipeline) Refused(t *Ticket, tr Transport, sig otlp.Signal, st *grpcwire.Status) {
	if kindOf(sig) == nil || tr >= numTransports {
		return
	}
	p.countRequest(t, tr, sig, &Result{}, st)
}

// export brings req.Body to validated protobuf in t's buffers and stores
// it, recording what it did in *out, which is zero when it is called.
// own says Export took t itself (Request.Ticket was nil). The result is
// written through out rather than returned, here and below, so that it
// is not copied at each of the calls between Export and the check.
func (p *Pipeline) export(ctx context.Context, kind *signalKind, t *Ticket, req *Request, own bool, out *Result) *grpcwire.Status {
	body := req.Body
	limit := p.limit
	if own {
		if len(body) > limit {
			return grpcwire.Errorf(grpcwire.ResourceExhausted, "%s of %d bytes is larger than the %d-byte message limit", kind.Request, len(body), limit)
		}
		if err := t.c.Charge(ctx, len(body)); err != nil {
			if st, ok := errors.AsType[*grpcwire.Status](err); ok {
				return st
			}
			return grpcwire.Errorf(grpcwire.Unavailable, "cannot admit %s: %v", kind.Request, err)
		}
	} else if n := t.c.tenantMaxRequest; n > 0 && n < int64(limit) {
		// The tenant's max_request_bytes bounds its decompression too.
		limit = int(n)
	}
	wire := req.WireSize
	if wire == 0 {
		wire = len(body)
	}
	if req.Codec != compression.Identity {
		dst := &t.Msg
		if req.Format == JSON {
			dst = &t.filtered
		}
		var err error
		*dst, err = compression.DecompressCharged((*dst)[:0], req.Codec, body, limit, t.c.Grow)
		if err != nil {
			if errors.Is(err, compression.ErrTooLarge) {
				return BodyTooLarge(limit)
			}
			if st, ok := errors.AsType[*grpcwire.Status](err); ok {
				return st
			}
			return grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decompress %s body: %v", req.Codec, err)
		}
		body = *dst
	}
	size := req.Size
	if size == 0 {
		size = len(body)
	}
	p.countBytes(t, req.Transport, wire, size)
	if req.Format == JSON {
		// The protobuf form is the request every later step sees, held
		// beside the JSON: it is held to the same limit (OTLP applies
		// the limit after decompression; a transcoding is the same
		// thing), checked while it is produced, and charged to the
		// request's ticket as it grows: as bytes that arrived when the
		// transport charges its reading (they may wait for room), as
		// produced bytes (never waiting) when Export charged the body.
		grow := t.c.Grow
		if !own {
			grow = t.ChargeFunc(ctx)
		}
		var err error
		t.Msg, err = otlpjson.UnmarshalBounded(t.Msg[:0], kind.jsonRequest, body, otlpjson.Bound{Max: limit, Charge: grow})
		if err != nil {
			if errors.Is(err, otlpjson.ErrTooLarge) {
				if own {
					return grpcwire.Errorf(grpcwire.ResourceExhausted, "%s of %d bytes of JSON is larger than the %d-byte message limit as protobuf", kind.Request, len(body), limit)
				}
				return grpcwire.Errorf(grpcwire.ResourceExhausted,
					"request body exceeds the %d-byte limit as protobuf (the limit holds on the protobuf form of a JSON request); split the batch", limit)
			}
			if st, ok := errors.AsType[*grpcwire.Status](err); ok {
				return st
			}
			return badRequest(grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode %s JSON: %v", kind.Request, err), err)
		}
		body = t.Msg
	}
	if req.IdempotencyKey != "" && p.dedup != nil {
		st, res, done := p.dedupBegin(ctx, kind, t, req.IdempotencyKey, body)
		if done {
			*out = res
			return st
		}
		// A panic below (a bug; net/http recovers it and serves on)
		// forgets the key, as a failure does: left in flight, it would
		// refuse every retry until it aged out of the window.
		defer p.dedupForget(t)
		st = p.validateAndStore(ctx, kind, t, body, out)
		p.dedupFinish(t, out, st)
		return st
	}
	return p.validateAndStore(ctx, kind, t, body, out)
}

// BodyTooLarge is the refusal of a request body over limit bytes,
// compressed or decompressed (OTLP/HTTP answers it 413).
func BodyTooLarge(limit int) *grpcwire.Status {
	return grpcwire.Errorf(grpcwire.ResourceExhausted,
		"request body exceeds the %d-byte limit (compressed or decompressed); split the batch", limit)
}

// countTenant counts a request's outcome for its tenant, if tenancy is on.
// countRequest calls it, so every path that counts a request counts it.
func (p *Pipeline) countTenant(t *Ticket, out *Result, st *grpcwire.Status) {
	if t.tenant != nil {
		t.tenant.m.Load().count(st, t.throttled || t.c.throttled, out.chargedItems, out.chargedBytes)
		if t.rlog.on {
			// The name as sent (the state of an overflowed tenant is
			// shared): a checked name, at most otlp.MaxTenantNameLength.
			t.rlog.tenant, _ = otlp.TenantFrom(t.rlog.ctx)
		}
	}
}

func (p *Pipeline) validateAndStore(ctx context.Context, kind *signalKind, t *Ticket, msg []byte, out *Result) *grpcwire.Status {
	ts := t.tenant
	if ts != nil {
		// Bytes are known before decoding: a request the tenant's byte
		// bucket cannot hold yet is throttled before the decoder
		// spends anything on it.
		st, throttled := ts.beforeDecode(p.ten.quotas, p.ten.now(), len(msg))
		if st != nil {
			t.throttled = throttled
			return st
		}
	}
	if p.items == nil {
		st, _ := p.checkAndStore(ctx, kind, t, msg, &p.decodeOpts, nil, out)
		return st
	}
	// The decoded-item path (storage.ItemSink): the batch's visitor
	// rides the validation walk, and the batch is committed where a byte
	// sink is written, or else discarded, exactly once.
	batch, err := p.items.BeginItems(ctx, kind.signal)
	if err != nil {
		return p.storageStatus(ctx, err)
	}
	t.visit.Visitor = batch.Visitor()
	t.visitOpts = p.decodeOpts
	t.visitOpts.Visit = &t.visit
	st, committed := p.checkAndStore(ctx, kind, t, msg, &t.visitOpts, batch, out)
	if !committed {
		batch.Discard()
	}
	t.visit.Visitor, t.visitOpts.Visit = nil, nil // the pool keeps no engine reachable
	return st
}

// checkAndStore validates msg with opts and stores what it accepts: into
// batch (Commit) when it is not nil, else into the byte sink, recording
// what it did in *out (zero when it is called). committed reports whether
// batch.Commit was called.
func (p *Pipeline) checkAndStore(ctx context.Context, kind *signalKind, t *Ticket, msg []byte, opts *otlpdecode.Options, batch storage.ItemBatch, out *Result) (_ *grpcwire.Status, committed bool) {
	ts := t.tenant
	res, err := p.check(t, kind, msg, opts) // the check pool, unless ExportValidated (prevalidated.go)
	if err != nil {
		if dp, ok := errors.AsType[*decoderPanic](err); ok {
			// Our bug, not the client's: INTERNAL, and the stack for
			// the report.
			p.log.Error("decoder panicked; the request was refused", "request", kind.Request, "panic", fmt.Sprint(dp.value), "stack", string(dp.stack))
			return grpcwire.Errorf(grpcwire.Internal, "cannot decode %s: internal error (%v); please report it", kind.Request, dp.value), false
		}
		return badRequest(grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode %s: %v", kind.Request, err), err), false
	}
	*out = Result{Items: res.Items, Rejected: res.Rejected, counted: res.Items, countedRejected: res.Rejected}
	if kind.countSamples {
		out.counted, out.countedRejected = res.Samples, res.RejectedSamples
	}
	if res.IgnoredStrindex > 0 {
		p.warnIgnoredStrindex(kind, res.IgnoredStrindex)
	}
	data := msg
	if res.Rejected > 0 {
		out.Message = fmt.Sprintf("%d of %d %s rejected; first: %s", res.Rejected, res.Items, kind.Items, res.FirstRejection)
		// An item sink needs the bytes without the rejected items only
		// for their size, which its tenant's quota is charged (as a
		// byte sink's tenant is): filtered then, and only then.
		if batch == nil || ts != nil {
			t.filtered, err = kind.filter(t.filtered[:0], msg, opts)
			if err != nil {
				// Check accepted the same bytes, so this is our bug.
				return grpcwire.Errorf(grpcwire.Internal, "cannot remove rejected %s: %v", kind.Items, err), false
			}
			data = t.filtered
		}
	}
	stored := res.Items - res.Rejected
	if stored == 0 {
		// An empty request, or one whose every item was rejected: nothing
		// to store, and nothing for the client to retry.
		return nil, false
	}
	if ctx.Err() != nil {
		// The client has stopped waiting (its deadline passed while the
		// request was read, waited or validated): storing it now would
		// store data the client will resend, since it is told the
		// request failed.
		return DeadlineStatus(ctx, "before the data was stored; nothing was stored"), false
	}
	if ts != nil {
		// Items are known only once decoded: they are charged here,
		// with the bytes, both or neither, before anything is stored
		// (a throttled request stores nothing and costs its tenant
		// nothing but the decoding). Charged is what is stored, in the
		// quota's units: the bytes handed to the sink (without the
		// rejected items), and its items, samples for profiles.
		out.chargedItems, out.chargedBytes = out.counted-out.countedRejected, len(data)
		st, throttled := ts.take(p.ten.quotas, p.ten.now(), out.chargedBytes, out.chargedItems)
		if st != nil {
			out.chargedItems, out.chargedBytes = 0, 0
			t.throttled = throttled
			return st, false
		}
	}
	start := time.Now()
	if batch != nil {
		committed = true
		err = batch.Commit(ctx)
	} else if t.dedup != nil && p.keyed != nil {
		// The key in the record, in the same write (storage.KeyedSink).
		err = p.keyed.WriteKeyed(ctx, kind.signal, data, stored, storage.StoredKey{
			Key: t.dedup.k.key, Fingerprint: t.dedup.fp, Rejected: res.Rejected, Message: cutMessage(out.Message)})
	} else {
		err = p.sink.Write(ctx, kind.signal, data, stored)
	}
	p.m.observeStorage(kind.signal, start)
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
		return p.storageStatus(ctx, err), committed
	}
	return nil, committed
}

// warnIgnoredStrindex logs that a traces, metrics or logs request used
// KeyValue.key_strindex or AnyValue.string_value_strindex. common.proto
// (v1.11) defines them for profiles only and asks a receiver of another
// signal to log a warning and process the data as if they were absent: the
// request is stored as sent (otlpdecode checks nothing about them there).
// The warning shares the refusal log's rate limit.
func (p *Pipeline) warnIgnoredStrindex(kind *signalKind, n int) {
	if ok, _ := p.logLimit.allow(time.Now()); ok {
		p.log.Warn("request uses *_strindex fields, defined for profiles only; processed as if absent",
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
	if field, desc, ok := otlppb.ErrorPosition(err); ok {
		v = grpcwire.FieldViolation{Field: field, Description: desc}
	}
	st.Violations = []grpcwire.FieldViolation{v}
	return st
}

// storageStatus maps a Sink error to the status the client gets. Storage
// failures are retryable — the data was not stored and the client still has
// it (OTLP v1.11 "Failures": UNAVAILABLE is retryable, with RetryInfo telling
// when) — except ErrRejected, which no retry can fix.
func (p *Pipeline) storageStatus(ctx context.Context, err error) *grpcwire.Status {
	if ctx.Err() != nil {
		// The sink stopped waiting, not necessarily writing: a record
		// already handed to the disk log is still written. Say so, as a
		// retry may then store it twice (OTLP allows duplicates; it does
		// not allow claiming a loss that did not happen).
		return DeadlineStatus(ctx, "before storage confirmed the data (it may still be stored; a retry can duplicate it)")
	}
	if errors.Is(err, storage.ErrRejected) {
		// Retrying the same request cannot succeed: INVALID_ARGUMENT,
		// HTTP 400, stream FailedNoneRetryable.
		return grpcwire.Errorf(grpcwire.InvalidArgument, "storage cannot accept this request as sent: %v", err)
	}
	st := grpcwire.Errorf(grpcwire.Unavailable, "cannot store data, retry later: %v", err)
	st.RetryDelay = p.retryDelay
	return st
}

// DeadlineStatus is the status of a request whose context ended: its
// deadline passed (DEADLINE_EXCEEDED) or the client went away (CANCELLED);
// when says at what point.
func DeadlineStatus(ctx context.Context, when string) *grpcwire.Status {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return grpcwire.Errorf(grpcwire.DeadlineExceeded, "deadline exceeded %s", when)
	}
	return grpcwire.Errorf(grpcwire.Canceled, "request canceled %s", when)
}
