// Package storage defines the interfaces that receive validated OTLP
// requests: Sink, which gets a request's bytes (the disk log, Kafka,
// discard), and ItemSink, which gets its decoded items in the validation
// pass (a storage engine embedding the receiver); and the small types
// shared by their implementations.
//
// A Sink is where the receiver's acknowledgement comes from: the handler
// answers OK to a client only after Write has returned nil, so an
// implementation must not return before the data is as durable as it promises
// (the disk sink: fsynced; Kafka: acknowledged by the brokers).
package storage

import (
	"context"
	"errors"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// Signal names one of the OTLP signals. It is an alias of otlp.Signal, not
// a type of its own: the signal is a fact of the protocol that the handler,
// the client and the commands share, and storage is one of its users (its
// numeric values are what the disk log stores, so otlp must never
// renumber them). The alias keeps storage.Signal, the name every Sink and
// its callers use, meaning exactly that type.
type Signal = otlp.Signal

// The OTLP signals.
const (
	Traces  = otlp.Traces
	Metrics = otlp.Metrics
	Logs    = otlp.Logs
	// Profiles is the profiles signal (OTLP v1.11, Alpha).
	Profiles = otlp.Profiles
)

// Signals lists every signal in a fixed order.
var Signals = otlp.Signals

// ParseSignal is the inverse of Signal.String.
func ParseSignal(name string) (Signal, error) { return otlp.ParseSignal(name) }

// Sink receives validated OTLP export requests.
//
// Write stores data, the protobuf encoding of one
// ExportTraceServiceRequest, ExportMetricsServiceRequest,
// ExportLogsServiceRequest or ExportProfilesServiceRequest (which share their
// wire format with TracesData, MetricsData, LogsData and ProfilesData),
// holding items spans, data points, log records or profiles.
// Write must not retain data after it returns. It returns nil only once the
// data is stored as durably as the sink promises; then the receiver
// acknowledges it to the client. A non-nil error means the request was not
// acknowledged: the client may retry it unless the error wraps ErrRejected.
// Errors wrapping ErrOverloaded or ErrUnavailable say why a retry may help.
//
// A non-nil error does not say that nothing was stored: a sink that stopped
// waiting for its write (ctx ended while the disk log flushed, a broker
// acknowledged some records of a split and not others) may still have
// stored the request, whole or in part, and a retry then stores it twice
// (OTLP is at-least-once). Only an error wrapping ErrNotStored promises
// that nothing of the request was, or will be, stored: the sink refused it
// before any of it reached storage. Accounting that charges for what is
// stored (the receiver's tenant quotas) gives a charge back only for such
// an error.
//
// Write is called concurrently from many goroutines. Close flushes and
// releases the sink; no Write may be in progress or follow it.
type Sink interface {
	Write(ctx context.Context, signal Signal, data []byte, items int) error
	Close() error
}

var (
	// ErrOverloaded means the sink cannot take more data right now; the
	// client should back off and retry.
	ErrOverloaded = errors.New("storage is overloaded")
	// ErrUnavailable means the sink cannot store data at all right now (disk
	// full, I/O error, broker down); the client should retry later.
	ErrUnavailable = errors.New("storage is unavailable")
	// ErrClosed is returned by Write after Close.
	ErrClosed = errors.New("storage is closed")
	// ErrRejected means the sink can never store this request as sent
	// (for example, one resource is larger than Kafka's message limit):
	// the client must not retry it unchanged.
	ErrRejected = errors.New("storage rejected the request")
	// ErrNotStored is wrapped by a Write error that guarantees nothing of
	// the request was stored, nor will be (see Sink). Mark such an error
	// with NotStored; test for it with errors.Is.
	ErrNotStored = errors.New("nothing was stored")
)

// NotStored returns err marked as storing nothing: errors.Is(e,
// ErrNotStored) holds, as does errors.Is(e, target) for every target err
// matches, and its message is err's. A sink returns it only for a refusal
// made before any byte of the request reached storage; nil stays nil.
func NotStored(err error) error {
	if err == nil {
		return nil
	}
	return notStored{err}
}

type notStored struct{ err error }

func (e notStored) Error() string   { return e.err.Error() }
func (e notStored) Unwrap() []error { return []error{e.err, ErrNotStored} }
