package handler

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// testStream is a hand-written client of otlplite.v1.StreamExporter.
type testStream struct {
	t    *testing.T
	pw   *io.PipeWriter
	resp *http.Response
}

// openStream opens a stream of method with the extra header pairs kv.
func openStream(t *testing.T, c *grpcwire.Client, method string, kv ...string) *testStream {
	t.Helper()
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", c.BaseURL+"/otlplite.v1.StreamExporter/"+method, pr)
	req.Header.Set("Content-Type", "application/grpc")
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.Close(); resp.Body.Close() })
	return &testStream{t: t, pw: pw, resp: resp}
}

// envelope wraps an Export*ServiceRequest (field 1) as a stream request
// (id = 1, payload = field 2), as the proposal's two-field message.
func envelope(id uint64, exportReq []byte) []byte {
	var mp easyproto.MarshalerPool
	m := mp.Get()
	mm := m.MessageMarshaler()
	mm.AppendUint64(1, id)
	var fc easyproto.FieldContext
	for src := exportReq; len(src) > 0; {
		src, _ = fc.NextField(src)
		data, _ := fc.MessageData()
		mm.AppendBytes(2, data)
	}
	return m.Marshal(nil)
}

func (s *testStream) send(id uint64, exportReq []byte) {
	if _, err := s.pw.Write(frame(envelope(id, exportReq))); err != nil {
		s.t.Fatalf("send %d: %v", id, err)
	}
}

func frame(msg []byte) []byte {
	n := len(msg)
	return append([]byte{0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, msg...)
}

// The ExportResponse result codes, as recv decodes them.
const (
	resultSuccess      = int64(otlp.Success)
	resultNonRetryable = int64(otlp.FailedNoneRetryable)
	resultRetryable    = int64(otlp.FailedRetryable)
)

type ack struct {
	id       uint64
	code     int64
	message  string
	delay    time.Duration
	hasDelay bool
	rejected int64
}

// recv reads one ExportResponse, or returns false at the end of the stream.
func (s *testStream) recv() (ack, bool) {
	var hdr [5]byte
	if _, err := io.ReadFull(s.resp.Body, hdr[:]); err != nil {
		return ack{}, false
	}
	msg := make([]byte, int(hdr[1])<<24|int(hdr[2])<<16|int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(s.resp.Body, msg); err != nil {
		s.t.Fatalf("short response: %v", err)
	}
	var a ack
	id, _, _ := easyproto.GetUint64(msg, 1)
	a.id = id
	a.code, _, _ = easyproto.GetInt64(msg, 2)
	a.message, _, _ = easyproto.GetString(msg, 3)
	if d, ok, _ := easyproto.GetMessageData(msg, 4); ok {
		sec, _, _ := easyproto.GetInt64(d, 1)
		ns, _, _ := easyproto.GetInt64(d, 2)
		a.delay, a.hasDelay = time.Duration(sec)*time.Second+time.Duration(ns), true
	}
	a.rejected, _, _ = easyproto.GetInt64(msg, 5)
	return a, true
}

// finish reads the remaining acks and returns them with the final status.
func (s *testStream) finish() ([]ack, *grpcwire.Status) {
	var acks []ack
	for {
		a, ok := s.recv()
		if !ok {
			break
		}
		acks = append(acks, a)
	}
	io.Copy(io.Discard, s.resp.Body)
	st := &grpcwire.Status{}
	code := s.resp.Trailer.Get("Grpc-Status")
	if code == "" {
		code = s.resp.Header.Get("Grpc-Status")
	}
	n, err := strconv.Atoi(code)
	if err != nil {
		s.t.Fatalf("unexpected grpc-status %q", code)
	}
	st.Code = grpcwire.Code(n)
	st.Message = grpcwire.DecodeGRPCMessage(s.resp.Trailer.Get("Grpc-Message"))
	if d := s.resp.Trailer.Get("Grpc-Status-Details-Bin"); d != "" {
		st.RetryDelay = -1 // only rotation sends details on streams
	}
	return acks, st
}

func TestStreamHalfCloseAcksEverything(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	s := openStream(t, c, "ExportTraces")
	for id := uint64(1); id <= 20; id++ {
		s.send(id, traceRequest(goodID))
	}
	s.pw.Close()
	acks, st := s.finish()
	if st.Code != grpcwire.OK {
		t.Fatalf("status %v", st)
	}
	seen := map[uint64]bool{}
	for _, a := range acks {
		if a.code != resultSuccess || seen[a.id] {
			t.Fatalf("bad ack %+v", a)
		}
		seen[a.id] = true
	}
	if len(seen) != 20 || len(sink.all()) != 20 {
		t.Fatalf("%d acks, %d stored", len(seen), len(sink.all()))
	}
	// The stored payload is the plain ExportTraceServiceRequest.
	if got := sink.all()[0].data; !bytes.Equal(got, traceRequest(goodID)) {
		t.Fatalf("stored %x", got)
	}
}

// gateSink blocks writes of requests with more than one span until
// released, so acknowledgements of later, smaller requests overtake them.
type gateSink struct {
	memSink
	gate    chan struct{}
	blocked atomic.Int32
	max     atomic.Int32
}

func (g *gateSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	if items > 1 {
		n := g.blocked.Add(1)
		for {
			m := g.max.Load()
			if n <= m || g.max.CompareAndSwap(m, n) {
				break
			}
		}
		<-g.gate
		g.blocked.Add(-1)
	}
	return g.memSink.Write(ctx, sig, data, items)
}

func TestStreamAcksOutOfOrder(t *testing.T) {
	sink := &gateSink{gate: make(chan struct{})}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	s := openStream(t, c, "ExportTraces")
	s.send(1, traceRequest(goodID, goodID)) // held by the sink
	s.send(2, traceRequest(goodID))
	a, _ := s.recv()
	if a.id != 2 {
		t.Fatalf("first ack is for %d, want 2", a.id)
	}
	close(sink.gate)
	a, _ = s.recv()
	if a.id != 1 || a.code != resultSuccess {
		t.Fatalf("second ack %+v", a)
	}
	s.pw.Close()
	if _, st := s.finish(); st.Code != grpcwire.OK {
		t.Fatalf("status %v", st)
	}
}

func TestStreamIDReuseInFlight(t *testing.T) {
	sink := &gateSink{gate: make(chan struct{})}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	s := openStream(t, c, "ExportTraces")
	s.send(7, traceRequest(goodID, goodID)) // stays in flight
	s.send(7, traceRequest(goodID))
	time.AfterFunc(200*time.Millisecond, func() { close(sink.gate) })
	acks, st := s.finish()
	if st.Code != grpcwire.InvalidArgument || !bytes.Contains([]byte(st.Message), []byte("reused")) {
		t.Fatalf("status %+v", st)
	}
	// The request in flight was still acknowledged before the error.
	if len(acks) != 1 || acks[0].id != 7 || acks[0].code != resultSuccess {
		t.Fatalf("acks %+v", acks)
	}
}

func TestStreamRotationAfterMaxRequests(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger(), Stream: StreamConfig{MaxRequests: 3}}))
	s := openStream(t, c, "ExportLogs")
	go func() {
		for id := uint64(1); id <= 5; id++ {
			s.pw.Write(frame(envelope(id, nil)))
		}
	}()
	acks, st := s.finish()
	if st.Code != grpcwire.Unavailable || st.RetryDelay != -1 {
		t.Fatalf("status %+v", st)
	}
	if len(acks) != 3 {
		t.Fatalf("%d acks, want 3", len(acks))
	}
}

func TestStreamRotationOnShutdown(t *testing.T) {
	h := New(Config{Sink: &memSink{}, Logger: quietLogger()})
	c := startHandler(t, h)
	s := openStream(t, c, "ExportMetrics")
	s.send(1, nil)
	if a, _ := s.recv(); a.id != 1 {
		t.Fatalf("ack %+v", a)
	}
	h.Shutdown()
	if _, st := s.finish(); st.Code != grpcwire.Unavailable {
		t.Fatalf("status %+v", st)
	}
}

func TestStreamPerRequestOutcomes(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger(), RetryDelay: 1500 * time.Millisecond}))
	s := openStream(t, c, "ExportTraces")
	s.send(1, traceRequest(goodID, []byte{1, 2}))                       // partial
	s.pw.Write(frame(append(envelope(2, nil), 0x12, 0x02, 0xff, 0xff))) // undecodable ResourceSpans
	s.pw.Close()
	acks, st := s.finish()
	if st.Code != grpcwire.OK || len(acks) != 2 {
		t.Fatalf("%v %+v", st, acks)
	}
	byID := map[uint64]ack{}
	for _, a := range acks {
		byID[a.id] = a
	}
	if a := byID[1]; a.code != resultSuccess || a.rejected != 1 || a.message == "" {
		t.Fatalf("partial: %+v", a)
	}
	if a := byID[2]; a.code != resultNonRetryable || a.message == "" {
		t.Fatalf("undecodable: %+v", a)
	}

	sink.failWith = storage.ErrUnavailable
	s = openStream(t, c, "ExportTraces")
	s.send(3, traceRequest(goodID))
	a, _ := s.recv()
	if a.code != resultRetryable || !a.hasDelay || a.delay != 1500*time.Millisecond {
		t.Fatalf("retryable: %+v", a)
	}
}

// TestStreamBackPressure stalls the sink: the server must stop reading
// after MaxInFlight requests, so the client's writes block (HTTP/2 flow
// control) instead of the server buffering the stream.
func TestStreamBackPressure(t *testing.T) {
	sink := &gateSink{gate: make(chan struct{})}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger(), Stream: StreamConfig{MaxInFlight: 2}}))
	s := openStream(t, c, "ExportTraces")
	ids := make([][]byte, 20000)
	for i := range ids {
		ids[i] = goodID
	}
	big := traceRequest(ids...) // ~0.7 MB
	var sent atomic.Int32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for id := uint64(1); id <= 40; id++ {
			if _, err := s.pw.Write(frame(envelope(id, big))); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	time.Sleep(500 * time.Millisecond)
	if n := sink.max.Load(); n > 2 {
		t.Fatalf("%d requests processed at once, limit 2", n)
	}
	if n := sent.Load(); n >= 40 {
		t.Fatalf("client sent all %d requests into a stalled server: no back-pressure", n)
	}
	close(sink.gate)
	wg.Wait()
	s.pw.Close()
	acks, st := s.finish()
	if st.Code != grpcwire.OK || len(acks) != 40 {
		t.Fatalf("%v, %d acks", st, len(acks))
	}
}

func TestEnvelopeUnary(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	resp, err := c.Invoke(context.Background(), "/otlplite.v1.UnaryExporter/ExportTraces", envelope(42, traceRequest(goodID)))
	if err != nil {
		t.Fatal(err)
	}
	if id, _, _ := easyproto.GetUint64(resp, 1); id != 42 || len(sink.all()) != 1 {
		t.Fatalf("resp %x, stored %d", resp, len(sink.all()))
	}
	_, err = c.Invoke(context.Background(), "/otlplite.v1.StreamExporter/ExportEvents", nil)
	var st *grpcwire.Status
	if !errors.As(err, &st) || st.Code != grpcwire.Unimplemented {
		t.Fatalf("unknown stream method: %v", err)
	}
}

// TestStreamRotationWhileClientKeepsSending rotates many streams whose
// clients keep writing, so the read loop is often mid-message when the
// handler ends the stream: it must never touch the finished response
// (net/http panics on that).
func TestStreamRotationWhileClientKeepsSending(t *testing.T) {
	c := startHandler(t, New(Config{Sink: &memSink{}, Logger: quietLogger(), BodyReadTimeout: time.Second,
		Stream: StreamConfig{MaxRequests: 3}}))
	req := traceRequest(goodID, goodID, goodID)
	for range 30 {
		s := openStream(t, c, "ExportTraces")
		go func() {
			for id := uint64(1); id <= 50; id++ {
				if _, err := s.pw.Write(frame(envelope(id, req))); err != nil {
					return
				}
			}
		}()
		if _, st := s.finish(); st.Code != grpcwire.Unavailable {
			t.Fatalf("status %+v", st)
		}
		s.pw.Close()
	}
}

// TestStreamResponseExplicitZeroRetryInfo: RESOURCE_EXHAUSTED with a
// RetryInfo of zero delay (RetryDelay -1) signals that recovery is possible
// (OTLP v1.11 "Failures"), so the stream answers FailedRetryable, with the
// handler's default delay. The handler's own copy of the rule (RetryDelay >
// 0) answered FailedNoneRetryable; otlpclient's (!= 0) was right.
func TestStreamResponseExplicitZeroRetryInfo(t *testing.T) {
	st := grpcwire.Errorf(grpcwire.ResourceExhausted, "busy")
	st.RetryDelay = -1
	msg := appendStreamResponse(nil, 3, ingest.Result{}, st, 2*time.Second)
	code, _, _ := easyproto.GetInt64(msg, 2)
	d, ok, _ := easyproto.GetMessageData(msg, 4)
	sec, _, _ := easyproto.GetInt64(d, 1)
	if code != resultRetryable || !ok || sec != 2 {
		t.Fatalf("code %d, retry_delay %v %ds", code, ok, sec)
	}
}
