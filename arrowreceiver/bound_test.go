//go:build otelarrow

package arrowreceiver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// TestEncoderOutputBounded: a batch whose few Arrow bytes decode to more
// OTLP than the limit (one 4 KiB attribute value, a dictionary entry
// every item repeats) is refused with errTooLarge, and what the encoder
// wrote before it stopped stays within the limit plus one item; an honest
// batch of the same stream is then decoded whole.
func TestEncoderOutputBounded(t *testing.T) {
	const limit = 64 << 10
	long := strings.Repeat("x", 4096)
	for _, sig := range []otlp.Signal{otlp.Traces, otlp.Logs, otlp.Metrics} {
		t.Run(sig.String(), func(t *testing.T) {
			prod := arrow_record.NewProducer()
			defer prod.Close()
			big, err := boundBatch(prod, sig, 2000, long)
			if err != nil {
				t.Fatal(err)
			}
			small, err := boundBatch(prod, sig, 3, "short")
			if err != nil {
				t.Fatal(err)
			}
			var size int
			for _, pl := range big.ArrowPayloads {
				size += len(pl.Record)
			}
			p := ingest.New(ingest.Config{Sink: &discard.Sink{}})
			d := newDecoder(context.Background(), p, DefaultMemoryLimit, DefaultMaxBatchRows)
			defer d.close()
			d.maxOTLP = limit
			buf := make([]byte, 0, 1024)
			out, _, err := d.decode(big, sig, buf)
			var tl errTooLarge
			if !errors.As(err, &tl) {
				t.Fatalf("a batch of %d Arrow bytes decoding to more than %d of OTLP: %v", size, limit, err)
			}
			if len(out) != 0 {
				t.Fatalf("%d bytes returned with the error", len(out))
			}
			// It stopped within an item (a 4 KiB value and its fields) of
			// the limit.
			if tl.size > limit+8<<10 {
				t.Fatalf("wrote %d bytes before stopping, limit %d", tl.size, limit)
			}
			if _, n, err := d.decode(small, sig, nil); err != nil || n == 0 {
				t.Fatalf("the honest batch after it: %d items, %v", n, err)
			}
			t.Logf("%d Arrow bytes refused after %d bytes of OTLP: %v", size, tl.size, err)
		})
	}
}

// boundBatch makes a batch of n items, each with the attribute v.
func boundBatch(prod *arrow_record.Producer, sig otlp.Signal, n int, v string) (*arrowpb.BatchArrowRecords, error) {
	switch sig {
	case otlp.Traces:
		td := ptrace.NewTraces()
		ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
		for i := range n {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{1, byte(i), byte(i >> 8)})
			sp.SetSpanID(pcommon.SpanID{2, byte(i), byte(i >> 8)})
			sp.SetName("s")
			sp.Attributes().PutStr("v", v)
			sp.Attributes().PutInt("i", int64(i))
		}
		return prod.BatchArrowRecordsFromTraces(td)
	case otlp.Logs:
		ld := plog.NewLogs()
		sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
		for i := range n {
			lr := sl.LogRecords().AppendEmpty()
			lr.Body().SetStr(fmt.Sprint(i))
			lr.Attributes().PutStr("v", v)
		}
		return prod.BatchArrowRecordsFromLogs(ld)
	}
	md := pmetric.NewMetrics()
	g := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("g")
	dps := g.SetEmptyGauge().DataPoints()
	for i := range n {
		dp := dps.AppendEmpty()
		dp.SetIntValue(int64(i))
		dp.Attributes().PutStr("v", v)
		dp.Attributes().PutInt("i", int64(i))
	}
	return prod.BatchArrowRecordsFromMetrics(md)
}

// TestScratchKeptBounded: the encoders' indexes a stream keeps between
// batches are charged with its state and at most maxScratch: kept after
// an exporter-sized batch, dropped after a batch of many rows, and the
// charge is whole again when the stream ends.
func TestScratchKeptBounded(t *testing.T) {
	p := ingest.New(ingest.Config{Sink: &discard.Sink{}})
	prod := arrow_record.NewProducer()
	defer prod.Close()
	d := newDecoder(context.Background(), p, DefaultMemoryLimit, DefaultMaxBatchRows)
	small, err := boundBatch(prod, otlp.Traces, 100, "v")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.decode(small, otlp.Traces, nil); err != nil {
		t.Fatal(err)
	}
	kept := d.alloc.scratch
	if kept == 0 || kept > maxScratch {
		t.Fatalf("%d bytes of indexes kept after 100 spans", kept)
	}
	if held := p.StreamStateHeld(); held < int64(kept) {
		t.Fatalf("%d bytes kept, %d charged", kept, held)
	}
	big, err := boundBatch(prod, otlp.Traces, 40000, "v")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.decode(big, otlp.Traces, nil); err != nil {
		t.Fatal(err)
	}
	if d.alloc.scratch != 0 || d.traces.bytes() != 0 {
		t.Fatalf("%d bytes (%d charged) of indexes kept after 40,000 spans", d.traces.bytes(), d.alloc.scratch)
	}
	d.close()
	if held := p.StreamStateHeld(); held != 0 {
		t.Fatalf("%d bytes of state held after the stream", held)
	}
}

// TestExpHistogramOffsetWithoutCounts: buckets with an offset and no
// counts (the producer then leaves the counts column out) are read; the
// pdata conversion main used failed on them (index out of range [-1]).
func TestExpHistogramOffsetWithoutCounts(t *testing.T) {
	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("e")
	dp := m.SetEmptyExponentialHistogram().DataPoints().AppendEmpty()
	dp.SetCount(3)
	dp.Positive().SetOffset(2)
	prod := arrow_record.NewProducer()
	defer prod.Close()
	bar, err := prod.BatchArrowRecordsFromMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	d := newDecoder(context.Background(), ingest.New(ingest.Config{Sink: &discard.Sink{}}), DefaultMemoryLimit, DefaultMaxBatchRows)
	defer d.close()
	out, n, err := d.decode(bar, otlp.Metrics, nil)
	if err != nil || n != 1 {
		t.Fatalf("%d points, %v", n, err)
	}
	var u pmetric.ProtoUnmarshaler
	got, err := u.UnmarshalMetrics(out)
	if err != nil {
		t.Fatal(err)
	}
	p := got.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).ExponentialHistogram().DataPoints().At(0)
	if p.Count() != 3 || p.Positive().Offset() != 2 {
		t.Fatalf("count %d, positive offset %d", p.Count(), p.Positive().Offset())
	}
}
