package handler

import (
	"context"
	"errors"
	"fmt"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// IngestFormat is the encoding of a body given to Ingest.
type IngestFormat = ingest.Format

const (
	// IngestProto is the protobuf Export*ServiceRequest (the Collector's
	// Kafka encoding otlp_proto).
	IngestProto = ingest.Proto
	// IngestJSON is its OTLP/JSON form (otlp_json).
	IngestJSON = ingest.JSON
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
// a receiver (a Kafka record, a file being replayed) through the handler's
// pipeline, counted under transport "kafka": it is
// h.Pipeline().Export with no ticket (ingest.Request.Ticket), its status
// wrapped in ErrNotRetryable when no retry can help.
//
// It is a test helper now: a way in without HTTP calls
// h.Pipeline().Export itself (kafkasource does); these tests go through it
// to hold the pipeline to what the Kafka source relies on.
func (h *Handler) Ingest(ctx context.Context, sig otlp.Signal, body []byte, format IngestFormat) (IngestResult, error) {
	res, err := h.p.Export(ctx, ingest.Request{Transport: ingest.Kafka, Signal: sig, Body: body, Format: format})
	out := IngestResult{Items: res.Items, Rejected: res.Rejected, Message: res.Message}
	if err == nil {
		return out, nil
	}
	if st, ok := err.(*grpcwire.Status); ok && otlp.Retryable(st) {
		return out, st
	}
	return out, fmt.Errorf("%w: %w", ErrNotRetryable, err)
}
