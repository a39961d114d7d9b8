// Package arrow_test sends real traces and metrics, and logs made from the
// traces, with otel-arrow's own Go producer (pkg/otel/arrow_record, stream
// mode: one producer per gRPC stream, its schemas and dictionaries kept
// across batches) over grpc-go's generated ArrowTracesService,
// ArrowMetricsService and ArrowLogsService clients to an otlp-lite binary
// built with -tags otelarrow, started by the test, and finds every span,
// data point and log record again in `otlp-lite export`, read with pdata.
//
// The Collector's own otelarrowexporter is not served by the Go module
// proxy (contrib's exporter/otelarrowexporter has no version there), so
// the producer and grpc-go stand in for it: they are what it is made of.
// It is a module of its own so that grpc-go, arrow-go and the pdata
// version otel-arrow needs stay out of interop/.
package arrow_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// The OpenTelemetry demo's data (../../../shared/datasets, its README).
const (
	tracesDataset  = "../../../shared/datasets/hipstershop-oteltraces.zst"
	metricsDataset = "../../../shared/datasets/hipstershop-otelmetrics.zst"
)

// resourcesPerRequest cuts a dataset message into requests of this many
// resources each, in order (as the STEF benchmarks and interop/stef do).
const resourcesPerRequest = 10

var serverBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "otlp-lite-arrow-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverBin = filepath.Join(dir, "otlp-lite")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "otelarrow", "-o", serverBin, "./cmd/otlp-lite")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "cannot build otlp-lite -tags otelarrow: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// messages reads a dataset: a zstd stream of 4-byte big-endian lengths,
// each followed by that many bytes of protobuf.
func messages(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("dataset not available: %v", err)
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
		if _, err := io.ReadFull(br, n[:]); err == io.EOF {
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

func traceRequests(t *testing.T) []ptrace.Traces {
	var reqs []ptrace.Traces
	var u ptrace.ProtoUnmarshaler
	for _, m := range messages(t, tracesDataset) {
		td, err := u.UnmarshalTraces(m)
		if err != nil {
			t.Fatal(err)
		}
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i += resourcesPerRequest {
			req := ptrace.NewTraces()
			for j := i; j < min(i+resourcesPerRequest, rss.Len()); j++ {
				rss.At(j).CopyTo(req.ResourceSpans().AppendEmpty())
			}
			reqs = append(reqs, req)
		}
	}
	return reqs
}

func metricRequests(t *testing.T) []pmetric.Metrics {
	var reqs []pmetric.Metrics
	var u pmetric.ProtoUnmarshaler
	for _, m := range messages(t, metricsDataset) {
		md, err := u.UnmarshalMetrics(m)
		if err != nil {
			t.Fatal(err)
		}
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i += resourcesPerRequest {
			req := pmetric.NewMetrics()
			for j := i; j < min(i+resourcesPerRequest, rms.Len()); j++ {
				rms.At(j).CopyTo(req.ResourceMetrics().AppendEmpty())
			}
			reqs = append(reqs, req)
		}
	}
	return reqs
}

// logRequests makes log records of the traces (the datasets have no
// logs): one per span, with its name as body, its attributes, ids and
// times, and a severity from its status.
func logRequests(traces []ptrace.Traces) []plog.Logs {
	var reqs []plog.Logs
	for _, td := range traces {
		ld := plog.NewLogs()
		for i := range td.ResourceSpans().Len() {
			rs := td.ResourceSpans().At(i)
			rl := ld.ResourceLogs().AppendEmpty()
			rs.Resource().CopyTo(rl.Resource())
			rl.SetSchemaUrl(rs.SchemaUrl())
			for j := range rs.ScopeSpans().Len() {
				ss := rs.ScopeSpans().At(j)
				sl := rl.ScopeLogs().AppendEmpty()
				ss.Scope().CopyTo(sl.Scope())
				for k := range ss.Spans().Len() {
					sp := ss.Spans().At(k)
					lr := sl.LogRecords().AppendEmpty()
					lr.SetTimestamp(sp.EndTimestamp())
					lr.SetObservedTimestamp(sp.StartTimestamp())
					lr.SetTraceID(sp.TraceID())
					lr.SetSpanID(sp.SpanID())
					lr.Body().SetStr(sp.Name())
					sp.Attributes().CopyTo(lr.Attributes())
					lr.SetSeverityNumber(plog.SeverityNumberInfo + plog.SeverityNumber(sp.Status().Code()))
					lr.SetSeverityText(sp.Status().Code().String())
					lr.SetEventName(sp.Kind().String())
				}
			}
		}
		reqs = append(reqs, ld)
	}
	return reqs
}

// server is the otlp-lite child process.
type server struct {
	addr, dataDir string
	cmd           *exec.Cmd
	out           *bytes.Buffer
	mu            *sync.Mutex
	done          chan struct{}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func startServer(t *testing.T) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{addr: addr, dataDir: t.TempDir(), out: &bytes.Buffer{}, mu: &sync.Mutex{}, done: make(chan struct{})}
	s.cmd = exec.Command(serverBin, "serve", "-grpc-addr", addr, "-http-addr", "", "-admin-addr", "",
		"-data-dir", s.dataDir, "-storage-sync", "none", "-otelarrow")
	s.cmd.Stdout = lockedWriter{s.mu, s.out}
	s.cmd.Stderr = lockedWriter{s.mu, s.out}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
		if t.Failed() {
			s.mu.Lock()
			t.Logf("otlp-lite output:\n%s", s.out.String())
			s.mu.Unlock()
		}
	})
	// Ready once it says so (the line is logged after it listens).
	deadline := time.Now().Add(20 * time.Second)
	for {
		s.mu.Lock()
		ready := strings.Contains(s.out.String(), "otlp-lite serving")
		s.mu.Unlock()
		if ready {
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("otlp-lite exited before serving:\n%s", s.out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("otlp-lite did not start serving in 20 s")
		}
	}
}

// stop ends the server gracefully (everything acknowledged is stored).
func (s *server) stop(t *testing.T) {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatal("otlp-lite did not stop in 20 s")
	}
}

// export returns the stored requests of signal, as `otlp-lite export
// -format proto` prints them.
func (s *server) export(t *testing.T, signal string) [][]byte {
	t.Helper()
	out, err := exec.Command(serverBin, "export", "-data-dir", s.dataDir, "-signal", signal, "-format", "proto").Output()
	if err != nil {
		t.Fatalf("export %s: %v", signal, err)
	}
	var msgs [][]byte
	for len(out) > 0 {
		if len(out) < 4 {
			t.Fatal("export: truncated length")
		}
		n := int(binary.BigEndian.Uint32(out))
		msgs = append(msgs, out[4:4+n])
		out = out[4+n:]
	}
	return msgs
}

type arrowStream interface {
	Send(*arrowpb.BatchArrowRecords) error
	Recv() (*arrowpb.BatchStatus, error)
	CloseSend() error
}

// send sends the batches made by next on one stream, up to inFlight
// unanswered at once (as the exporter pipelines them), and requires every
// one to be answered OK. It returns the bytes sent.
func send(t *testing.T, s arrowStream, n int, next func(i int) (*arrowpb.BatchArrowRecords, error)) int {
	t.Helper()
	const inFlight = 8
	slots := make(chan struct{}, inFlight)
	errc := make(chan error, 1)
	go func() {
		for i := range n {
			st, err := s.Recv()
			<-slots
			if err != nil {
				errc <- fmt.Errorf("status %d: %w", i, err)
				return
			}
			if st.StatusCode != arrowpb.StatusCode_OK || st.BatchId != int64(i) {
				errc <- fmt.Errorf("batch %d: status %v %q for batch %d", i, st.StatusCode, st.StatusMessage, st.BatchId)
				return
			}
		}
		errc <- nil
	}()
	wire := 0
	for i := range n {
		bar, err := next(i)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range bar.ArrowPayloads {
			wire += len(p.Record)
		}
		select {
		case slots <- struct{}{}:
		case err := <-errc:
			t.Fatal(err)
		}
		if err := s.Send(bar); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	s.CloseSend()
	if _, err := s.Recv(); err != io.EOF {
		t.Fatalf("stream ended with %v, want OK", err)
	}
	return wire
}

// TestProducerToOTLPLite sends the three signals, each on its own stream
// of its own connection's service, and compares what was stored with
// what was sent, item by item.
func TestProducerToOTLPLite(t *testing.T) {
	traces := traceRequests(t)
	metrics := metricRequests(t)
	logs := logRequests(traces)
	srv := startServer(t)
	conn, err := grpc.NewClient(srv.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var wg sync.WaitGroup
	var mu sync.Mutex
	wire := map[string]int{}
	run := func(name string, s arrowStream, err error, n int, next func(*arrow_record.Producer, int) (*arrowpb.BatchArrowRecords, error)) {
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			prod := arrow_record.NewProducer()
			defer prod.Close()
			w := send(t, s, n, func(i int) (*arrowpb.BatchArrowRecords, error) {
				bar, err := next(prod, i)
				if err == nil {
					bar.BatchId = int64(i)
				}
				return bar, err
			})
			mu.Lock()
			wire[name] = w
			mu.Unlock()
		}()
	}
	ts, err := arrowpb.NewArrowTracesServiceClient(conn).ArrowTraces(ctx)
	run("traces", ts, err, len(traces), func(p *arrow_record.Producer, i int) (*arrowpb.BatchArrowRecords, error) {
		return p.BatchArrowRecordsFromTraces(traces[i])
	})
	ms, err := arrowpb.NewArrowMetricsServiceClient(conn).ArrowMetrics(ctx)
	run("metrics", ms, err, len(metrics), func(p *arrow_record.Producer, i int) (*arrowpb.BatchArrowRecords, error) {
		return p.BatchArrowRecordsFromMetrics(metrics[i])
	})
	ls, err := arrowpb.NewArrowLogsServiceClient(conn).ArrowLogs(ctx)
	run("logs", ls, err, len(logs), func(p *arrow_record.Producer, i int) (*arrowpb.BatchArrowRecords, error) {
		return p.BatchArrowRecordsFromLogs(logs[i])
	})
	wg.Wait()
	if t.Failed() {
		return
	}
	srv.stop(t)

	var sent, got []string
	for _, td := range traces {
		sent = append(sent, spanKeys(td)...)
	}
	var tu ptrace.ProtoUnmarshaler
	for _, m := range srv.export(t, "traces") {
		td, err := tu.UnmarshalTraces(m)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, spanKeys(td)...)
	}
	compare(t, "spans", sent, got)

	sent, got = nil, nil
	for _, md := range metrics {
		sent = append(sent, pointKeys(md)...)
	}
	var mu2 pmetric.ProtoUnmarshaler
	for _, m := range srv.export(t, "metrics") {
		md, err := mu2.UnmarshalMetrics(m)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, pointKeys(md)...)
	}
	compare(t, "data points", sent, got)

	sent, got = nil, nil
	for _, ld := range logs {
		sent = append(sent, logKeys(ld)...)
	}
	var lu plog.ProtoUnmarshaler
	for _, m := range srv.export(t, "logs") {
		ld, err := lu.UnmarshalLogs(m)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, logKeys(ld)...)
	}
	compare(t, "log records", sent, got)
	t.Logf("Arrow record bytes sent: traces %d in %d batches, metrics %d in %d, logs %d in %d",
		wire["traces"], len(traces), wire["metrics"], len(metrics), wire["logs"], len(logs))
}

func compare(t *testing.T, what string, sent, got []string) {
	t.Helper()
	sort.Strings(sent)
	sort.Strings(got)
	if len(sent) != len(got) {
		t.Errorf("%s: sent %d, stored %d", what, len(sent), len(got))
	}
	for i := range min(len(sent), len(got)) {
		if sent[i] != got[i] {
			t.Errorf("%s: first difference at %d of %d:\nsent   %q\nstored %q", what, i, len(sent), sent[i], got[i])
			return
		}
	}
	if !t.Failed() {
		t.Logf("%s: all %d sent are stored, none extra", what, len(sent))
	}
}

func raw(m pcommon.Map) string { return fmt.Sprint(m.AsRaw()) }

func resourceKey(r pcommon.Resource, schemaURL string) string {
	return fmt.Sprint(raw(r.Attributes()), r.DroppedAttributesCount(), schemaURL)
}

func scopeKey(s pcommon.InstrumentationScope, schemaURL string) string {
	return fmt.Sprint(s.Name(), "|", s.Version(), "|", raw(s.Attributes()), s.DroppedAttributesCount(), schemaURL)
}

// spanKeys returns one key per span: every field of the span, its
// events and links, its scope and its resource.
func spanKeys(td ptrace.Traces) []string {
	var out []string
	for i := range td.ResourceSpans().Len() {
		rs := td.ResourceSpans().At(i)
		res := resourceKey(rs.Resource(), rs.SchemaUrl())
		for j := range rs.ScopeSpans().Len() {
			ss := rs.ScopeSpans().At(j)
			scope := scopeKey(ss.Scope(), ss.SchemaUrl())
			for k := range ss.Spans().Len() {
				sp := ss.Spans().At(k)
				var ev, ln []string
				for e := range sp.Events().Len() {
					x := sp.Events().At(e)
					ev = append(ev, fmt.Sprint(x.Name(), x.Timestamp(), raw(x.Attributes()), x.DroppedAttributesCount()))
				}
				for l := range sp.Links().Len() {
					x := sp.Links().At(l)
					ln = append(ln, fmt.Sprint(x.TraceID(), x.SpanID(), x.TraceState().AsRaw(), raw(x.Attributes()), x.DroppedAttributesCount(), x.Flags()))
				}
				out = append(out, strings.Join([]string{res, scope, sp.TraceID().String(), sp.SpanID().String(), sp.ParentSpanID().String(),
					sp.TraceState().AsRaw(), fmt.Sprint(sp.Flags()), sp.Name(), sp.Kind().String(), fmt.Sprint(sp.StartTimestamp(), sp.EndTimestamp()),
					raw(sp.Attributes()), fmt.Sprint(sp.DroppedAttributesCount(), sp.DroppedEventsCount(), sp.DroppedLinksCount()),
					fmt.Sprint(ev), fmt.Sprint(ln), sp.Status().Code().String(), sp.Status().Message()}, "\x00"))
			}
		}
	}
	return out
}

// pointKeys returns one key per data point: its resource, scope, metric
// and every field of the point.
func pointKeys(md pmetric.Metrics) []string {
	var out []string
	for i := range md.ResourceMetrics().Len() {
		rm := md.ResourceMetrics().At(i)
		res := resourceKey(rm.Resource(), rm.SchemaUrl())
		for j := range rm.ScopeMetrics().Len() {
			sm := rm.ScopeMetrics().At(j)
			scope := scopeKey(sm.Scope(), sm.SchemaUrl())
			for k := range sm.Metrics().Len() {
				m := sm.Metrics().At(k)
				met := fmt.Sprint(m.Name(), "|", m.Description(), "|", m.Unit(), "|", m.Type(), raw(m.Metadata()))
				add := func(v string) { out = append(out, strings.Join([]string{res, scope, met, v}, "\x00")) }
				exemplars := func(es pmetric.ExemplarSlice) string {
					var s []string
					for e := range es.Len() {
						x := es.At(e)
						s = append(s, fmt.Sprint(x.Timestamp(), x.ValueType(), x.IntValue(), x.DoubleValue(), x.TraceID(), x.SpanID(), raw(x.FilteredAttributes())))
					}
					return fmt.Sprint(s)
				}
				switch m.Type() {
				case pmetric.MetricTypeGauge, pmetric.MetricTypeSum:
					dps := pmetric.NewNumberDataPointSlice()
					if m.Type() == pmetric.MetricTypeGauge {
						dps = m.Gauge().DataPoints()
					} else {
						dps = m.Sum().DataPoints()
						met += fmt.Sprint(m.Sum().AggregationTemporality(), m.Sum().IsMonotonic())
					}
					for d := range dps.Len() {
						p := dps.At(d)
						add(fmt.Sprint(raw(p.Attributes()), p.StartTimestamp(), p.Timestamp(), p.Flags(), p.ValueType(), p.IntValue(), p.DoubleValue(), exemplars(p.Exemplars())))
					}
				case pmetric.MetricTypeHistogram:
					met += fmt.Sprint(m.Histogram().AggregationTemporality())
					for d := range m.Histogram().DataPoints().Len() {
						p := m.Histogram().DataPoints().At(d)
						add(fmt.Sprint(raw(p.Attributes()), p.StartTimestamp(), p.Timestamp(), p.Flags(), p.Count(), p.HasSum(), p.Sum(), p.HasMin(), p.Min(), p.HasMax(), p.Max(),
							p.BucketCounts().AsRaw(), p.ExplicitBounds().AsRaw(), exemplars(p.Exemplars())))
					}
				case pmetric.MetricTypeExponentialHistogram:
					met += fmt.Sprint(m.ExponentialHistogram().AggregationTemporality())
					for d := range m.ExponentialHistogram().DataPoints().Len() {
						p := m.ExponentialHistogram().DataPoints().At(d)
						add(fmt.Sprint(raw(p.Attributes()), p.StartTimestamp(), p.Timestamp(), p.Flags(), p.Count(), p.HasSum(), p.Sum(), p.HasMin(), p.Min(), p.HasMax(), p.Max(),
							p.Scale(), p.ZeroCount(), p.ZeroThreshold(), p.Positive().Offset(), p.Positive().BucketCounts().AsRaw(),
							p.Negative().Offset(), p.Negative().BucketCounts().AsRaw(), exemplars(p.Exemplars())))
					}
				case pmetric.MetricTypeSummary:
					for d := range m.Summary().DataPoints().Len() {
						p := m.Summary().DataPoints().At(d)
						var q []string
						for x := range p.QuantileValues().Len() {
							q = append(q, fmt.Sprint(p.QuantileValues().At(x).Quantile(), p.QuantileValues().At(x).Value()))
						}
						add(fmt.Sprint(raw(p.Attributes()), p.StartTimestamp(), p.Timestamp(), p.Flags(), p.Count(), p.Sum(), q))
					}
				}
			}
		}
	}
	return out
}

// logKeys returns one key per log record: every field, its scope and its
// resource.
func logKeys(ld plog.Logs) []string {
	var out []string
	for i := range ld.ResourceLogs().Len() {
		rl := ld.ResourceLogs().At(i)
		res := resourceKey(rl.Resource(), rl.SchemaUrl())
		for j := range rl.ScopeLogs().Len() {
			sl := rl.ScopeLogs().At(j)
			scope := scopeKey(sl.Scope(), sl.SchemaUrl())
			for k := range sl.LogRecords().Len() {
				lr := sl.LogRecords().At(k)
				out = append(out, strings.Join([]string{res, scope, fmt.Sprint(lr.Timestamp(), lr.ObservedTimestamp()), lr.TraceID().String(), lr.SpanID().String(),
					fmt.Sprint(lr.Flags(), lr.SeverityNumber()), lr.SeverityText(), lr.EventName(), fmt.Sprint(lr.Body().AsRaw()), raw(lr.Attributes()),
					fmt.Sprint(lr.DroppedAttributesCount())}, "\x00"))
			}
		}
	}
	return out
}
