// Package storage defines the Sink interface that receives validated OTLP
// requests, and the small types shared by its implementations.
//
// A Sink is where the receiver's acknowledgement comes from: the handler
// answers OK to a client only after Write has returned nil, so an
// implementation must not return before the data is as durable as it promises
// (the disk sink: fsynced; Kafka: acknowledged by the brokers).
package storage

import (
	"context"
	"errors"
	"fmt"
)

// Signal names one of the three OTLP signals.
type Signal uint8

// The OTLP signals. The numeric values are stored on disk; never renumber them.
const (
	Traces  Signal = 1
	Metrics Signal = 2
	Logs    Signal = 3
)

// Signals lists every signal in a fixed order.
var Signals = []Signal{Traces, Metrics, Logs}

// String returns the signal's lower-case name: "traces", "metrics" or "logs".
func (s Signal) String() string {
	switch s {
	case Traces:
		return "traces"
	case Metrics:
		return "metrics"
	case Logs:
		return "logs"
	}
	return fmt.Sprintf("signal(%d)", uint8(s))
}

// ParseSignal is the inverse of Signal.String.
func ParseSignal(name string) (Signal, error) {
	for _, s := range Signals {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown signal %q: want traces, metrics or logs", name)
}

// Sink receives validated OTLP export requests.
//
// Write stores data, the protobuf encoding of one
// ExportTraceServiceRequest, ExportMetricsServiceRequest or
// ExportLogsServiceRequest (which share their wire format with TracesData,
// MetricsData and LogsData), holding items spans, data points or log records.
// Write must not retain data after it returns. It returns nil only once the
// data is stored as durably as the sink promises; then the receiver
// acknowledges it to the client. A non-nil error means the request was not
// stored; the client may retry it unless the error wraps ErrRejected.
// Errors wrapping ErrOverloaded or ErrUnavailable say why a retry may help.
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
)
