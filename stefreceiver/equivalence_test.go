package stefreceiver

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// The promise the stream makes to ingest.ExportValidated, tested both
// ways on hostile records written with the library's writer: every rule
// of otlpdecode.CheckTraces and CheckMetrics that a STEF record can break
// (ids of each length and all zeroes, a histogram's buckets against its
// bounds, AnyValue nesting at the decoder's bound and the pipeline's,
// strings that are not UTF-8). The records are decoded as a stream does
// (a refused record left out), and the request it builds goes through
// Export (validated) and ExportValidated on pipelines of each
// configuration: what they store, count and answer is the same, and the
// decoder refused exactly the records the validation rejects (so it
// neither lets one through nor loses a valid one).
func TestExportValidatedEquivalence(t *testing.T) {
	nest := func(v *otelstef.AnyValue, depth int) {
		// depth 1 is a scalar attribute value (otlpdecode's counting).
		for range depth - 1 {
			v.SetType(otelstef.AnyValueTypeArray)
			v.Array().EnsureLen(1)
			v = v.Array().At(0)
		}
		v.SetInt64(7)
	}
	const bound = maxAnyValueDepth // what the decoder writes, at most
	id := func(n int, b byte) pkg.Bytes { return pkg.Bytes(strings.Repeat(string(rune(b)), n)) }
	type rec struct {
		name string
		ok   bool // the validation accepts its OTLP form (default options)
		set  func(s *otelstef.Spans)
	}
	spans := []rec{
		{"valid", true, func(*otelstef.Spans) {}},
		{"trace_id empty", false, func(s *otelstef.Spans) { s.Span().SetTraceID("") }},
		{"trace_id 15", false, func(s *otelstef.Spans) { s.Span().SetTraceID(id(15, 1)) }},
		{"trace_id 17", false, func(s *otelstef.Spans) { s.Span().SetTraceID(id(17, 1)) }},
		{"trace_id zero", false, func(s *otelstef.Spans) { s.Span().SetTraceID(id(16, 0)) }},
		{"span_id 7", false, func(s *otelstef.Spans) { s.Span().SetSpanID(id(7, 1)) }},
		{"span_id zero", false, func(s *otelstef.Spans) { s.Span().SetSpanID(id(8, 0)) }},
		{"parent 3", false, func(s *otelstef.Spans) { s.Span().SetParentSpanID(id(3, 1)) }},
		{"parent zero", true, func(s *otelstef.Spans) { s.Span().SetParentSpanID(id(8, 0)) }},
		{"link trace 15", false, func(s *otelstef.Spans) {
			s.Span().Links().EnsureLen(1)
			s.Span().Links().At(0).SetTraceID(id(15, 1))
			s.Span().Links().At(0).SetSpanID(id(8, 1))
		}},
		{"link span empty", false, func(s *otelstef.Spans) {
			s.Span().Links().EnsureLen(1)
			s.Span().Links().At(0).SetTraceID(id(16, 1))
			s.Span().Links().At(0).SetSpanID("")
		}},
		{"link zero ids", true, func(s *otelstef.Spans) {
			s.Span().Links().EnsureLen(1)
			s.Span().Links().At(0).SetTraceID(id(16, 0))
			s.Span().Links().At(0).SetSpanID(id(8, 0))
		}},
		{"attribute at the bound", true, func(s *otelstef.Spans) {
			s.Span().Attributes().EnsureLen(1)
			nest(s.Span().Attributes().Value(0), bound)
		}},
		{"attribute past the bound", false, func(s *otelstef.Spans) {
			s.Span().Attributes().EnsureLen(1)
			nest(s.Span().Attributes().Value(0), bound+1)
		}},
		{"event attribute past the bound", false, func(s *otelstef.Spans) {
			s.Span().Events().EnsureLen(1)
			s.Span().Events().At(0).Attributes().EnsureLen(1)
			nest(s.Span().Events().At(0).Attributes().Value(0), bound+1)
		}},
		{"link attribute at the bound", true, func(s *otelstef.Spans) {
			s.Span().Links().EnsureLen(1)
			s.Span().Links().At(0).SetTraceID(id(16, 1))
			s.Span().Links().At(0).SetSpanID(id(8, 1))
			s.Span().Links().At(0).Attributes().EnsureLen(1)
			nest(s.Span().Links().At(0).Attributes().Value(0), bound)
		}},
		{"resource attribute past the bound", false, func(s *otelstef.Spans) {
			s.Resource().Attributes().EnsureLen(1)
			nest(s.Resource().Attributes().Value(0), bound+1)
		}},
		{"scope attribute past the bound", false, func(s *otelstef.Spans) {
			s.Scope().Attributes().EnsureLen(1)
			nest(s.Scope().Attributes().Value(0), bound+1)
		}},
		{"name not UTF-8", true, func(s *otelstef.Spans) { s.Span().SetName("\xff") }},
		{"status not UTF-8", true, func(s *otelstef.Spans) { s.Span().Status().SetMessage("\xc0") }},
	}
	type mrec struct {
		name string
		ok   bool
		set  func(m *otelstef.Metrics)
	}
	metrics := []mrec{
		{"valid", true, func(*otelstef.Metrics) {}},
		{"exemplar trace_id 3", false, func(m *otelstef.Metrics) {
			m.Point().Exemplars().EnsureLen(1)
			m.Point().Exemplars().At(0).SetTraceID(id(3, 1))
		}},
		{"exemplar span_id 9", false, func(m *otelstef.Metrics) {
			m.Point().Exemplars().EnsureLen(1)
			m.Point().Exemplars().At(0).SetSpanID(id(9, 1))
		}},
		{"exemplar ids zero", true, func(m *otelstef.Metrics) {
			m.Point().Exemplars().EnsureLen(1)
			m.Point().Exemplars().At(0).SetTraceID(id(16, 0))
			m.Point().Exemplars().At(0).SetSpanID(id(8, 0))
		}},
		{"exemplar attribute past the bound", false, func(m *otelstef.Metrics) {
			m.Point().Exemplars().EnsureLen(1)
			m.Point().Exemplars().At(0).FilteredAttributes().EnsureLen(1)
			nest(m.Point().Exemplars().At(0).FilteredAttributes().Value(0), bound+1)
		}},
		{"point attribute at the bound", true, func(m *otelstef.Metrics) {
			m.Attributes().EnsureLen(1)
			nest(m.Attributes().Value(0), bound)
		}},
		{"point attribute past the bound", false, func(m *otelstef.Metrics) {
			m.Attributes().EnsureLen(1)
			nest(m.Attributes().Value(0), bound+1)
		}},
		{"metadata past the bound", false, func(m *otelstef.Metrics) {
			m.Metric().Metadata().EnsureLen(1)
			nest(m.Metric().Metadata().Value(0), bound+1)
		}},
		{"metric name not UTF-8", true, func(m *otelstef.Metrics) { m.Metric().SetName("\xff") }},
	}
	histogram := func(counts, bounds int) func(m *otelstef.Metrics) {
		return func(m *otelstef.Metrics) {
			m.Metric().SetType(otelstef.MetricTypeHistogram)
			m.Metric().HistogramBounds().CopyFromSlice(make([]float64, bounds))
			m.Point().Value().SetType(otelstef.PointValueTypeHistogram)
			m.Point().Value().Histogram().BucketCounts().CopyFromSlice(make([]uint64, counts))
		}
	}
	for _, hc := range []struct{ counts, bounds int }{{0, 0}, {0, 3}, {1, 0}, {4, 3}, {3, 3}, {2, 0}, {5, 3}} {
		metrics = append(metrics, mrec{"histogram", hc.counts == 0 || hc.counts == hc.bounds+1, histogram(hc.counts, hc.bounds)})
	}

	spanStream := func(recs []rec) []byte {
		var stream bytes.Buffer
		sw, err := otelstef.NewSpansWriter(&memChunks{&stream}, pkg.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			sw.Record.Resource().Attributes().EnsureLen(0)
			sw.Record.Scope().Attributes().EnsureLen(0)
			sw.Record.Scope().SetName("tracer")
			s := sw.Record.Span()
			s.SetTraceID(id(16, byte(1+i)))
			s.SetSpanID(id(8, byte(1+i)))
			s.SetParentSpanID("")
			s.SetName("op")
			s.Status().SetMessage("")
			s.Attributes().EnsureLen(0)
			s.Events().EnsureLen(0)
			s.Links().EnsureLen(0)
			r.set(&sw.Record)
			if err := sw.Write(); err != nil {
				t.Fatal(err)
			}
		}
		if err := sw.Flush(); err != nil {
			t.Fatal(err)
		}
		return stream.Bytes()
	}
	metricStream := func(recs []mrec) []byte {
		var stream bytes.Buffer
		mw, err := otelstef.NewMetricsWriter(&memChunks{&stream}, pkg.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			m := &mw.Record
			m.Resource().Attributes().EnsureLen(0)
			m.Metric().SetName("requests")
			m.Metric().SetType(otelstef.MetricTypeGauge)
			m.Metric().Metadata().EnsureLen(0)
			m.Metric().HistogramBounds().CopyFromSlice(nil)
			m.Attributes().EnsureLen(0)
			m.Point().SetTimestamp(uint64(i))
			m.Point().Value().SetInt64(int64(i))
			m.Point().Exemplars().EnsureLen(0)
			r.set(m)
			if err := mw.Write(); err != nil {
				t.Fatal(err)
			}
		}
		if err := mw.Flush(); err != nil {
			t.Fatal(err)
		}
		return stream.Bytes()
	}
	// Each record alone: the decoder keeps it if and only if the
	// validation accepts it.
	for _, r := range spans {
		if _, n := decodeLikeStream(true, spanStream([]rec{r}), 1<<30); (n == 1) != r.ok {
			t.Errorf("span %s: the decoder kept %d, the validation accepts it: %v", r.name, n, r.ok)
		}
	}
	for _, r := range metrics {
		if _, n := decodeLikeStream(false, metricStream([]mrec{r}), 1<<30); (n == 1) != r.ok {
			t.Errorf("point %s: the decoder kept %d, the validation accepts it: %v", r.name, n, r.ok)
		}
	}
	// All in one stream, as a hostile client sends them.
	spanReq, spanItems := decodeLikeStream(true, spanStream(spans), 1<<30)
	metricReq, metricItems := decodeLikeStream(false, metricStream(metrics), 1<<30)

	for _, cfg := range []struct {
		name string
		opts otlpdecode.Options
	}{
		{"default", otlpdecode.Options{}},
		{"depth at the decoder's bound", otlpdecode.Options{MaxAnyValueDepth: bound}},
		{"depth above it", otlpdecode.Options{MaxAnyValueDepth: bound + 1}},
		{"depth below it", otlpdecode.Options{MaxAnyValueDepth: bound - 1}},
		{"UTF-8", otlpdecode.Options{ValidateUTF8: true}},
	} {
		for _, req := range []struct {
			sig   otlp.Signal
			body  []byte
			items int
		}{{otlp.Traces, spanReq, spanItems}, {otlp.Metrics, metricReq, metricItems}} {
			validated, vSink := exportBoth(t, cfg.opts, req.sig, req.body, req.items, false)
			vouched, pSink := exportBoth(t, cfg.opts, req.sig, req.body, req.items, true)
			if validated != vouched {
				t.Errorf("%s, %v: Export %s, ExportValidated %s", cfg.name, req.sig, validated, vouched)
			}
			if !equalWrites(vSink, pSink) {
				t.Errorf("%s, %v: Export and ExportValidated stored other bytes", cfg.name, req.sig)
			}
		}
	}
}

// exportBoth hands body to a new pipeline with opts, through
// ExportValidated (vouched) or Export, and returns what it answered and
// stored.
func exportBoth(t *testing.T, opts otlpdecode.Options, sig otlp.Signal, body []byte, items int, vouched bool) (string, *memSink) {
	t.Helper()
	sink := &memSink{}
	p := ingest.New(ingest.Config{Sink: sink, Decode: opts})
	ctx := context.Background()
	tk := p.Take(ctx)
	defer p.Done(tk)
	tk.Msg = append(tk.Msg[:0], body...)
	if err := tk.Charge(ctx, len(tk.Msg)); err != nil {
		t.Fatal(err)
	}
	req := ingest.Request{Transport: ingest.STEF, Signal: sig, Body: tk.Msg, Ticket: tk}
	var res ingest.Result
	var err error
	if vouched {
		res, err = p.ExportValidated(ctx, req, ingest.Validated{Items: items, MaxAnyValueDepth: maxAnyValueDepth})
	} else {
		res, err = p.Export(ctx, req)
	}
	var msg string
	if err != nil {
		msg = err.Error()
	}
	return strings.Join([]string{"items", strconv.Itoa(res.Items), "rejected", strconv.Itoa(res.Rejected), res.Message, msg, "stored", strconv.Itoa(sink.items)}, " "), sink
}

func equalWrites(a, b *memSink) bool {
	if len(a.writes) != len(b.writes) {
		return false
	}
	for i := range a.writes {
		if !bytes.Equal(a.writes[i], b.writes[i]) {
			return false
		}
	}
	return true
}

// memChunks collects what a STEF writer writes, as one byte stream.
type memChunks struct{ b *bytes.Buffer }

func (m *memChunks) WriteChunk(header, content []byte) error {
	m.b.Write(header)
	m.b.Write(content)
	return nil
}
