package otlpclient

import (
	"errors"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// Verdict is what a delivery error says about the record that was sent:
// the one classification of delivery errors in this module. The retry loop
// (Config.Retry, UnaryExporter) retries what Classify calls Retryable, and
// forwarding (package forward, and replay, which is forwarding with one
// destination) acts on the verdict of an exporter's final error; neither
// classifies errors another way.
type Verdict int

const (
	// Delivered: no error.
	Delivered Verdict = iota
	// Retryable: another attempt may succeed (OTLP v1.11 "Failures": the
	// retryable gRPC codes, 429/502/503/504, a transport error, a
	// garbage answer, a stall).
	Retryable
	// RefusedClient: the destination refuses the client or the endpoint,
	// not the record (RefusesClient): it would refuse every record the
	// same way, so the record must not be skipped.
	RefusedClient
	// RefusedData: the destination refused this record for good
	// (INVALID_ARGUMENT, 400, a record over its size limit, ...).
	RefusedData
	// NotDelivered: the exporter gave up or was stopped without a
	// verdict on the record (ErrDropped, ErrClosed, ErrStreamBroken):
	// send it again later.
	NotDelivered
)

var verdictNames = [...]string{Delivered: "delivered", Retryable: "retryable", RefusedClient: "refused_client", RefusedData: "refused_data", NotDelivered: "not_delivered"}

func (v Verdict) String() string { return verdictNames[v] }

// Classify returns err's verdict: err is an attempt's failure (inside the
// retry loop) or an exporter's final error (ExportResult, a stream
// request's done callback). An *AttemptError's Retryable is the sender's
// own verdict and wins over what it wraps.
func Classify(err error) Verdict {
	if err == nil {
		return Delivered
	}
	if errors.Is(err, ErrDropped) || errors.Is(err, ErrClosed) || errors.Is(err, ErrStreamBroken) {
		return NotDelivered
	}
	if ae, ok := errors.AsType[*AttemptError](err); ok {
		switch {
		case ae.Retryable:
			return Retryable
		case RefusesClient(ae.Err):
			return RefusedClient
		}
		return RefusedData
	}
	if RefusesClient(err) {
		return RefusedClient
	}
	if _, ok := errors.AsType[*RequestError](err); ok {
		return RefusedData
	}
	if _, ok := errors.AsType[*HTTPError](err); ok {
		return RefusedData
	}
	if st, ok := errors.AsType[*grpcwire.Status](err); ok {
		if otlp.Retryable(st) {
			return Retryable
		}
		return RefusedData
	}
	// A transport error: the server may be restarting.
	return Retryable
}
