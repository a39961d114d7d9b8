package otlpclient

import "sync/atomic"

// Stats counts what an exporter did. Every request handed to an exporter
// ends exactly once as Acknowledged, Failed or Dropped; Sent and Retried
// count transmissions, so Sent = requests + Retried for a unary exporter
// that finished.
type Stats struct {
	// Sent counts messages written to the wire, resends included.
	Sent uint64
	// Acknowledged counts requests the server stored (Success).
	Acknowledged uint64
	// Failed counts requests the server refused for good
	// (FailedNoneRetryable, or a non-retryable gRPC status).
	Failed uint64
	// Retried counts resends: after FailedRetryable or a retryable status,
	// and of unacknowledged requests after a stream was rotated or broke.
	Retried uint64
	// Dropped counts requests given up: not acknowledged within the
	// request timeout, left over at Close, or lost with a broken stream
	// when resending is off.
	Dropped uint64
	// Duplicates counts acknowledgements of requests that were no longer
	// pending: a resent request acknowledged twice, or a late
	// acknowledgement after a drop.
	Duplicates uint64
	// Rejected sums the items the server reported as rejected in
	// successful responses (partial success).
	Rejected uint64
	// Streams counts streams opened (StreamExporter only).
	Streams uint64
}

// Add returns the field-wise sum of s and o, for totals over exporters.
func (s Stats) Add(o Stats) Stats {
	return Stats{
		Sent: s.Sent + o.Sent, Acknowledged: s.Acknowledged + o.Acknowledged,
		Failed: s.Failed + o.Failed, Retried: s.Retried + o.Retried,
		Dropped: s.Dropped + o.Dropped, Duplicates: s.Duplicates + o.Duplicates,
		Rejected: s.Rejected + o.Rejected, Streams: s.Streams + o.Streams,
	}
}

type counters struct {
	sent, acked, failed, retried, dropped, dups, rejected, streams atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Sent: c.sent.Load(), Acknowledged: c.acked.Load(), Failed: c.failed.Load(),
		Retried: c.retried.Load(), Dropped: c.dropped.Load(), Duplicates: c.dups.Load(),
		Rejected: c.rejected.Load(), Streams: c.streams.Load(),
	}
}
