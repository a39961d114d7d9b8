// Package bench compares otlp-lite's decoder and receiver with the
// OpenTelemetry Collector's (pdata, grpc-go). It is a separate module so that
// the core packages never depend on the collector.
//
// This file builds the benchmark payloads. They are built with pdata and
// encoded with pdata's ProtoMarshaler, so that both decoders read the very
// same bytes.
package bench

import (
	"fmt"
	"math/rand/v2"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Seed is the fixed seed of every payload, so that runs and machines compare.
const Seed = 20190910

// baseTime is a fixed timestamp (2024-01-01T00:00:00Z) so that the payload
// bytes do not depend on the clock.
const baseTime = 1704067200 * 1e9

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_."

func randString(r *rand.Rand, minLen, maxLen int) string {
	n := minLen + r.IntN(maxLen-minLen+1)
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// putAttributes fills m with the attribute shape of the OTLP proposal's
// benchmarks (OTEP 0035, "Benchmarking"): two int attributes, then string
// attributes with random keys of 1–50 characters and random values of 1–20
// characters. Keys are unique, as the data model requires.
func putAttributes(r *rand.Rand, m pcommon.Map, n int) {
	m.EnsureCapacity(n)
	for i := 0; i < n && i < 2; i++ {
		m.PutInt(fmt.Sprintf("int.attr.%d", i), r.Int64N(1<<40))
	}
	for m.Len() < n {
		k := randString(r, 1, 50)
		if _, ok := m.Get(k); ok {
			continue
		}
		m.PutStr(k, randString(r, 1, 20))
	}
}

func putResource(res pcommon.Resource) {
	a := res.Attributes()
	a.PutStr("service.name", "checkout")
	a.PutStr("service.version", "1.4.2")
	a.PutStr("host.name", "ip-10-0-12-34.ec2.internal")
	a.PutInt("process.pid", 4242)
	a.PutStr("telemetry.sdk.language", "go")
}

func putScope(s pcommon.InstrumentationScope) {
	s.SetName("github.com/otlp-lite/otlp-lite/bench")
	s.SetVersion("0.1.0")
}

func randTraceID(r *rand.Rand) pcommon.TraceID {
	var id pcommon.TraceID
	for i := range id {
		id[i] = byte(r.Uint32())
	}
	return id
}

func randSpanID(r *rand.Rand) pcommon.SpanID {
	var id pcommon.SpanID
	for i := range id {
		id[i] = byte(r.Uint32())
	}
	return id
}

var spanNames = []string{"GET /api/cart", "SELECT orders", "redis GET", "publish order.created", "render", "auth.check"}

// Traces returns one resource with one scope holding spans spans of
// attrsPerSpan attributes each, with realistic ids (a trace of 10 spans
// shares a trace id; all but the root have a parent), names, kinds, times
// and statuses.
func Traces(spans, attrsPerSpan int) ptrace.Traces {
	r := rand.New(rand.NewPCG(Seed, uint64(spans*1000+attrsPerSpan)))
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	putResource(rs.Resource())
	rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
	ss := rs.ScopeSpans().AppendEmpty()
	putScope(ss.Scope())
	ss.Spans().EnsureCapacity(spans)
	var traceID pcommon.TraceID
	var rootID pcommon.SpanID
	for i := range spans {
		s := ss.Spans().AppendEmpty()
		if i%10 == 0 {
			traceID = randTraceID(r)
			rootID = randSpanID(r)
			s.SetSpanID(rootID)
		} else {
			s.SetSpanID(randSpanID(r))
			s.SetParentSpanID(rootID)
		}
		s.SetTraceID(traceID)
		s.SetName(spanNames[r.IntN(len(spanNames))])
		s.SetKind(ptrace.SpanKind(1 + r.IntN(5)))
		start := uint64(baseTime) + uint64(i)*1e6 + uint64(r.IntN(1e6))
		s.SetStartTimestamp(pcommon.Timestamp(start))
		s.SetEndTimestamp(pcommon.Timestamp(start + uint64(r.IntN(5e8))))
		s.SetFlags(1)
		if r.IntN(10) == 0 {
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Status().SetMessage("deadline exceeded")
		} else {
			s.Status().SetCode(ptrace.StatusCodeOk)
		}
		putAttributes(r, s.Attributes(), attrsPerSpan)
	}
	return td
}

// Metrics returns one resource with one scope holding 10 gauges, 10
// monotonic cumulative sums and 10 histograms (10 explicit bounds), each
// of points data points with 3 attributes: 30×points data points.
func Metrics(points int) pmetric.Metrics {
	r := rand.New(rand.NewPCG(Seed, uint64(points)))
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	putResource(rm.Resource())
	sm := rm.ScopeMetrics().AppendEmpty()
	putScope(sm.Scope())
	bounds := []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	for i := range 10 {
		g := sm.Metrics().AppendEmpty()
		g.SetName(fmt.Sprintf("system.memory.usage.%d", i))
		g.SetUnit("By")
		g.SetDescription("Memory in use.")
		dps := g.SetEmptyGauge().DataPoints()
		for j := range points {
			dp := dps.AppendEmpty()
			dp.SetTimestamp(pcommon.Timestamp(baseTime + uint64(j)*1e9))
			dp.SetIntValue(r.Int64N(1 << 34))
			putAttributes(r, dp.Attributes(), 3)
		}

		s := sm.Metrics().AppendEmpty()
		s.SetName(fmt.Sprintf("http.server.request.count.%d", i))
		s.SetUnit("{request}")
		sum := s.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		for j := range points {
			dp := sum.DataPoints().AppendEmpty()
			dp.SetStartTimestamp(pcommon.Timestamp(baseTime))
			dp.SetTimestamp(pcommon.Timestamp(baseTime + uint64(j)*1e9))
			dp.SetDoubleValue(r.Float64() * 1e6)
			putAttributes(r, dp.Attributes(), 3)
		}

		h := sm.Metrics().AppendEmpty()
		h.SetName(fmt.Sprintf("http.server.request.duration.%d", i))
		h.SetUnit("s")
		hist := h.SetEmptyHistogram()
		hist.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		for j := range points {
			dp := hist.DataPoints().AppendEmpty()
			dp.SetStartTimestamp(pcommon.Timestamp(baseTime + uint64(j)*1e9))
			dp.SetTimestamp(pcommon.Timestamp(baseTime + uint64(j+1)*1e9))
			dp.ExplicitBounds().FromRaw(bounds)
			var count uint64
			counts := make([]uint64, len(bounds)+1)
			for k := range counts {
				counts[k] = uint64(r.IntN(100))
				count += counts[k]
			}
			dp.BucketCounts().FromRaw(counts)
			dp.SetCount(count)
			dp.SetSum(float64(count) * 0.1)
			dp.SetMin(0.001)
			dp.SetMax(4.2)
			putAttributes(r, dp.Attributes(), 3)
		}
	}
	return md
}

// Logs returns one resource with one scope holding records log records,
// each with a string body of 20–120 characters, a severity, trace context
// and attrsPerRecord attributes.
func Logs(records, attrsPerRecord int) plog.Logs {
	r := rand.New(rand.NewPCG(Seed, uint64(records*1000+attrsPerRecord)))
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	putResource(rl.Resource())
	sl := rl.ScopeLogs().AppendEmpty()
	putScope(sl.Scope())
	sl.LogRecords().EnsureCapacity(records)
	for i := range records {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(baseTime + uint64(i)*1e6))
		lr.SetObservedTimestamp(pcommon.Timestamp(baseTime + uint64(i)*1e6 + 1000))
		lr.SetSeverityNumber(plog.SeverityNumber(1 + r.IntN(24)))
		lr.SetSeverityText("INFO")
		lr.Body().SetStr(randString(r, 20, 120))
		lr.SetTraceID(randTraceID(r))
		lr.SetSpanID(randSpanID(r))
		lr.SetFlags(1)
		putAttributes(r, lr.Attributes(), attrsPerRecord)
	}
	return ld
}

// TracesBytes returns Traces(spans, attrsPerSpan) encoded as an
// ExportTraceServiceRequest.
func TracesBytes(spans, attrsPerSpan int) []byte {
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(Traces(spans, attrsPerSpan))
	if err != nil {
		panic(fmt.Sprintf("cannot marshal traces: %s", err))
	}
	return b
}

// MetricsBytes returns Metrics(points) encoded as an
// ExportMetricsServiceRequest.
func MetricsBytes(points int) []byte {
	b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(Metrics(points))
	if err != nil {
		panic(fmt.Sprintf("cannot marshal metrics: %s", err))
	}
	return b
}

// LogsBytes returns Logs(records, attrsPerRecord) encoded as an
// ExportLogsServiceRequest.
func LogsBytes(records, attrsPerRecord int) []byte {
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(Logs(records, attrsPerRecord))
	if err != nil {
		panic(fmt.Sprintf("cannot marshal logs: %s", err))
	}
	return b
}
