package handler

import (
	"context"
	"errors"
	"fmt"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// IngestFormat is the encoding of a body given to Ingest.
type IngestFormat uint8

const (
	// IngestProto is the protobuf Export*ServiceRequest (the Collector's
	// Kafka encoding otlp_proto).
	IngestProto IngestFormat = iota
	// IngestJSON is its OTLP/JSON form (otlp_json).
	IngestJSON
)

// IngestResult is what Ingest did with a request.
type IngestResult struct {
	// Items is the number of items (spans, data points, log records) in
	// the request; Rejected of them were invalid and not stored (the
	// receivers' partial success), Message saying why.
	Items, Rejected int
	Message         string
}

// ErrNotRetryable is wrapped by Ingest's error when ingesting the same body
// again can never succeed: it is not a valid OTLP request, it is larger
// than MaxRecvMsgSize or the whole admission budget, or the sink refused
// it with storage.ErrRejected. The error also wraps the *grpcwire.Status
// a receiver would have answered.
var ErrNotRetryable = errors.New("request cannot be stored as sent")

// Ingest validates and stores one export request that did not arrive over
// a receiver (a Kafka record, a file being replayed) exactly as a unary
// OTLP request is: it is charged against the admission budget (waiting for
// room as a request does), transcoded from OTLP/JSON when format says so,
// validated, its invalid items removed, and written to the Handler's sink.
// It is counted in the handler's metrics under transport "kafka".
//
// A nil error means the valid items are stored as durably as the sink
// promises. Otherwise the error wraps ErrNotRetryable when no retry can
// help; any other error (admission queue full, storage unavailable or
// overloaded, ctx ended) is worth retrying later. Ingest does not retain
// body.
func (h *Handler) Ingest(ctx context.Context, sig otlp.Signal, body []byte, format IngestFormat) (IngestResult, error) {
	kind := kindOf(sig)
	if kind == nil {
		return IngestResult{}, fmt.Errorf("cannot ingest %v: %w", sig, ErrNotRetryable)
	}
	bufs := h.getBuffers(ctx)
	defer h.putBuffers(bufs)
	out, st := h.ingest(ctx, kind, bufs, body, format)
	bufs.ticket.release()
	h.countRequest(bufs, transportKafka, sig, out, st)
	res := IngestResult{Items: out.items, Rejected: out.rejected, Message: out.message}
	if st == nil {
		return res, nil
	}
	if !otlp.Retryable(st) {
		return res, fmt.Errorf("%w: %w", ErrNotRetryable, st)
	}
	return res, st
}

func (h *Handler) ingest(ctx context.Context, kind *signalKind, bufs *requestBuffers, body []byte, format IngestFormat) (exportOutcome, *grpcwire.Status) {
	limit := h.limits.MaxRecvMsgSize
	if limit <= 0 {
		limit = grpcwire.DefaultMaxRecvMsgSize
	}
	if len(body) > limit {
		return exportOutcome{}, grpcwire.Errorf(grpcwire.ResourceExhausted, "%s of %d bytes is larger than the %d-byte message limit", kind.Request, len(body), limit)
	}
	if err := bufs.ticket.Charge(ctx, len(body)); err != nil {
		if st, ok := errors.AsType[*grpcwire.Status](err); ok {
			return exportOutcome{}, st
		}
		return exportOutcome{}, grpcwire.Errorf(grpcwire.Unavailable, "cannot admit %s: %v", kind.Request, err)
	}
	h.m.countBytes(transportKafka, len(body), len(body))
	saved := bufs.msg
	defer func() { bufs.msg = saved }()
	if format == IngestJSON {
		// The protobuf form is held too, as the HTTP path's decompressed
		// body is: bounded by the same limit and charged as it grows
		// (otlpjson.UnmarshalBounded), as OTLP/HTTP's JSON is.
		var err error
		bufs.msg, err = otlpjson.UnmarshalBounded(bufs.msg[:0], kind.jsonRequest, body, otlpjson.Bound{Max: limit, Charge: bufs.ticket.Grow})
		saved = bufs.msg
		if errors.Is(err, otlpjson.ErrTooLarge) {
			return exportOutcome{}, grpcwire.Errorf(grpcwire.ResourceExhausted, "%s of %d bytes of JSON is larger than the %d-byte message limit as protobuf", kind.Request, len(body), limit)
		}
		if st, ok := errors.AsType[*grpcwire.Status](err); ok {
			return exportOutcome{}, st
		}
		if err != nil {
			return exportOutcome{}, badRequest(grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode %s JSON: %v", kind.Request, err), err)
		}
	} else {
		// Validated and stored from the caller's bytes: no copy.
		bufs.msg = body
	}
	return h.validateAndStore(ctx, kind, bufs)
}
