package handler

import (
	"sync/atomic"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/metrics"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// transport labels requests by how they arrived; the values are the
// collector's "transport" label values, so its dashboards work.
type transport uint8

const (
	transportGRPC transport = iota
	transportGRPCStream
	transportHTTP
	numTransports
)

var transportNames = [numTransports]string{"grpc", "grpc_stream", "http"}

// handlerMetrics are the receiver's operator metrics. Series are resolved
// once here (or lazily, once, for request codes) so that counting on the hot
// path is a single atomic add.
type handlerMetrics struct {
	// accepted: items stored; refused: items the storage could not take
	// (the client should retry them); failed: items rejected as invalid
	// (partial success) — the collector's otelcol_receiver_* semantics.
	accepted, refused, failed [numTransports][4]*metrics.Counter

	requests    *metrics.CounterVec
	requestsBy  [numTransports][4][17]atomic.Pointer[metrics.Counter]
	wireBytes   [numTransports]*metrics.Counter
	bytes       [numTransports]*metrics.Counter
	storeWrite  [4]*metrics.Histogram
	openStreams *metrics.Gauge
	rotations   *metrics.Counter
	// refusals counts every request not answered OK, by why (refuse.go).
	refusals [numTransports][numReasons]*metrics.Counter
	// writeTimeouts counts responses abandoned because their client
	// stopped reading (writeguard.go).
	writeTimeouts *metrics.Counter
}

func newHandlerMetrics(r *metrics.Registry, adm *admission) *handlerMetrics {
	m := &handlerMetrics{}
	for _, sig := range otlp.Signals {
		item := sig.Info().ItemsMetric
		acc := r.Counter("otelcol_receiver_accepted_"+item+"_total", "Number of "+item+" successfully stored.", "receiver", "transport")
		ref := r.Counter("otelcol_receiver_refused_"+item+"_total", "Number of "+item+" that could not be stored (retryable).", "receiver", "transport")
		fail := r.Counter("otelcol_receiver_failed_"+item+"_total", "Number of "+item+" rejected as invalid.", "receiver", "transport")
		for t := range numTransports {
			m.accepted[t][sig] = acc.With("otlp", transportNames[t])
			m.refused[t][sig] = ref.With("otlp", transportNames[t])
			m.failed[t][sig] = fail.With("otlp", transportNames[t])
		}
	}
	m.requests = r.Counter("otlplite_requests_total", "Export requests by transport, signal and resulting gRPC code (HTTP statuses map to the same codes).", "transport", "signal", "code")
	wire := r.Counter("otlplite_received_wire_bytes_total", "Request bytes as received, before decompression.", "transport")
	dec := r.Counter("otlplite_received_bytes_total", "Request bytes after decompression.", "transport")
	for t := range numTransports {
		m.wireBytes[t] = wire.With(transportNames[t])
		m.bytes[t] = dec.With(transportNames[t])
	}
	sw := r.Histogram("otlplite_storage_write_seconds", "Time for the storage to accept a request (durable when it returns).", metrics.LatencyBuckets, "signal")
	for _, sig := range storage.Signals {
		m.storeWrite[sig] = sw.With(sig.String())
	}
	m.openStreams = r.Gauge("otlplite_open_streams", "Export streams open.").With()
	m.rotations = r.Counter("otlplite_stream_rotations_total", "Export streams ended by rotation (age, request count or shutdown).").With()
	m.writeTimeouts = r.Counter("otlplite_response_write_timeouts_total", "Responses and stream acknowledgements abandoned (stream reset, or HTTP/1.1 connection closed) because the client took none of it within -response-write-timeout.").With()
	refusals := r.Counter("otlplite_refusals_total", "Requests not answered OK, by transport and reason (every path: gRPC, streams, OTLP/HTTP, health, authentication, routing).", "transport", "reason")
	for t := range numTransports {
		for reason := range numReasons {
			m.refusals[t][reason] = refusals.With(transportNames[t], reasonNames[reason])
		}
	}

	r.GaugeFunc("otlplite_admission_bytes_in_flight", "Request bytes admitted and not yet answered.", func() float64 {
		in, _, _ := adm.snapshot()
		return float64(in)
	})
	r.GaugeFunc("otlplite_admission_bytes_waiting", "Request bytes waiting for admission.", func() float64 {
		_, w, _ := adm.snapshot()
		return float64(w)
	})
	r.CounterFunc("otlplite_admission_waits_total", "Requests that waited for admission.", func() float64 {
		_, _, st := adm.snapshot()
		return float64(st.Waited)
	})
	admissionRefusals := []struct {
		reason string
		get    func(admissionStats) int64
	}{
		{"busy", func(s admissionStats) int64 { return s.RefusedBusy }},
		{"too_large", func(s admissionStats) int64 { return s.RefusedTooLarge }},
		{"decompressed_over_budget", func(s admissionStats) int64 { return s.RefusedGrow }},
	}
	for _, rf := range admissionRefusals {
		r.CounterFunc("otlplite_admission_refusals_"+rf.reason+"_total", "Requests refused by admission control: "+rf.reason+".", func() float64 {
			_, _, st := adm.snapshot()
			return float64(rf.get(st))
		})
	}
	return m
}

// countRequest records one export request's outcome.
func (m *handlerMetrics) countRequest(t transport, sig storage.Signal, out exportOutcome, st *grpcwire.Status) {
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
		c = m.requests.With(transportNames[t], sig.String(), code.String())
		p.Store(c)
	}
	c.Inc()
	if out.items == 0 {
		return
	}
	if out.rejected > 0 {
		m.failed[t][sig].Add(int64(out.rejected))
	}
	stored := int64(out.items - out.rejected)
	if st == nil {
		m.accepted[t][sig].Add(stored)
	} else if otlp.Retryable(st) {
		m.refused[t][sig].Add(stored)
	}
}

func (m *handlerMetrics) countBytes(t transport, wire, decompressed int) {
	m.wireBytes[t].Add(int64(wire))
	m.bytes[t].Add(int64(decompressed))
}

func (m *handlerMetrics) observeStorage(sig storage.Signal, start time.Time) {
	m.storeWrite[sig].Observe(time.Since(start).Seconds())
}
