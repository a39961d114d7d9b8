package handler

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// TestStalledBodyIsCutOff: a client that sends part of a request and stops
// gets a clear error after the body read timeout, and the connection keeps
// serving others.
func TestStalledBodyIsCutOff(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger(), BodyReadTimeout: 200 * time.Millisecond}))

	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequest("POST", c.BaseURL+traceExport, pr)
	req.Header.Set("Content-Type", "application/grpc")
	go pw.Write([]byte{0, 0, 0, 1, 0, 1, 2, 3}) // promises 256 bytes, sends 3
	start := time.Now()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := resp.Trailer.Get("Grpc-Status") + resp.Header.Get("Grpc-Status"); got != "4" {
		t.Fatalf("grpc-status %q, want 4 (DEADLINE_EXCEEDED)", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("cut off after %v", d)
	}

	// OTLP/HTTP: 408 with a Status body.
	pr2, pw2 := io.Pipe()
	defer pw2.Close()
	hreq, _ := http.NewRequest("POST", c.BaseURL+"/v1/traces", pr2)
	hreq.Header.Set("Content-Type", "application/x-protobuf")
	go pw2.Write([]byte{0x0a})
	hresp, err := c.HTTP.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(hresp.Body)
	hresp.Body.Close()
	if hresp.StatusCode != http.StatusRequestTimeout || len(body) == 0 {
		t.Fatalf("HTTP %d %q", hresp.StatusCode, body)
	}
	if len(sink.all()) != 0 {
		t.Fatal("a partial request was stored")
	}
}

// TestIdleStreamIsNotCutOff: a stream may wait longer than the body read
// timeout between messages.
func TestIdleStreamIsNotCutOff(t *testing.T) {
	c := startHandler(t, New(Config{Sink: &memSink{}, Logger: quietLogger(), BodyReadTimeout: 100 * time.Millisecond}))
	s := openStream(t, c, "ExportTraces")
	s.send(1, traceRequest(goodID))
	s.recv()
	time.Sleep(400 * time.Millisecond)
	s.send(2, traceRequest(goodID))
	if a, ok := s.recv(); !ok || a.id != 2 {
		t.Fatalf("after idling: %+v %v", a, ok)
	}
	s.pw.Close()
	if _, st := s.finish(); st.Code != grpcwire.OK {
		t.Fatalf("status %v", st)
	}
}
