package handler

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/storage"
)

// memSink records writes; failWith makes Write fail.
type memSink struct {
	mu       sync.Mutex
	writes   []memWrite
	failWith error
}

type memWrite struct {
	signal storage.Signal
	data   []byte
	items  int
}

func (s *memSink) Write(_ context.Context, sig storage.Signal, data []byte, items int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failWith != nil {
		return s.failWith
	}
	s.writes = append(s.writes, memWrite{sig, bytes.Clone(data), items})
	return nil
}

func (s *memSink) Close() error { return nil }

func (s *memSink) all() []memWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]memWrite(nil), s.writes...)
}

// startHandler serves h on a free port (listenHandler) and returns a
// gRPC client of it.
func startHandler(t *testing.T, h *Handler) *grpcwire.Client {
	t.Helper()
	return grpcwire.NewClient(listenHandler(t, h), nil)
}

// listenHandler serves h on a free port, over h2c and HTTP/1.1, until the
// test ends, and returns its address.
func listenHandler(t *testing.T, h *Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	srv.Protocols.SetHTTP1(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// traceRequest builds an ExportTraceServiceRequest with one resource, one
// scope and a span per trace id given.
func traceRequest(traceIDs ...[]byte) []byte {
	var mp easyproto.MarshalerPool
	m := mp.Get()
	rs := m.MessageMarshaler().AppendMessage(1)
	rs.AppendMessage(1).AppendMessage(1) // resource with an empty attribute
	ss := rs.AppendMessage(2)
	ss.AppendMessage(1).AppendString(1, "scope")
	for i, id := range traceIDs {
		span := ss.AppendMessage(2)
		span.AppendBytes(1, id)
		span.AppendBytes(2, []byte{1, 2, 3, 4, 5, 6, 7, byte(i + 1)})
		span.AppendString(5, "span")
	}
	return m.Marshal(nil)
}

var goodID = []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

const traceExport = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

func statusOf(t *testing.T, err error) *grpcwire.Status {
	t.Helper()
	var st *grpcwire.Status
	if !errors.As(err, &st) {
		t.Fatalf("want a gRPC status, got %v", err)
	}
	return st
}

func TestExportFullSuccessLeavesPartialSuccessUnset(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	req := traceRequest(goodID, goodID)
	resp, err := c.Invoke(context.Background(), traceExport, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp) != 0 {
		t.Fatalf("full success must leave partial_success unset; response is %x", resp)
	}
	w := sink.all()
	if len(w) != 1 || w[0].signal != storage.Traces || w[0].items != 2 || !bytes.Equal(w[0].data, req) {
		t.Fatalf("stored %+v", w)
	}
}

func TestExportPartialSuccess(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	resp, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID, []byte{1, 2, 3}, goodID))
	if err != nil {
		t.Fatal(err)
	}
	ps, _, _ := easyproto.GetMessageData(resp, 1)
	rejected, _, _ := easyproto.GetInt64(ps, 1)
	msg, _, _ := easyproto.GetString(ps, 2)
	if rejected != 1 || !strings.Contains(msg, "trace_id") || !strings.Contains(msg, "spans[1]") {
		t.Fatalf("partial_success: rejected=%d message=%q", rejected, msg)
	}
	w := sink.all()
	if len(w) != 1 || w[0].items != 2 {
		t.Fatalf("stored %+v", w)
	}
	if bytes.Contains(w[0].data, []byte{0x0a, 3, 1, 2, 3}) {
		t.Fatal("the rejected span was stored")
	}
}

func TestExportEmptyAndAllRejected(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	if _, err := c.Invoke(context.Background(), traceExport, nil); err != nil {
		t.Fatalf("empty request: %v", err)
	}
	resp, err := c.Invoke(context.Background(), traceExport, traceRequest([]byte{1}))
	if err != nil || len(resp) == 0 {
		t.Fatalf("all rejected: %x %v", resp, err)
	}
	if n := len(sink.all()); n != 0 {
		t.Fatalf("stored %d requests with no valid items", n)
	}
}

func TestExportErrors(t *testing.T) {
	tests := []struct {
		name      string
		sinkErr   error
		method    string
		req       []byte
		wantCode  grpcwire.Code
		wantMsg   string
		wantRetry bool
	}{
		{"garbage protobuf", nil, traceExport, []byte{0xff, 0xff, 0xff}, grpcwire.InvalidArgument, "cannot decode ExportTraceServiceRequest", false},
		{"truncated protobuf", nil, traceExport, traceRequest(goodID)[:20], grpcwire.InvalidArgument, "cannot decode", false},
		{"storage down", storage.ErrUnavailable, traceExport, traceRequest(goodID), grpcwire.Unavailable, "cannot store", true},
		{"storage rejects for good", storage.ErrRejected, traceExport, traceRequest(goodID), grpcwire.InvalidArgument, "cannot accept", false},
		{"unknown service", nil, "/foo.Bar/Export", nil, grpcwire.Unimplemented, "unknown service foo.Bar", false},
		{"unknown method", nil, "/opentelemetry.proto.collector.trace.v1.TraceService/Push", nil, grpcwire.Unimplemented, "unknown method Push for service opentelemetry.proto.collector.trace.v1.TraceService", false},
		{"malformed path", nil, "/nomethod", nil, grpcwire.Unimplemented, "malformed method name", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &memSink{failWith: tt.sinkErr}
			c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger(), RetryDelay: 3 * time.Second}))
			_, err := c.Invoke(context.Background(), tt.method, tt.req)
			st := statusOf(t, err)
			if st.Code != tt.wantCode || !strings.Contains(st.Message, tt.wantMsg) {
				t.Fatalf("got %v %q, want %v with %q", st.Code, st.Message, tt.wantCode, tt.wantMsg)
			}
			if tt.wantRetry != (st.RetryDelay == 3*time.Second) {
				t.Fatalf("retry delay %v", st.RetryDelay)
			}
		})
	}
}

func TestMetricsAndLogsRoutes(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	for _, path := range []string{
		"/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
		"/opentelemetry.proto.collector.logs.v1.LogsService/Export",
	} {
		if _, err := c.Invoke(context.Background(), path, nil); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}

func healthRequest(service string) []byte {
	var mp easyproto.MarshalerPool
	m := mp.Get()
	m.MessageMarshaler().AppendString(1, service)
	return m.Marshal(nil)
}

func TestHealthCheckAndList(t *testing.T) {
	h := New(Config{Sink: &memSink{}, Logger: quietLogger()})
	c := startHandler(t, h)
	for _, svc := range healthServices {
		resp, err := c.Invoke(context.Background(), "/grpc.health.v1.Health/Check", healthRequest(svc))
		if err != nil {
			t.Fatalf("%q: %v", svc, err)
		}
		if st, _, _ := easyproto.GetInt32(resp, 1); st != servingStatusServing {
			t.Fatalf("%q: status %d", svc, st)
		}
	}
	_, err := c.Invoke(context.Background(), "/grpc.health.v1.Health/Check", healthRequest("nope"))
	if st := statusOf(t, err); st.Code != grpcwire.NotFound {
		t.Fatalf("unknown service: %v", st)
	}
	resp, err := c.Invoke(context.Background(), "/grpc.health.v1.Health/List", nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var fc easyproto.FieldContext
	for src := resp; len(src) > 0; n++ {
		src, _ = fc.NextField(src)
	}
	if n != len(healthServices) {
		t.Fatalf("List returned %d entries", n)
	}
	h.Shutdown()
	resp, _ = c.Invoke(context.Background(), "/grpc.health.v1.Health/Check", healthRequest(""))
	if st, _, _ := easyproto.GetInt32(resp, 1); st != servingStatusNotServing {
		t.Fatalf("after Shutdown: status %d", st)
	}
}

// TestHealthWatch reads the stream by hand: SERVING first, then NOT_SERVING
// on shutdown, then the stream ends.
func TestHealthWatch(t *testing.T) {
	h := New(Config{Sink: &memSink{}, Logger: quietLogger()})
	c := startHandler(t, h)
	body := healthRequest("")
	framed := append([]byte{0, 0, 0, 0, byte(len(body))}, body...)
	req, _ := http.NewRequest("POST", c.BaseURL+"/grpc.health.v1.Health/Watch", bytes.NewReader(framed))
	req.Header.Set("Content-Type", "application/grpc")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	readStatus := func() int32 {
		var hdr [5]byte
		if _, err := io.ReadFull(resp.Body, hdr[:]); err != nil {
			t.Fatal(err)
		}
		msg := make([]byte, hdr[4])
		io.ReadFull(resp.Body, msg)
		st, _, _ := easyproto.GetInt32(msg, 1)
		return st
	}
	if st := readStatus(); st != servingStatusServing {
		t.Fatalf("first status %d", st)
	}
	h.Shutdown()
	if st := readStatus(); st != servingStatusNotServing {
		t.Fatalf("second status %d", st)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.Trailer.Get("Grpc-Status") != "14" {
		t.Fatalf("trailers %v", resp.Trailer)
	}
}
