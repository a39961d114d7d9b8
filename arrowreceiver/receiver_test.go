//go:build otelarrow

package arrowreceiver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/storage"
)

type memSink struct {
	mu     sync.Mutex
	writes [][]byte
	sigs   []storage.Signal
}

func (s *memSink) Write(_ context.Context, sig storage.Signal, data []byte, _ int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sigs = append(s.sigs, sig)
	s.writes = append(s.writes, append([]byte(nil), data...))
	return nil
}

func (s *memSink) Close() error { return nil }

func (s *memSink) all() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.writes...)
}

type testServer struct {
	addr string
	sink *memSink
	p    *ingest.Pipeline
	r    *Receiver
}

// serve starts a receiver on h2c on a free port.
func serve(t *testing.T, cfg Config) *testServer {
	t.Helper()
	sink := &memSink{}
	p := ingest.New(ingest.Config{Sink: sink})
	r := New(p, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: r, Protocols: &protos}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return &testServer{addr: ln.Addr().String(), sink: sink, p: p, r: r}
}

// arrowStream is what the three generated stream clients share.
type arrowStream interface {
	Send(*arrowpb.BatchArrowRecords) error
	Recv() (*arrowpb.BatchStatus, error)
	CloseSend() error
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func open(t *testing.T, conn *grpc.ClientConn, kind string) arrowStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var s arrowStream
	var err error
	switch kind {
	case "traces":
		s, err = arrowpb.NewArrowTracesServiceClient(conn).ArrowTraces(ctx)
	case "metrics":
		s, err = arrowpb.NewArrowMetricsServiceClient(conn).ArrowMetrics(ctx)
	default:
		s, err = arrowpb.NewArrowLogsServiceClient(conn).ArrowLogs(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// exchange sends one batch and returns its status.
func exchange(t *testing.T, s arrowStream, bar *arrowpb.BatchArrowRecords) *arrowpb.BatchStatus {
	t.Helper()
	if err := s.Send(bar); err != nil {
		t.Fatalf("send: %v", err)
	}
	st, err := s.Recv()
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	if st.BatchId != bar.BatchId {
		t.Fatalf("status for batch %d, want %d", st.BatchId, bar.BatchId)
	}
	return st
}

func makeTraces(batch, spans int, attrBytes int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", batch))
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("arrowreceiver-test")
	for i := range spans {
		sp := ss.Spans().AppendEmpty()
		sp.SetName(fmt.Sprintf("span-%d-%d", batch, i))
		sp.SetTraceID(pcommon.TraceID{byte(batch), byte(i), byte(i >> 8), 1})
		sp.SetSpanID(pcommon.SpanID{byte(batch), byte(i), byte(i >> 8), 2})
		sp.SetStartTimestamp(pcommon.Timestamp(1e18 + i))
		sp.SetEndTimestamp(pcommon.Timestamp(1e18 + i + 1000))
		sp.SetKind(ptrace.SpanKindServer)
		sp.Attributes().PutInt("i", int64(i))
		if attrBytes > 0 {
			// A distinct long value per span: a dictionary that only grows.
			sp.Attributes().PutStr("blob", fmt.Sprintf("%0*d", attrBytes, batch*1_000_000+i))
		}
		ev := sp.Events().AppendEmpty()
		ev.SetName("event")
		ev.Attributes().PutBool("ok", true)
	}
	return td
}

func makeMetrics(batch, points int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", batch))
	sm := rm.ScopeMetrics().AppendEmpty()
	g := sm.Metrics().AppendEmpty()
	g.SetName("gauge")
	g.SetUnit("1")
	s := sm.Metrics().AppendEmpty()
	s.SetName("sum")
	sum := s.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	h := sm.Metrics().AppendEmpty()
	h.SetName("histogram")
	hist := h.SetEmptyHistogram()
	hist.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	gauge := g.SetEmptyGauge()
	for i := range points {
		p := gauge.DataPoints().AppendEmpty()
		p.SetTimestamp(pcommon.Timestamp(1e18 + i))
		p.SetDoubleValue(float64(i) / 2)
		p.Attributes().PutStr("host", fmt.Sprintf("h%d", i%7))
		q := sum.DataPoints().AppendEmpty()
		q.SetStartTimestamp(1e18)
		q.SetTimestamp(pcommon.Timestamp(1e18 + i))
		q.SetIntValue(int64(batch*1000 + i))
		r := hist.DataPoints().AppendEmpty()
		r.SetTimestamp(pcommon.Timestamp(1e18 + i))
		r.SetCount(3)
		r.SetSum(6)
		r.ExplicitBounds().FromRaw([]float64{1, 2})
		r.BucketCounts().FromRaw([]uint64{1, 1, 1})
	}
	return md
}

func makeLogs(batch, records int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", batch))
	sl := rl.ScopeLogs().AppendEmpty()
	for i := range records {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1e18 + i))
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.Body().SetStr(fmt.Sprintf("log %d of batch %d", i, batch))
		lr.Attributes().PutInt("i", int64(i))
	}
	return ld
}

// keys returns one sorted key per item of the stored OTLP requests.
func keys(t *testing.T, kind string, writes [][]byte) []string {
	t.Helper()
	var out []string
	for _, w := range writes {
		switch kind {
		case "traces":
			var u ptrace.ProtoUnmarshaler
			td, err := u.UnmarshalTraces(w)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, traceKeys(td)...)
		case "metrics":
			var u pmetric.ProtoUnmarshaler
			md, err := u.UnmarshalMetrics(w)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, metricKeys(md)...)
		default:
			var u plog.ProtoUnmarshaler
			ld, err := u.UnmarshalLogs(w)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, logKeys(ld)...)
		}
	}
	sort.Strings(out)
	return out
}

func traceKeys(td ptrace.Traces) []string {
	var out []string
	for i := range td.ResourceSpans().Len() {
		rs := td.ResourceSpans().At(i)
		for j := range rs.ScopeSpans().Len() {
			ss := rs.ScopeSpans().At(j)
			for k := range ss.Spans().Len() {
				sp := ss.Spans().At(k)
				out = append(out, fmt.Sprint(rs.Resource().Attributes().AsRaw(), ss.Scope().Name(), sp.Name(), sp.TraceID(), sp.SpanID(),
					sp.StartTimestamp(), sp.EndTimestamp(), sp.Kind(), sp.Attributes().AsRaw(), sp.Events().Len()))
			}
		}
	}
	return out
}

func metricKeys(md pmetric.Metrics) []string {
	var out []string
	for i := range md.ResourceMetrics().Len() {
		rm := md.ResourceMetrics().At(i)
		for j := range rm.ScopeMetrics().Len() {
			sm := rm.ScopeMetrics().At(j)
			for k := range sm.Metrics().Len() {
				m := sm.Metrics().At(k)
				pre := fmt.Sprint(rm.Resource().Attributes().AsRaw(), m.Name(), m.Unit(), m.Type())
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					for d := range m.Gauge().DataPoints().Len() {
						p := m.Gauge().DataPoints().At(d)
						out = append(out, fmt.Sprint(pre, p.Timestamp(), p.DoubleValue(), p.Attributes().AsRaw()))
					}
				case pmetric.MetricTypeSum:
					for d := range m.Sum().DataPoints().Len() {
						p := m.Sum().DataPoints().At(d)
						out = append(out, fmt.Sprint(pre, m.Sum().IsMonotonic(), m.Sum().AggregationTemporality(), p.StartTimestamp(), p.Timestamp(), p.IntValue()))
					}
				case pmetric.MetricTypeHistogram:
					for d := range m.Histogram().DataPoints().Len() {
						p := m.Histogram().DataPoints().At(d)
						out = append(out, fmt.Sprint(pre, p.Timestamp(), p.Count(), p.Sum(), p.ExplicitBounds().AsRaw(), p.BucketCounts().AsRaw()))
					}
				}
			}
		}
	}
	return out
}

func logKeys(ld plog.Logs) []string {
	var out []string
	for i := range ld.ResourceLogs().Len() {
		rl := ld.ResourceLogs().At(i)
		for j := range rl.ScopeLogs().Len() {
			sl := rl.ScopeLogs().At(j)
			for k := range sl.LogRecords().Len() {
				lr := sl.LogRecords().At(k)
				out = append(out, fmt.Sprint(rl.Resource().Attributes().AsRaw(), lr.Timestamp(), lr.SeverityNumber(), lr.SeverityText(), lr.Body().AsString(), lr.Attributes().AsRaw()))
			}
		}
	}
	return out
}

// produce returns the batch of kind number i made by prod.
func produce(t *testing.T, prod *arrow_record.Producer, kind string, i int) (*arrowpb.BatchArrowRecords, []string) {
	t.Helper()
	var bar *arrowpb.BatchArrowRecords
	var want []string
	var err error
	switch kind {
	case "traces":
		td := makeTraces(i, 50+i, 0)
		want = traceKeys(td)
		bar, err = prod.BatchArrowRecordsFromTraces(td)
	case "metrics":
		md := makeMetrics(i, 20+i)
		want = metricKeys(md)
		bar, err = prod.BatchArrowRecordsFromMetrics(md)
	default:
		ld := makeLogs(i, 30+i)
		want = logKeys(ld)
		bar, err = prod.BatchArrowRecordsFromLogs(ld)
	}
	if err != nil {
		t.Fatal(err)
	}
	return bar, want
}

// TestSignalsStored: otel-arrow's producer sends batches of every signal
// on its stream; each is answered OK and every item is stored as sent.
func TestSignalsStored(t *testing.T) {
	for _, kind := range []string{"traces", "metrics", "logs"} {
		t.Run(kind, func(t *testing.T) {
			srv := serve(t, Config{})
			s := open(t, dial(t, srv.addr), kind)
			prod := arrow_record.NewProducer()
			defer prod.Close()
			var want []string
			for i := range 4 {
				bar, w := produce(t, prod, kind, i)
				want = append(want, w...)
				if st := exchange(t, s, bar); st.StatusCode != arrowpb.StatusCode_OK {
					t.Fatalf("batch %d: %v %q", i, st.StatusCode, st.StatusMessage)
				}
			}
			sort.Strings(want)
			got := keys(t, kind, srv.sink.all())
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("stored %d items, sent %d; first stored %q, first sent %q", len(got), len(want), first(got), first(want))
			}
			s.CloseSend()
			if _, err := s.Recv(); err != io.EOF {
				t.Fatalf("stream ended with %v, want OK", err)
			}
			if held := srv.p.StreamStateHeld(); held != 0 {
				t.Fatalf("%d bytes of stream state still held after the stream ended", held)
			}
		})
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// TestHugeDictionaryRefused: a stream whose dictionaries (distinct long
// attribute values) grow past its memory limit gets RESOURCE_EXHAUSTED
// for that batch and is ended, its state returned; an honest stream on
// the same connection, before and after, is served as if it were alone.
func TestHugeDictionaryRefused(t *testing.T) {
	const limit = 2 << 20
	srv := serve(t, Config{MemoryLimit: limit})
	conn := dial(t, srv.addr)
	honest := open(t, conn, "traces")
	hprod := arrow_record.NewProducer()
	defer hprod.Close()
	bar, _ := produce(t, hprod, "traces", 0)
	if st := exchange(t, honest, bar); st.StatusCode != arrowpb.StatusCode_OK {
		t.Fatalf("honest batch: %v %q", st.StatusCode, st.StatusMessage)
	}
	heldHonest := srv.p.StreamStateHeld()
	if heldHonest <= 0 || heldHonest > limit {
		t.Fatalf("the honest stream holds %d bytes of state, want (0, %d]", heldHonest, limit)
	}

	hostile := open(t, conn, "traces")
	prod := arrow_record.NewProducer()
	defer prod.Close()
	var refused *arrowpb.BatchStatus
	for i := 1; i <= 20 && refused == nil; i++ {
		// 2,000 spans a batch, each with its own 1 KiB value.
		b, err := prod.BatchArrowRecordsFromTraces(makeTraces(i, 2000, 1024))
		if err != nil {
			t.Fatal(err)
		}
		st := exchange(t, hostile, b)
		if st.StatusCode != arrowpb.StatusCode_OK {
			refused = st
		}
		// Never more than the limit, and one charge step, held at once.
		if held := srv.p.StreamStateHeld(); held > heldHonest+limit+chargeStep {
			t.Fatalf("batch %d: %d bytes of stream state held, over %d+%d", i, held, heldHonest, limit)
		}
	}
	if refused == nil || refused.StatusCode != arrowpb.StatusCode_RESOURCE_EXHAUSTED {
		t.Fatalf("hostile stream: got %v, want a RESOURCE_EXHAUSTED batch", refused)
	}
	if _, err := hostile.Recv(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("hostile stream ended with %v, want RESOURCE_EXHAUSTED", err)
	}
	if held := srv.p.StreamStateHeld(); held != heldHonest {
		t.Fatalf("after the hostile stream ended %d bytes of state are held, want the honest stream's %d", held, heldHonest)
	}
	if got := srv.r.refusedLimit.Get(); got != 1 {
		t.Fatalf("memory_limit refusals = %d, want 1", got)
	}
	for i := 1; i < 4; i++ {
		bar, _ := produce(t, hprod, "traces", i)
		if st := exchange(t, honest, bar); st.StatusCode != arrowpb.StatusCode_OK {
			t.Fatalf("honest batch %d after the hostile stream: %v %q", i, st.StatusCode, st.StatusMessage)
		}
	}
	want := 0
	for i := range 4 {
		want += 50 + i
	}
	if got := len(keys(t, "traces", srv.sink.all())); got < want {
		t.Fatalf("stored %d spans, want at least the honest stream's %d", got, want)
	}
}

// TestNoRoomForState: when the admission budget's half for stream state
// is taken, a stream's Arrow buffers are refused UNAVAILABLE (retryable)
// before they are allocated.
func TestNoRoomForState(t *testing.T) {
	srv := serve(t, Config{})
	// Take all of the state's half of the budget but one step.
	take := srv.p.AdmissionLimit()/2 - chargeStep
	if !srv.p.HoldStreamState(take) {
		t.Fatal("cannot hold the state budget")
	}
	defer srv.p.ReleaseStreamState(take)
	s := open(t, dial(t, srv.addr), "traces")
	prod := arrow_record.NewProducer()
	defer prod.Close()
	b, err := prod.BatchArrowRecordsFromTraces(makeTraces(1, 2000, 512))
	if err != nil {
		t.Fatal(err)
	}
	st := exchange(t, s, b)
	if st.StatusCode != arrowpb.StatusCode_UNAVAILABLE {
		t.Fatalf("got %v %q, want UNAVAILABLE", st.StatusCode, st.StatusMessage)
	}
	if _, err := s.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("stream ended with %v, want UNAVAILABLE", err)
	}
	if held := srv.p.StreamStateHeld(); held != take {
		t.Fatalf("%d bytes held after the refusal, want %d", held, take)
	}
}

// TestBadRecord: a batch whose Arrow bytes are corrupt is answered
// INVALID_ARGUMENT and its stream ends (its Arrow state is lost, as the
// Collector's receiver ends it); the next stream is served.
func TestBadRecord(t *testing.T) {
	srv := serve(t, Config{})
	conn := dial(t, srv.addr)
	for _, c := range []struct {
		name string
		mut  func(b []byte)
	}{
		{"declared metadata length", func(b []byte) { b[4], b[5], b[6], b[7] = 0xf0, 0xff, 0xff, 0x7f }},
		{"flipped bytes", func(b []byte) {
			for i := len(b) / 3; i < len(b)/3+64 && i < len(b); i++ {
				b[i] ^= 0x5a
			}
		}},
		{"truncated", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, conn, "logs")
			prod := arrow_record.NewProducer()
			defer prod.Close()
			bar, _ := produce(t, prod, "logs", 0)
			p := bar.ArrowPayloads[len(bar.ArrowPayloads)-1]
			if c.mut == nil {
				p.Record = p.Record[:len(p.Record)/2]
			} else {
				c.mut(p.Record)
			}
			st := exchange(t, s, bar)
			if st.StatusCode != arrowpb.StatusCode_INVALID_ARGUMENT || !strings.Contains(st.StatusMessage, "cannot") {
				t.Fatalf("got %v %q, want INVALID_ARGUMENT", st.StatusCode, st.StatusMessage)
			}
			if _, err := s.Recv(); status.Code(err) != codes.InvalidArgument {
				t.Fatalf("stream ended with %v, want INVALID_ARGUMENT", err)
			}
		})
	}
	s := open(t, conn, "logs")
	prod := arrow_record.NewProducer()
	defer prod.Close()
	bar, _ := produce(t, prod, "logs", 1)
	if st := exchange(t, s, bar); st.StatusCode != arrowpb.StatusCode_OK {
		t.Fatalf("a good stream after the bad ones: %v %q", st.StatusCode, st.StatusMessage)
	}
	if held := srv.p.StreamStateHeld(); held <= 0 {
		t.Fatalf("held %d", held)
	}
}

// TestWrongSignal: a metrics batch on the traces method is refused
// INVALID_ARGUMENT, not stored as traces.
func TestWrongSignal(t *testing.T) {
	srv := serve(t, Config{})
	s := open(t, dial(t, srv.addr), "traces")
	prod := arrow_record.NewProducer()
	defer prod.Close()
	bar, _ := produce(t, prod, "metrics", 0)
	st := exchange(t, s, bar)
	if st.StatusCode != arrowpb.StatusCode_INVALID_ARGUMENT {
		t.Fatalf("got %v %q", st.StatusCode, st.StatusMessage)
	}
	if n := len(srv.sink.all()); n != 0 {
		t.Fatalf("%d requests stored", n)
	}
	var se interface{ GRPCStatus() *status.Status }
	if _, err := s.Recv(); !errors.As(err, &se) || se.GRPCStatus().Code() != codes.InvalidArgument {
		t.Fatalf("stream ended with %v", err)
	}
}

// TestInvalidItemsStreamLivesOn: a batch whose items the pipeline rejects
// (spans without ids) is answered INVALID_ARGUMENT, its Arrow state being
// whole, and the stream goes on: the next batch is stored, as the
// Collector's receiver answers a permanent consumer error.
func TestInvalidItemsStreamLivesOn(t *testing.T) {
	srv := serve(t, Config{})
	s := open(t, dial(t, srv.addr), "traces")
	prod := arrow_record.NewProducer()
	defer prod.Close()
	bad := makeTraces(0, 3, 0)
	spans := bad.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := range spans.Len() {
		spans.At(i).SetTraceID(pcommon.TraceID{})
	}
	bar, err := prod.BatchArrowRecordsFromTraces(bad)
	if err != nil {
		t.Fatal(err)
	}
	if st := exchange(t, s, bar); st.StatusCode != arrowpb.StatusCode_INVALID_ARGUMENT || !strings.Contains(st.StatusMessage, "trace_id") {
		t.Fatalf("got %v %q, want INVALID_ARGUMENT naming trace_id", st.StatusCode, st.StatusMessage)
	}
	good, want := produce(t, prod, "traces", 1)
	if st := exchange(t, s, good); st.StatusCode != arrowpb.StatusCode_OK {
		t.Fatalf("the next batch: %v %q", st.StatusCode, st.StatusMessage)
	}
	sort.Strings(want)
	if got := keys(t, "traces", srv.sink.all()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stored %d spans, want the good batch's %d", len(got), len(want))
	}
}
