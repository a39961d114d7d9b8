package handler

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// TestOverloadRefusalsPerProtocol fills the budget with a request held by
// the sink and checks each protocol's retryable refusal.
func TestOverloadRefusalsPerProtocol(t *testing.T) {
	sink := &gateSink{gate: make(chan struct{})}
	defer close(sink.gate)
	h := New(Config{Sink: sink, Logger: quietLogger(), RetryDelay: 2 * time.Second,
		Admission: AdmissionConfig{RequestLimit: 6000, WaitingLimit: 1, MaxWait: 10 * time.Millisecond}})
	c := startHandler(t, h)
	held := traceRequest(goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID)
	if len(held) < 3001 || len(held) > 5000 {
		t.Fatalf("held request is %d bytes", len(held))
	}
	go c.Invoke(context.Background(), traceExport, held) // waits in the sink, holding its bytes
	deadline := time.Now().Add(5 * time.Second)
	for sink.blocked.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	big := bytes.Clone(held) // does not fit beside the held one

	_, err := c.Invoke(context.Background(), traceExport, big)
	if st := statusOf(t, err); st.Code != grpcwire.Unavailable || st.RetryDelay <= 0 {
		t.Fatalf("gRPC: %+v", st)
	}
	resp, err := http.Post(c.BaseURL+"/v1/traces", "application/x-protobuf", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("HTTP: %d Retry-After=%q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	s := openStream(t, c, "ExportTraces")
	s.send(9, big)
	a, ok := s.recv()
	if !ok || a.id != 9 || a.code != resultRetryable || !a.hasDelay {
		t.Fatalf("stream: %+v", a)
	}
	// A request larger than the whole budget is refused as too large.
	huge := bytes.Repeat(big, 2)
	_, err = c.Invoke(context.Background(), traceExport, huge)
	if st := statusOf(t, err); st.Code != grpcwire.ResourceExhausted || st.RetryDelay != 0 {
		t.Fatalf("too large: %+v", st)
	}
	// On a stream it is not retryable either: resending cannot help.
	s.send(10, huge)
	if a, ok := s.recv(); !ok || a.id != 10 || a.code != resultNonRetryable || a.hasDelay {
		t.Fatalf("stream, too large: %+v", a)
	}
}
