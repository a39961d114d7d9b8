// Package discard is a storage.Sink that counts what it is given and keeps
// nothing: for benchmarks that measure the receiver without storage cost.
package discard

import (
	"context"
	"sync/atomic"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// Sink counts requests, items and bytes per signal and drops the data.
type Sink struct {
	requests, items, bytes [otlp.MaxSignal + 1]atomic.Int64
}

var _ storage.Sink = (*Sink)(nil)

// Write implements storage.Sink.
func (s *Sink) Write(_ context.Context, signal storage.Signal, data []byte, items int) error {
	if int(signal) < len(s.requests) {
		s.requests[signal].Add(1)
		s.items[signal].Add(int64(items))
		s.bytes[signal].Add(int64(len(data)))
	}
	return nil
}

// Counts returns how many requests, items and bytes of signal were written.
func (s *Sink) Counts(signal storage.Signal) (requests, items, bytes int64) {
	if int(signal) >= len(s.requests) {
		return 0, 0, 0
	}
	return s.requests[signal].Load(), s.items[signal].Load(), s.bytes[signal].Load()
}

// Close implements storage.Sink.
func (s *Sink) Close() error { return nil }
