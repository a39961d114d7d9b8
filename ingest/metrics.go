package ingest

import (
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// LatencyBuckets are the `le` upper bounds, in seconds from 0.5 ms to 10 s,
// of the receiver's latency histograms (otlplite_storage_write_seconds and
// otlplite_request_duration_seconds here, otlplite_storage_sync_seconds in
// the binary).
var LatencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// seriesName returns a VictoriaMetrics/metrics series name: name with the
// label pairs kv (name, value, name, value...) in the order given. The
// values here are fixed identifiers (transports, signals, codes, reasons),
// so they need no escaping.
func seriesName(name string, kv ...string) string {
	if len(kv) == 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(kv[i+1])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// pipelineMetrics are the receiver's operator metrics, in a
// VictoriaMetrics/metrics Set. Series are resolved once here (or lazily,
// once, for request codes) so that counting on the hot path is a single
// atomic add, with no name lookup; only the storage latency histogram
// takes a (per-series, uncontended in practice) mutex, which is what makes
// its scrapes consistent (buckets, _sum and _count from one moment).
type pipelineMetrics struct {
	set *metrics.Set

	// accepted: items stored; refused: items the storage could not take
	// (the client should retry them); failed: items rejected as invalid
	// (partial success) — the collector's otelcol_receiver_* semantics.
	accepted, refused, failed [numTransports][otlp.MaxSignal + 1]*metrics.Counter

	// requestsBy: otlplite_requests_total{transport,signal,code}, resolved
	// on first use of a code.
	requestsBy [numTransports][otlp.MaxSignal + 1][17]atomic.Pointer[metrics.Counter]
	wireBytes  [numTransports]*metrics.Counter                  // otlplite_received_wire_bytes_total: before decompression
	bytes      [numTransports]*metrics.Counter                  // otlplite_received_bytes_total: after decompression
	storeWrite [otlp.MaxSignal + 1]*metrics.PrometheusHistogram // otlplite_storage_write_seconds: time for the storage to accept (durably) a request
	// refusals counts every request not answered OK, by why (refuse.go):
	// otlplite_refusals_total{transport,reason}, on every path.
	refusals [numTransports][numReasons]*metrics.Counter
	// duration: otlplite_request_duration_seconds{transport,signal}, from
	// the request's arrival (StartLog, else Take) to its outcome
	// (countRequest), resolved on first use of a transport and signal so
	// that /metrics lists only the pairs that served requests.
	duration [numTransports][otlp.MaxSignal + 1]atomic.Pointer[metrics.PrometheusHistogram]
}

func newPipelineMetrics(set *metrics.Set, adm *admission) *pipelineMetrics {
	m := &pipelineMetrics{set: set}
	for _, sig := range otlp.Signals {
		item := sig.Info().ItemsMetric
		for t := range numTransports {
			labels := []string{"receiver", "otlp", "transport", transportNames[t]}
			m.accepted[t][sig] = set.GetOrCreateCounter(seriesName("otelcol_receiver_accepted_"+item+"_total", labels...))
			m.refused[t][sig] = set.GetOrCreateCounter(seriesName("otelcol_receiver_refused_"+item+"_total", labels...))
			m.failed[t][sig] = set.GetOrCreateCounter(seriesName("otelcol_receiver_failed_"+item+"_total", labels...))
		}
	}
	for t := range numTransports {
		m.wireBytes[t] = set.GetOrCreateCounter(seriesName("otlplite_received_wire_bytes_total", "transport", transportNames[t]))
		m.bytes[t] = set.GetOrCreateCounter(seriesName("otlplite_received_bytes_total", "transport", transportNames[t]))
	}
	for _, sig := range storage.Signals {
		m.storeWrite[sig] = set.GetOrCreatePrometheusHistogramExt(seriesName("otlplite_storage_write_seconds", "signal", sig.String()), LatencyBuckets)
	}
	for t := range numTransports {
		for reason := range numReasons {
			m.refusals[t][reason] = set.GetOrCreateCounter(seriesName("otlplite_refusals_total", "transport", transportNames[t], "reason", reasonNames[reason]))
		}
	}

	// Admission state, read at scrape time: bytes admitted and not yet
	// answered, bytes waiting for admission.
	set.GetOrCreateGauge("otlplite_admission_bytes_in_flight", func() float64 {
		in, _, _ := adm.snapshot()
		return float64(in)
	})
	set.GetOrCreateGauge("otlplite_admission_bytes_waiting", func() float64 {
		_, w, _ := adm.snapshot()
		return float64(w)
	})
	// The budget's limits, fixed at start, so that a dashboard (and the
	// status page) can show the bytes in use as a fraction of them.
	set.GetOrCreateGauge("otlplite_admission_bytes_limit", func() float64 { return float64(adm.limit) })
	set.GetOrCreateGauge("otlplite_admission_bytes_waiting_limit", func() float64 { return float64(adm.waitLimit) })
	// The admission counters are kept by the admission controller; a
	// func-backed Gauge would expose them as gauges, so they are written
	// as counters, from one snapshot per scrape: requests that waited,
	// and refusals by reason.
	set.RegisterMetricsWriter(func(w io.Writer) {
		_, _, st := adm.snapshot()
		for _, c := range [...]struct {
			name string
			v    int64
		}{
			{"otlplite_admission_waits_total", st.Waited},
			{"otlplite_admission_refusals_busy_total", st.RefusedBusy},
			{"otlplite_admission_refusals_too_large_total", st.RefusedTooLarge},
			{"otlplite_admission_refusals_decompressed_over_budget_total", st.RefusedGrow},
			{"otlplite_admission_refusals_unread_window_total", st.RefusedUnread},
			{"otlplite_admission_reclaims_total", st.Reclaims},
		} {
			metrics.WriteCounterUint64(w, c.name, uint64(max(c.v, 0)))
		}
	})
	// Stream windows charged to the waiting budget (admission.park).
	set.GetOrCreateGauge("otlplite_admission_unread_window_bytes", func() float64 {
		_, _, st := adm.snapshot()
		return float64(st.Parked)
	})
	return m
}

// countRequest records one export request's outcome.
func (m *pipelineMetrics) countRequest(t Transport, sig otlp.Signal, out *Result, st *grpcwire.Status) {
	code := grpcwire.OK
	if st != nil {
		code = st.Code
	}
	if code > 16 {
		code = grpcwire.Unknown
	}
	p := &m.requestsBy[t][sig][code]
	c := p.Load()
	if c == nil {
		c = m.set.GetOrCreateCounter(seriesName("otlplite_requests_total", "transport", transportNames[t], "signal", sig.String(), "code", code.String()))
		p.Store(c)
	}
	c.Inc()
	if out.counted == 0 {
		return
	}
	if out.countedRejected > 0 {
		m.failed[t][sig].Add(out.countedRejected)
	}
	stored := out.counted - out.countedRejected
	if st == nil {
		m.accepted[t][sig].Add(stored)
	} else if otlp.Retryable(st) {
		m.refused[t][sig].Add(stored)
	}
}

// observeDuration records the duration of one request of transport t and
// signal sig that started at start (zero: not known, not recorded). An
// Update is a mutex and a bucket search: no allocation.
func (m *pipelineMetrics) observeDuration(t Transport, sig otlp.Signal, start time.Time) {
	if start.IsZero() {
		return
	}
	p := &m.duration[t][sig]
	h := p.Load()
	if h == nil {
		h = m.set.GetOrCreatePrometheusHistogramExt(seriesName("otlplite_request_duration_seconds", "transport", transportNames[t], "signal", sig.String()), LatencyBuckets)
		p.Store(h)
	}
	h.Update(time.Since(start).Seconds())
}

func (m *pipelineMetrics) countBytes(t Transport, wire, decompressed int) {
	m.wireBytes[t].Add(wire)
	m.bytes[t].Add(decompressed)
}

func (m *pipelineMetrics) observeStorage(sig otlp.Signal, start time.Time) {
	m.storeWrite[sig].Update(time.Since(start).Seconds())
}
