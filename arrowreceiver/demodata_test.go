//go:build otelarrow

package arrowreceiver

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// TestEncoderDemoData compares our encoders with otel-arrow's conversion
// on the OpenTelemetry demo datasets (shared/datasets: traces and metrics
// cut into requests of 10 resources, logs made one per span, as
// bench/arrowcpu sends them), when ARROWRECEIVER_DATASETS names their
// directory (they are not in this repository):
//
//	ARROWRECEIVER_DATASETS=$PWD/../shared/datasets go test -tags otelarrow -run TestEncoderDemoData ./arrowreceiver
func TestEncoderDemoData(t *testing.T) {
	dir := os.Getenv("ARROWRECEIVER_DATASETS")
	if dir == "" {
		t.Skip("set ARROWRECEIVER_DATASETS to the demo datasets' directory")
	}
	const per = 10
	tp, lp, mp := arrow_record.NewProducer(), arrow_record.NewProducer(), arrow_record.NewProducer()
	defer tp.Close()
	defer lp.Close()
	defer mp.Close()
	var traces, logs, metrics []*arrowpb.BatchArrowRecords
	for _, m := range demoMessages(t, filepath.Join(dir, "hipstershop-oteltraces.zst")) {
		var u ptrace.ProtoUnmarshaler
		td, err := u.UnmarshalTraces(m)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < td.ResourceSpans().Len(); i += per {
			req := ptrace.NewTraces()
			for j := i; j < min(i+per, td.ResourceSpans().Len()); j++ {
				td.ResourceSpans().At(j).CopyTo(req.ResourceSpans().AppendEmpty())
			}
			b, err := tp.BatchArrowRecordsFromTraces(req)
			if err != nil {
				t.Fatal(err)
			}
			traces = append(traces, b)
			lb, err := lp.BatchArrowRecordsFromLogs(demoLogs(req))
			if err != nil {
				t.Fatal(err)
			}
			logs = append(logs, lb)
		}
	}
	for _, m := range demoMessages(t, filepath.Join(dir, "hipstershop-otelmetrics.zst")) {
		var u pmetric.ProtoUnmarshaler
		md, err := u.UnmarshalMetrics(m)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < md.ResourceMetrics().Len(); i += per {
			req := pmetric.NewMetrics()
			for j := i; j < min(i+per, md.ResourceMetrics().Len()); j++ {
				md.ResourceMetrics().At(j).CopyTo(req.ResourceMetrics().AppendEmpty())
			}
			b, err := mp.BatchArrowRecordsFromMetrics(req)
			if err != nil {
				t.Fatal(err)
			}
			metrics = append(metrics, b)
		}
	}
	for _, s := range []struct {
		sig  otlp.Signal
		bars []*arrowpb.BatchArrowRecords
	}{{otlp.Traces, traces}, {otlp.Logs, logs}, {otlp.Metrics, metrics}} {
		n := compareStream(t, s.bars, s.sig, false)
		t.Logf("%v: %d batches, %d items, the same OTLP", s.sig, len(s.bars), n)
	}
}

func demoMessages(t *testing.T, path string) [][]byte {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	br := bufio.NewReader(zr)
	var out [][]byte
	for {
		var n [4]byte
		if _, err := io.ReadFull(br, n[:]); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, binary.BigEndian.Uint32(n[:]))
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf)
	}
}

// demoLogs makes one log record per span, as bench/arrowcpu does.
func demoLogs(td ptrace.Traces) plog.Logs {
	ld := plog.NewLogs()
	for i := range td.ResourceSpans().Len() {
		rs := td.ResourceSpans().At(i)
		rl := ld.ResourceLogs().AppendEmpty()
		rs.Resource().CopyTo(rl.Resource())
		for j := range rs.ScopeSpans().Len() {
			ss := rs.ScopeSpans().At(j)
			sl := rl.ScopeLogs().AppendEmpty()
			ss.Scope().CopyTo(sl.Scope())
			for k := range ss.Spans().Len() {
				sp := ss.Spans().At(k)
				lr := sl.LogRecords().AppendEmpty()
				lr.SetTimestamp(sp.EndTimestamp())
				lr.SetTraceID(sp.TraceID())
				lr.SetSpanID(sp.SpanID())
				lr.Body().SetStr(sp.Name())
				sp.Attributes().CopyTo(lr.Attributes())
			}
		}
	}
	return ld
}
