package handler

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/storage"
)

// logBuffer collects a JSON slog handler's lines, safely across goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines parses every line written so far; a line that is not one JSON
// object fails the test (a multi-line record would).
func (b *logBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	data := bytes.Clone(b.buf.Bytes())
	b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, sc.Bytes())
		}
		out = append(out, m)
	}
	return out
}

// waitLines polls (with a deadline: the line is written after the response
// is sent, so the client can see the answer first) until n lines match.
func (b *logBuffer) waitLines(t *testing.T, n int, match func(map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got []map[string]any
		for _, l := range b.lines(t) {
			if match(l) {
				got = append(got, l)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d matching log lines, want %d; log:\n%s", len(got), n, b.buf.String())
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
}

func jsonLogger(b *logBuffer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: level}))
}

func isRequestLine(l map[string]any) bool { return l["msg"] == "request" }

// checkFields compares a parsed log line with want; JSON numbers are
// float64.
func checkFields(t *testing.T, line map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got, ok := line[k]; !ok || got != v {
			t.Errorf("field %s = %v (present %v), want %v; line %v", k, got, ok, v, line)
		}
	}
}

// TestRequestLogLines: at debug level each export request gets one JSON
// line with its peer, transport, signal, items, bytes, result and duration,
// on every transport.
func TestRequestLogLines(t *testing.T) {
	var logs logBuffer
	h := New(Config{Sink: &memSink{}, Logger: jsonLogger(&logs, slog.LevelDebug)})
	c := startHandler(t, h)
	byTransport := func(tr, sig string) func(map[string]any) bool {
		return func(l map[string]any) bool {
			return isRequestLine(l) && l["transport"] == tr && l["signal"] == sig
		}
	}
	common := func(t *testing.T, l map[string]any) {
		t.Helper()
		if p, _ := l["peer"].(string); !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("peer %v", l["peer"])
		}
		if d, ok := l["duration"].(float64); !ok || d <= 0 {
			t.Errorf("duration %v", l["duration"])
		}
		if l["level"] != "DEBUG" {
			t.Errorf("level %v", l["level"])
		}
		if _, ok := l["tenant"]; ok {
			t.Errorf("tenant logged with no tenant: %v", l)
		}
	}

	t.Run("grpc partial success", func(t *testing.T) {
		req := traceRequest(goodID, []byte{1, 2, 3})
		if _, err := c.Invoke(context.Background(), traceExport, req); err != nil {
			t.Fatal(err)
		}
		l := logs.waitLines(t, 1, byTransport("grpc", "traces"))[0]
		common(t, l)
		checkFields(t, l, map[string]any{"items": 2.0, "rejected": 1.0, "bytes": float64(len(req)),
			"wire_bytes": float64(len(req)), "result": "OK"})
		if m, _ := l["message"].(string); !strings.Contains(m, "1 of 2 spans rejected") {
			t.Errorf("message %q", m)
		}
		if _, ok := l["http_status"]; ok {
			t.Error("gRPC line has http_status")
		}
	})

	t.Run("http json", func(t *testing.T) {
		resp, err := http.Post(c.BaseURL+"/v1/traces", "application/json", strings.NewReader(jsonTrace))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		l := logs.waitLines(t, 1, byTransport("http", "traces"))[0]
		common(t, l)
		checkFields(t, l, map[string]any{"encoding": "json", "items": 2.0, "rejected": 0.0,
			"bytes": float64(len(jsonTrace)), "wire_bytes": float64(len(jsonTrace)), "result": "OK", "http_status": 200.0})
	})

	t.Run("http refused", func(t *testing.T) {
		resp, err := http.Post(c.BaseURL+"/v1/logs", "application/x-protobuf", bytes.NewReader([]byte{0xff}))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		l := logs.waitLines(t, 1, byTransport("http", "logs"))[0]
		common(t, l)
		checkFields(t, l, map[string]any{"encoding": "protobuf", "items": 0.0, "bytes": 1.0,
			"result": "INVALID_ARGUMENT", "http_status": 400.0, "reason": "invalid_argument"})
		if m, _ := l["message"].(string); !strings.Contains(m, "cannot decode ExportLogsServiceRequest") {
			t.Errorf("message %q", m)
		}
	})

	t.Run("grpc stream", func(t *testing.T) {
		s := openStream(t, c, "ExportMetrics")
		s.send(1, nil)
		s.send(2, nil)
		s.pw.Close()
		if acks, st := s.finish(); len(acks) != 2 || st.Code != grpcwire.OK {
			t.Fatalf("acks %v status %v", acks, st)
		}
		lines := logs.waitLines(t, 2, byTransport("grpc_stream", "metrics"))
		for _, l := range lines {
			common(t, l)
			checkFields(t, l, map[string]any{"items": 0.0, "result": "OK"})
		}
	})

	t.Run("storage down", func(t *testing.T) {
		var logs logBuffer
		c := startHandler(t, New(Config{Sink: &memSink{failWith: storage.ErrUnavailable}, Logger: jsonLogger(&logs, slog.LevelDebug)}))
		_, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID))
		if st := statusOf(t, err); st.Code != grpcwire.Unavailable {
			t.Fatalf("status %v", st)
		}
		l := logs.waitLines(t, 1, byTransport("grpc", "traces"))[0]
		checkFields(t, l, map[string]any{"items": 1.0, "result": "UNAVAILABLE", "reason": "unavailable"})
	})
}

// TestRefusalLevel: what clients do in normal operation (go away, let
// their own deadline pass) is logged at DEBUG, not WARN; a body that
// stalls past our read timeout stays WARN, on both protocols (which also
// pins the message prefix bodyStalled relies on).
func TestRefusalLevel(t *testing.T) {
	// The levels of each status: ingest's TestRefusalLevelTable.
	var logs logBuffer
	c := startHandler(t, New(Config{Sink: &memSink{}, Logger: jsonLogger(&logs, slog.LevelWarn), BodyReadTimeout: 200 * time.Millisecond}))
	// The client's deadline passes on a stream: not a WARN.
	s := openStream(t, c, "ExportTraces", "Grpc-Timeout", "300m")
	s.send(1, traceRequest(goodID))
	if _, st := s.finish(); st.Code != grpcwire.DeadlineExceeded {
		t.Fatalf("stream status %v", st)
	}
	// Stalled bodies, gRPC then OTLP/HTTP: WARN.
	for _, path := range []string{traceExport, "/v1/traces"} {
		pr, pw := io.Pipe()
		req, _ := http.NewRequest("POST", c.BaseURL+path, pr)
		req.Header.Set("Content-Type", "application/grpc")
		if path == "/v1/traces" {
			req.Header.Set("Content-Type", "application/x-protobuf")
		}
		go pw.Write([]byte{0, 0, 0, 1, 0, 1, 2, 3})
		resp, err := c.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		pw.Close()
	}
	stalled := logs.waitLines(t, 2, func(l map[string]any) bool { return l["msg"] == "request refused" })
	for _, l := range stalled {
		checkFields(t, l, map[string]any{"level": "WARN", "reason": "deadline_exceeded"})
		if m, _ := l["message"].(string); !strings.HasPrefix(m, ingest.StalledPrefix) {
			t.Errorf("stall message %q does not start with %q", m, ingest.StalledPrefix)
		}
	}
	if n := len(logs.lines(t)); n != 2 {
		t.Fatalf("%d lines at WARN, want the 2 stalls:\n%s", n, logs.buf.String())
	}
}
