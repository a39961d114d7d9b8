package interop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// pythonInterpreter finds the Python with the pinned OpenTelemetry SDK:
// $OTLP_LITE_PYTHON, else the venv the Makefile creates
// (interop/.venv, from python/requirements.txt). Without one the test
// fails, so that a missing venv cannot pass for a green suite, unless
// OTLP_LITE_SKIP_PYTHON=1 opts out explicitly.
func pythonInterpreter(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("OTLP_LITE_PYTHON"); p != "" {
		return p
	}
	p, err := filepath.Abs(filepath.Join("..", "interop", ".venv", "bin", "python"))
	if err == nil {
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("OTLP_LITE_SKIP_PYTHON") == "1" {
		t.Skip("no Python SDK venv and OTLP_LITE_SKIP_PYTHON=1")
	}
	t.Fatalf("no Python for the interop test: set OTLP_LITE_PYTHON, or create the venv with "+
		"`python3 -m venv interop/.venv && interop/.venv/bin/pip install -r interop/python/requirements.txt`, "+
		"or set OTLP_LITE_SKIP_PYTHON=1 to skip (%v)", err)
	return ""
}

// pyBase is BASE in send.py: the origin of every timestamp it sets.
const pyBase = 1741964966535897932

func pyNS(ms int) uint64 { return pyBase + uint64(ms)*uint64(time.Millisecond) }

// TestPythonSDK runs python/send.py (OpenTelemetry Python SDK) against the
// server: the grpcio exporters uncompressed, gzip and deflate; the OTLP/HTTP
// (binary protobuf) exporters of opentelemetry-exporter-otlp-proto-http
// uncompressed, gzip and deflate on the -http-addr port, and gzip on the gRPC
// port, which answers OTLP/HTTP too. It then checks the store against the
// requests the script dumped (identical) and against the values the script
// sets (field by field); send.py itself checks every OTLP/HTTP response
// (200, protobuf, partial_success unset).
func TestPythonSDK(t *testing.T) {
	python := pythonInterpreter(t)
	dataDir := t.TempDir()
	srv := startServerHTTP(t, dataDir)

	var runs []string
	dumpDir := t.TempDir()
	// grpcio and the HTTP exporter implement gzip and deflate (zlib)
	// themselves.
	for _, c := range []struct {
		protocol, port, compression string
	}{
		{"grpc", srv.addr, "none"},
		{"grpc", srv.addr, "gzip"},
		{"grpc", srv.addr, "deflate"},
		{"http", srv.httpAddr, "none"},
		{"http", srv.httpAddr, "gzip"},
		{"http", srv.httpAddr, "deflate"},
		{"http-on-grpc-port", srv.addr, "gzip"},
	} {
		run := fmt.Sprintf("py-%s-%s-%d", c.protocol, c.compression, time.Now().UnixNano())
		runs = append(runs, run)
		dump := filepath.Join(dumpDir, c.protocol+"-"+c.compression)
		if err := os.Mkdir(dump, 0o755); err != nil {
			t.Fatal(err)
		}
		protocol := strings.TrimSuffix(c.protocol, "-on-grpc-port")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, python, filepath.Join("python", "send.py"),
			"--endpoint", c.port, "--protocol", protocol, "--compression", c.compression, "--run-id", run, "--dump-dir", dump)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Errorf("send.py --protocol %s --compression %s to %s: %v\n%s", protocol, c.compression, c.port, err, out.String())
		} else if out.Len() > 0 {
			t.Logf("send.py --protocol %s --compression %s output:\n%s", protocol, c.compression, out.String())
		}
	}
	srv.stop()
	if t.Failed() {
		return
	}

	sentTraces := readDumps(t, dumpDir, "traces", func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	sentMetrics := readDumps(t, dumpDir, "metrics", func() *colmetricspb.ExportMetricsServiceRequest { return new(colmetricspb.ExportMetricsServiceRequest) })
	sentLogs := readDumps(t, dumpDir, "logs", func() *collogspb.ExportLogsServiceRequest { return new(collogspb.ExportLogsServiceRequest) })
	storedTraces := scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	storedMetrics := scanStore(t, dataDir, storage.Metrics, func() *colmetricspb.ExportMetricsServiceRequest { return new(colmetricspb.ExportMetricsServiceRequest) })
	storedLogs := scanStore(t, dataDir, storage.Logs, func() *collogspb.ExportLogsServiceRequest { return new(collogspb.ExportLogsServiceRequest) })
	matchMessages(t, "python traces", sentTraces, storedTraces)
	matchMessages(t, "python metrics", sentMetrics, storedMetrics)
	matchMessages(t, "python logs", sentLogs, storedLogs)

	for _, run := range runs {
		t.Run(run[:strings.LastIndexByte(run, '-')], func(t *testing.T) {
			checkPyTraces(t, run, storedTraces)
			checkPyMetrics(t, run, storedMetrics)
			checkPyLogs(t, run, storedLogs)
		})
	}
}

// readDumps reads the <signal>-<n>.pb files send.py wrote under dir's
// subdirectories.
func readDumps[M proto.Message](t *testing.T, dir, signal string, newMsg func() M) []M {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", signal+"-*.pb"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("send.py dumped no %s request", signal)
	}
	var msgs []M
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := newMsg()
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatalf("cannot parse %s: %v", f, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

var pyRichWant = []*commonpb.KeyValue{
	kv("p.str", strV("héllo, 世界")),
	kv("p.bool", boolV(true)),
	kv("p.int", intV(-9007199254740993)),
	kv("p.float", dblV(3.141592653589793)),
	kv("p.strs", arrV(strV("x"), strV(""), strV("z"))),
	kv("p.bools", arrV(boolV(true), boolV(false))),
	kv("p.ints", arrV(intV(1), intV(-2), intV(1<<40))),
	kv("p.floats", arrV(dblV(1.5), dblV(-2.25))),
}

var (
	pyParentTraceID = []byte{0x7e, 0xa1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f}
	pyParentSpanID  = []byte{0x9a, 0, 0, 0, 0, 0, 0, 0x9b}
	pyLinkTraceID   = []byte{0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0x0f}
	pyLinkSpanID    = []byte{0xb0, 1, 2, 3, 4, 5, 6, 0xb7}
)

func checkPyScope(t *testing.T, what string, scope *commonpb.InstrumentationScope, schemaURL string) {
	t.Helper()
	want := &commonpb.InstrumentationScope{
		Name:       "otlp-lite/interop/py",
		Version:    "0.9",
		Attributes: []*commonpb.KeyValue{kv("scope.lang", strV("python"))},
	}
	if d := diffProto(want, scope); d != "" {
		t.Errorf("%s scope (-want +got):\n%s", what, d)
	}
	if schemaURL != "https://opentelemetry.io/schemas/1.26.0" {
		t.Errorf("%s scope schema_url = %q", what, schemaURL)
	}
}

func checkPyTraces(t *testing.T, run string, stored []*coltracepb.ExportTraceServiceRequest) {
	spans := map[string]*tracepb.Span{}
	for _, req := range stored {
		for _, rs := range req.GetResourceSpans() {
			if !checkRunResource(t, rs.GetResource().GetAttributes(), run, "otlp-lite-interop-py") {
				continue
			}
			for _, ss := range rs.GetScopeSpans() {
				checkPyScope(t, "span", ss.GetScope(), ss.GetSchemaUrl())
				for _, s := range ss.GetSpans() {
					if _, dup := spans[s.GetName()]; dup {
						t.Errorf("span %q stored twice", s.GetName())
					}
					spans[s.GetName()] = s
				}
			}
		}
	}
	if len(spans) != 5 {
		t.Errorf("stored %d distinct spans, sent 5", len(spans))
	}
	root := spans["py-root"]
	if root == nil {
		t.Fatalf("py-root not stored")
	}
	// The Python exporter sets only the is_remote bits of Span.flags
	// (0x100 has_is_remote, 0x200 is_remote), not the W3C trace flags.
	checkSpan(t, &tracepb.Span{
		TraceId:           pyParentTraceID,
		ParentSpanId:      pyParentSpanID,
		TraceState:        "vendor=py",
		Flags:             0x300,
		Name:              "py-root",
		Kind:              tracepb.Span_SPAN_KIND_SERVER,
		StartTimeUnixNano: pyNS(0),
		EndTimeUnixNano:   pyNS(1000),
		Attributes:        pyRichWant,
		Events: []*tracepb.Span_Event{
			{TimeUnixNano: pyNS(1), Name: "py.event", Attributes: []*commonpb.KeyValue{kv("ev.s", strV("e")), kv("ev.f", dblV(1.25))}},
		},
		Links: []*tracepb.Span_Link{{
			TraceId:    pyLinkTraceID,
			SpanId:     pyLinkSpanID,
			Flags:      0x300,
			Attributes: []*commonpb.KeyValue{kv("link.attr", strV("l")), kv("link.n", intV(2))},
		}},
		Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "py failed"},
	}, root)
	children := []struct {
		name       string
		kind       tracepb.Span_SpanKind
		start, end int
		attrs      []*commonpb.KeyValue
		status     tracepb.Status_StatusCode
	}{
		{"py-child", tracepb.Span_SPAN_KIND_CLIENT, 2, 3, []*commonpb.KeyValue{kv("child", intV(1))}, tracepb.Status_STATUS_CODE_OK},
		{"py-kind-0", tracepb.Span_SPAN_KIND_INTERNAL, 10, 20, nil, tracepb.Status_STATUS_CODE_UNSET},
		{"py-kind-1", tracepb.Span_SPAN_KIND_PRODUCER, 11, 21, nil, tracepb.Status_STATUS_CODE_UNSET},
		{"py-kind-2", tracepb.Span_SPAN_KIND_CONSUMER, 12, 22, nil, tracepb.Status_STATUS_CODE_UNSET},
	}
	for _, c := range children {
		s := spans[c.name]
		if s == nil {
			t.Errorf("span %q not stored", c.name)
			continue
		}
		checkSpan(t, &tracepb.Span{
			TraceId:           pyParentTraceID,
			ParentSpanId:      root.GetSpanId(),
			TraceState:        "vendor=py",
			Flags:             0x100,
			Name:              c.name,
			Kind:              c.kind,
			StartTimeUnixNano: pyNS(c.start),
			EndTimeUnixNano:   pyNS(c.end),
			Attributes:        c.attrs,
			Status:            &tracepb.Status{Code: c.status},
		}, s)
	}
}

func checkPyMetrics(t *testing.T, run string, stored []*colmetricspb.ExportMetricsServiceRequest) {
	metrics := map[string]*metricspb.Metric{}
	for _, req := range stored {
		for _, rm := range req.GetResourceMetrics() {
			if !checkRunResource(t, rm.GetResource().GetAttributes(), run, "otlp-lite-interop-py") {
				continue
			}
			for _, sm := range rm.GetScopeMetrics() {
				checkPyScope(t, "metric", sm.GetScope(), sm.GetSchemaUrl())
				for _, m := range sm.GetMetrics() {
					if _, dup := metrics[m.GetName()]; dup {
						t.Errorf("metric %q stored twice", m.GetName())
					}
					metrics[m.GetName()] = m
				}
			}
		}
	}
	if len(metrics) != 5 {
		t.Errorf("stored %d distinct metrics, sent 5", len(metrics))
	}
	aAttrs := []*commonpb.KeyValue{kv("k", strV("a")), kv("flag", boolV(true))}
	bAttrs := []*commonpb.KeyValue{kv("k", strV("b")), kv("n", intV(3))}
	attrs := map[string][]*commonpb.KeyValue{"a": aAttrs, "b": bAttrs}
	cumulative := metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	get := func(name, unit string) *metricspb.Metric {
		m := metrics[name]
		if m == nil {
			t.Errorf("metric %q not stored", name)
			return nil
		}
		if m.GetUnit() != unit {
			t.Errorf("metric %q unit = %q, want %q", name, m.GetUnit(), unit)
		}
		return m
	}
	if m := get("py.counter", "By"); m != nil {
		if m.GetDescription() != "a python counter" {
			t.Errorf("metric py.counter description = %q", m.GetDescription())
		}
		if s := m.GetSum(); s == nil || !s.GetIsMonotonic() || s.GetAggregationTemporality() != cumulative {
			t.Errorf("metric py.counter = %v, want a monotonic cumulative sum", m.GetData())
		} else {
			checkNumberPoints(t, "py.counter", s.GetDataPoints(), map[string]float64{"a": 7, "b": 10}, attrs)
		}
	}
	if m := get("py.updown", "{item}"); m != nil {
		if s := m.GetSum(); s == nil || s.GetIsMonotonic() || s.GetAggregationTemporality() != cumulative {
			t.Errorf("metric py.updown = %v, want a non-monotonic cumulative sum", m.GetData())
		} else {
			checkNumberPoints(t, "py.updown", s.GetDataPoints(), map[string]float64{"a": -5}, attrs)
		}
	}
	if m := get("py.gauge", "Cel"); m != nil {
		if g := m.GetGauge(); g == nil {
			t.Errorf("metric py.gauge = %v, want a gauge", m.GetData())
		} else {
			checkNumberPoints(t, "py.gauge", g.GetDataPoints(), map[string]float64{"b": 42.5}, attrs)
		}
	}
	if m := get("py.histogram", "s"); m != nil {
		h := m.GetHistogram()
		if h == nil || h.GetAggregationTemporality() != cumulative || len(h.GetDataPoints()) != 1 {
			t.Errorf("metric py.histogram = %v, want a cumulative histogram with one point", m.GetData())
		} else {
			p := h.GetDataPoints()[0]
			if p.GetCount() != 4 || p.GetSum() != 30.5 || p.GetMin() != 0.5 || p.GetMax() != 20 ||
				fmt.Sprint(p.GetBucketCounts()) != "[1 1 1 1]" || fmt.Sprint(p.GetExplicitBounds()) != "[1 5 10]" {
				t.Errorf("metric py.histogram point = %v, want count 4, sum 30.5, min 0.5, max 20, buckets [1 1 1 1] over [1 5 10]", p)
			}
			if d := diffAttrs(aAttrs, p.GetAttributes()); d != "" {
				t.Errorf("metric py.histogram attributes:\n%s", d)
			}
			checkPointTimes(t, "py.histogram", p.GetStartTimeUnixNano(), p.GetTimeUnixNano())
		}
	}
	if m := get("py.exphist", "ms"); m != nil {
		h := m.GetExponentialHistogram()
		if h == nil || h.GetAggregationTemporality() != cumulative || len(h.GetDataPoints()) != 1 {
			t.Errorf("metric py.exphist = %v, want a cumulative exponential histogram with one point", m.GetData())
		} else {
			p := h.GetDataPoints()[0]
			var inBuckets uint64
			for _, c := range p.GetPositive().GetBucketCounts() {
				inBuckets += c
			}
			if p.GetCount() != 4 || p.GetSum() != 15 || p.GetMin() != 1 || p.GetMax() != 8 || inBuckets != 4 || p.GetZeroCount() != 0 {
				t.Errorf("metric py.exphist point count/sum/min/max/zero/in-buckets = %d/%v/%v/%v/%d/%d, want 4/15/1/8/0/4",
					p.GetCount(), p.GetSum(), p.GetMin(), p.GetMax(), p.GetZeroCount(), inBuckets)
			}
			if d := diffAttrs(bAttrs, p.GetAttributes()); d != "" {
				t.Errorf("metric py.exphist attributes:\n%s", d)
			}
			checkPointTimes(t, "py.exphist", p.GetStartTimeUnixNano(), p.GetTimeUnixNano())
		}
	}
}

func checkPyLogs(t *testing.T, run string, stored []*collogspb.ExportLogsServiceRequest) {
	var recs []*logspb.LogRecord
	for _, req := range stored {
		for _, rl := range req.GetResourceLogs() {
			if !checkRunResource(t, rl.GetResource().GetAttributes(), run, "otlp-lite-interop-py") {
				continue
			}
			for _, sl := range rl.GetScopeLogs() {
				checkPyScope(t, "log", sl.GetScope(), sl.GetSchemaUrl())
				recs = append(recs, sl.GetLogRecords()...)
			}
		}
	}
	if len(recs) != 2 {
		t.Fatalf("stored %d log records, sent 2", len(recs))
	}
	var ev, plain *logspb.LogRecord
	for _, r := range recs {
		if r.GetEventName() == "py.event" {
			ev = r
		} else {
			plain = r
		}
	}
	if ev == nil || plain == nil {
		t.Fatalf("stored log records lack the event or the plain record: %v", recs)
	}
	wantEv := &logspb.LogRecord{
		TimeUnixNano:         pyNS(5),
		ObservedTimeUnixNano: pyNS(6),
		SeverityNumber:       logspb.SeverityNumber_SEVERITY_NUMBER_WARN2,
		SeverityText:         "WARN2",
		Body: kvlistV(
			kv("msg", strV("hello")),
			kv("nested", kvlistV(
				kv("list", arrV(strV("x"), boolV(true), kvlistV(kv("deep", dblV(0.5))))),
				kv("n", intV(7)),
			)),
			kv("raw", bytesV([]byte{0, 1, 2})),
		),
		Attributes: ev.GetAttributes(), // compared as a set below
		Flags:      0x01,               // W3C sampled (logs.proto LOG_RECORD_FLAGS_TRACE_FLAGS_MASK)
		TraceId:    pyParentTraceID,
		SpanId:     pyParentSpanID,
		EventName:  "py.event",
	}
	if d := diffProto(wantEv, ev); d != "" {
		t.Errorf("event log record (-want +got):\n%s", d)
	}
	if d := diffAttrs(pyRichWant, ev.GetAttributes()); d != "" {
		t.Errorf("event log record attributes:\n%s", d)
	}
	wantPlain := &logspb.LogRecord{
		TimeUnixNano:         pyNS(7),
		ObservedTimeUnixNano: pyNS(8),
		SeverityNumber:       logspb.SeverityNumber_SEVERITY_NUMBER_FATAL4,
		SeverityText:         "FATAL4",
		Body:                 strV("plain python body"),
		Attributes:           []*commonpb.KeyValue{kv("log.kind", strV("plain"))},
	}
	if d := diffProto(wantPlain, plain); d != "" {
		t.Errorf("plain log record (-want +got):\n%s", d)
	}
}
