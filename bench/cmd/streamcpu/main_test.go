package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/bench/internal/otlplitebin"
)

// writeDataset writes records as a dataset file (dataset.Read's format:
// zstd of 4-byte big-endian lengths, each before its record).
func writeDataset(t *testing.T, path string, records [][]byte) {
	var plain []byte
	for _, r := range records {
		plain = binary.BigEndian.AppendUint32(plain, uint32(len(r)))
		plain = append(plain, r...)
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, enc.EncodeAll(plain, nil), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tinyDatasets writes a traces and a metrics dataset of a few resources
// each (requests of both cuttings in both halves) to dir, and returns
// their items.
func tinyDatasets(t *testing.T, dir string) (spans, points int) {
	var traces, metrics [][]byte
	for rec := range 2 {
		td := ptrace.NewTraces()
		md := pmetric.NewMetrics()
		for r := range 4 {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
			ss := rs.ScopeSpans().AppendEmpty()
			for j := range 30 {
				s := ss.Spans().AppendEmpty()
				s.SetName("GET /cart")
				s.SetTraceID(pcommon.TraceID{byte(rec), byte(r), byte(j), 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
				s.SetSpanID(pcommon.SpanID{byte(rec), byte(r), byte(j), 3, 4, 5, 6, 7})
				s.SetStartTimestamp(pcommon.Timestamp(1700000000000000000 + j))
				s.SetEndTimestamp(pcommon.Timestamp(1700000000000005000 + j))
				s.Attributes().PutStr("http.route", "/cart")
				spans++
			}
			rm := md.ResourceMetrics().AppendEmpty()
			rm.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", r))
			m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
			m.SetName("requests")
			sum := m.SetEmptySum()
			sum.SetIsMonotonic(true)
			sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			for j := range 25 {
				p := sum.DataPoints().AppendEmpty()
				p.SetIntValue(int64(j))
				p.SetTimestamp(pcommon.Timestamp(1700000000000000000 + rec))
				p.Attributes().PutStr("route", fmt.Sprintf("/r%d", j))
				points++
			}
		}
		tb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		if err != nil {
			t.Fatal(err)
		}
		traces, metrics = append(traces, tb), append(metrics, mb)
	}
	writeDataset(t, filepath.Join(dir, "tiny-oteltraces.zst"), traces)
	writeDataset(t, filepath.Join(dir, "tiny-otelmetrics.zst"), metrics)
	return spans, points
}

// TestRunTiny runs the command, one round, on a tiny synthetic dataset
// against otlp-lite built from this tree: every mode's requests are stored
// whole by its server (run fails otherwise: the disk log's count, the
// stream's compression and columns accepted), and each signal has its
// tables with a row per cutting and a figure for every server.
func TestRunTiny(t *testing.T) {
	dir := t.TempDir()
	tinyDatasets(t, dir)
	root, err := otlplitebin.Root()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "otlp-lite")
	if err := otlplitebin.Build(bin, root); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		same    bool
		signals []string
	}{
		{false, []string{"metrics", "traces"}},
		{true, []string{"traces"}},
	} {
		t.Run(fmt.Sprintf("same-stream=%v", tc.same), func(t *testing.T) {
			// Passes of 100 to 240 items: 2 or 3 per round.
			cfg := config{dir: dir, half: "second", rounds: 1, warmup: 1, concurrency: 4, minItems: 250, sameStream: tc.same,
				modes: "unary,stream,columns", bin: bin, args: []string{"-test"}, quietStep: 10 * time.Millisecond}
			if len(tc.signals) == 1 {
				cfg.only = tc.signals[0]
			}
			var out bytes.Buffer
			if err := run(&out, cfg); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			checkTables(t, out.String(), tc.signals)
		})
	}
}

// tableTitles start the titles of each signal's tables.
var tableTitles = []string{"Server CPU per", "Client CPU per", "Bytes on the wire per", "The disk log's commits",
	"The server's garbage collections", "Bytes the server allocated"}

// checkTables checks run's output: the command line at the top, and for
// each signal its tables with a row per cutting and a figure for
// every server.
func checkTables(t *testing.T, s string, signals []string) {
	t.Helper()
	t.Log(s)
	if !strings.HasPrefix(s, "Command: `cd bench && go run ./cmd/streamcpu -test`") {
		t.Errorf("no command line at the top")
	}
	if n := strings.Count(s, "**") / 2; n != len(signals) {
		t.Errorf("%d tables of a signal, want %d", n, len(signals))
	}
	for _, sig := range signals {
		sig = "**" + sig + "**"
		i := strings.Index(s, sig)
		if i < 0 {
			t.Fatalf("no %s table", sig)
		}
		part := s[i:]
		if j := strings.Index(part[len(sig):], "**"); j >= 0 {
			part = part[:len(sig)+j]
		}
		for _, title := range tableTitles {
			if strings.Count(part, title) != 1 {
				t.Errorf("%s: %d %q tables, want 1", sig, strings.Count(part, title), title)
			}
		}
		for _, cut := range []string{"| SDK |", "| batch processor |"} {
			rows := 0
			for _, line := range strings.Split(part, "\n") {
				if !strings.HasPrefix(line, cut) {
					continue
				}
				rows++
				// requests, (a), (b) and its ratio, (c) and its ratio.
				if cells := strings.Count(line, "|") - 1; cells != 6 {
					t.Errorf("%s: %q has %d cells, want 6", sig, line, cells)
				}
				if strings.Contains(line, "NaN") || strings.Contains(line, "Inf") {
					t.Errorf("%s: %q", sig, line)
				}
			}
			if rows != len(tableTitles) {
				t.Errorf("%s: %d rows %q, want %d (one per table)", sig, rows, cut, len(tableTitles))
			}
		}
	}
}
