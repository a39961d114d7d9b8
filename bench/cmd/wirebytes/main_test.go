package main

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/splunk/stef/go/pkg"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
)

func traceRequests(t *testing.T, n int) [][]byte {
	var out [][]byte
	for i := range n {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", i%3))
		ss := rs.ScopeSpans().AppendEmpty()
		for j := range 20 {
			s := ss.Spans().AppendEmpty()
			s.SetName("GET /cart")
			s.SetTraceID(pcommon.TraceID{byte(i), byte(j), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14})
			s.SetSpanID(pcommon.SpanID{byte(i), byte(j), 1, 2, 3, 4, 5, 6})
			s.SetStartTimestamp(pcommon.Timestamp(1700000000000000000 + i*1000 + j))
			s.SetEndTimestamp(pcommon.Timestamp(1700000000000005000 + i*1000 + j))
			s.Attributes().PutStr("http.route", "/cart")
		}
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func metricRequests(t *testing.T, n int) [][]byte {
	var out [][]byte
	for i := range n {
		md := pmetric.NewMetrics()
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", "checkout")
		sm := rm.ScopeMetrics().AppendEmpty()
		m := sm.Metrics().AppendEmpty()
		m.SetName("requests")
		sum := m.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		for j := range 10 {
			p := sum.DataPoints().AppendEmpty()
			p.SetIntValue(int64(i*10 + j))
			p.SetTimestamp(pcommon.Timestamp(1700000000000000000 + i))
			p.Attributes().PutStr("route", fmt.Sprintf("/r%d", j))
		}
		b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// Every format counts bytes for the same requests, and our stream's
// messages decode back to them: the measurement is of what is sent.
func TestFormats(t *testing.T) {
	cfg := config{window: compression.DefaultStreamWindow, rotate: 3}
	for _, metrics := range []bool{false, true} {
		reqs := traceRequests(t, 8)
		if metrics {
			reqs = metricRequests(t, 8)
		}
		cfg.sig = otlpcolumns.Traces
		if metrics {
			cfg.sig = otlpcolumns.Metrics
		}
		per, _ := perMessage(reqs)
		stream, msgs := ourStream(reqs, cfg, false)
		cols, colMsgs := ourStream(reqs, cfg, true)
		arrow := arrowBytes(reqs, metrics, false)
		stefZ := stefBytes(reqs, metrics, pkg.CompressionZstd)
		stef := stefBytes(reqs, metrics, pkg.CompressionNone)
		for name, n := range map[string]int{"per-message": per, "stream": stream, "arrow": arrow, "stef zstd": stefZ, "stef": stef, "columns": cols} {
			if n <= len(reqs)*grpcPrefix {
				t.Errorf("metrics %v: %s counted %d bytes for %d requests", metrics, name, n, len(reqs))
			}
		}
		if stream >= per {
			t.Errorf("metrics %v: the stream took %d bytes, per-message zstd %d", metrics, stream, per)
		}
		var dec *compression.StreamDecoder
		var cdec *otlpcolumns.Decoder
		for i, m := range append(msgs, colMsgs...) {
			columns := i >= len(msgs)
			if columns {
				i -= len(msgs)
			}
			if i%cfg.rotate == 0 {
				dec = newStreamDecoder(cfg)
				cdec = otlpcolumns.NewDecoder(cfg.sig)
			}
			env, err := dec.DecodeMessage(nil, m, otlpcolumns.MaxEncodedLen(1<<20), nil)
			if err != nil {
				t.Fatal(err)
			}
			if columns {
				if env, err = cdec.Decode(nil, env, 1<<20, nil); err != nil {
					t.Fatal(err)
				}
			}
			_, body, err := otlp.UnwrapEnvelope(env)
			if err != nil || !bytes.Equal(body, reqs[i]) {
				t.Fatalf("metrics %v: message %d decodes to other bytes (%v)", metrics, i, err)
			}
		}
	}
}
