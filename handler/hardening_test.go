package handler

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// Tests of the hardening contracts that can be shown in process; the
// attacks that need a hand-driven HTTP/2 peer against the real binary are
// in cmd/otlp-lite (hostile_test.go).

// A client may send an id again as soon as its acknowledgement arrives
// (stream.proto): the id leaves the in-flight set before the ack is
// written, so the stream never ends with "reused while still in flight".
func TestStreamIDReusedRightAfterAck(t *testing.T) {
	c := startHandler(t, New(Config{Sink: &memSink{}, Logger: quietLogger(), Stream: StreamConfig{MaxRequests: -1, MaxAge: -1}}))
	s := openStream(t, c, "ExportTraces")
	const ids, rounds = 8, 400
	req := traceRequest(goodID)
	for id := uint64(1); id <= ids; id++ {
		s.send(id, req)
	}
	for range ids * rounds {
		a, ok := s.recv()
		if !ok {
			_, st := s.finish()
			t.Fatalf("stream ended early: %+v", st)
		}
		if a.code != resultSuccess {
			t.Fatalf("ack %+v", a)
		}
		s.send(a.id, req) // at once, as the protocol allows
	}
	s.pw.Close()
	acks, st := s.finish()
	if st != nil && st.Code != grpcwire.OK {
		t.Fatalf("stream ended with %v after %d more acks", st, len(acks))
	}
	if len(acks) != ids {
		t.Fatalf("%d acks after half-close, want %d", len(acks), ids)
	}
}

// A stream request's admission budget is released once it is stored,
// before its acknowledgement is written: whenever the client holds an ack,
// the budget of that request is already free.
func TestStreamBudgetReleasedBeforeAck(t *testing.T) {
	h := New(Config{Sink: &memSink{}, Logger: quietLogger()})
	c := startHandler(t, h)
	s := openStream(t, c, "ExportTraces")
	for id := uint64(1); id <= 50; id++ {
		s.send(id, traceRequest(goodID))
		if _, ok := s.recv(); !ok {
			t.Fatal("stream ended")
		}
		if in, _ := h.p.AdmissionState(); in != 0 {
			t.Fatalf("request %d: %d bytes of budget held after its ack arrived", id, in)
		}
	}
}

// A stream whose grpc-timeout passes ends with DEADLINE_EXCEEDED, not
// CANCELLED (PROTOCOL-HTTP2.md: the deadline is the client's, and its
// expiry is DEADLINE_EXCEEDED).
func TestStreamDeadlineExceeded(t *testing.T) {
	c := startHandler(t, New(Config{Sink: &memSink{}, Logger: quietLogger()}))
	s := openStream(t, c, "ExportTraces", "Grpc-Timeout", "300m")
	s.send(1, traceRequest(goodID))
	acks, st := s.finish()
	if st == nil || st.Code != grpcwire.DeadlineExceeded {
		t.Fatalf("status %+v, want DEADLINE_EXCEEDED", st)
	}
	if len(acks) != 1 || acks[0].code != resultSuccess {
		t.Fatalf("acks %+v", acks)
	}
}

// A request whose deadline passed before it was stored is not stored: the
// client is told it failed and will resend it.
func TestExpiredRequestIsNotStored(t *testing.T) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	tk := h.p.Take(context.Background())
	defer h.p.Done(tk)
	tk.Msg = append(tk.Msg[:0], traceRequest(goodID)...)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := h.p.Export(ctx, ingest.Request{Transport: ingest.GRPC, Signal: otlp.Traces, Body: tk.Msg, Ticket: tk})
	st, _ := err.(*grpcwire.Status)
	if st == nil || st.Code != grpcwire.DeadlineExceeded || !strings.Contains(st.Message, "nothing was stored") {
		t.Fatalf("status %+v", st)
	}
	if n := len(sink.all()); n != 0 {
		t.Fatalf("%d writes after the deadline", n)
	}
}

// A health request is capped at maxHealthRequest and charged to the budget;
// without a token (health is exempt from authentication) it still works.
func TestHealthRequestCapped(t *testing.T) {
	h := New(Config{Sink: &memSink{}, Logger: quietLogger(), Auth: denyAll{}})
	c := startHandler(t, h)
	if _, err := c.Invoke(context.Background(), "/grpc.health.v1.Health/Check", healthRequest("")); err != nil {
		t.Fatalf("Check without a token: %v", err)
	}
	_, err := c.Invoke(context.Background(), "/grpc.health.v1.Health/Check", healthRequest(strings.Repeat("x", 2*maxHealthRequest)))
	if st := statusOf(t, err); st.Code != grpcwire.ResourceExhausted {
		t.Fatalf("oversize health request: %+v", st)
	}
	if in, _ := h.p.AdmissionState(); in != 0 {
		t.Fatalf("budget held after health calls: %d", in)
	}
}

type denyAll struct{}

func (denyAll) Authenticate(*http.Request) bool { return false }

// Every refusal is counted by reason, on every path: routing, media type,
// method, authentication, and the enveloped unary call.
func TestRefusalsCountedByReason(t *testing.T) {
	h := New(Config{Sink: &memSink{}, Logger: quietLogger()})
	c := startHandler(t, h)
	post := func(path, ct string, body []byte) {
		resp, err := http.Post(c.BaseURL+path, ct, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post("/v1/nothing", "application/x-protobuf", nil)
	post("/v1/traces", "text/plain", nil)
	post("/v1/traces", "application/x-protobuf", []byte{0xff})
	resp, err := http.Get(c.BaseURL + "/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c.Invoke(context.Background(), "/otlplite.v1.UnaryExporter/ExportTraces", []byte{0xff})
	c.Invoke(context.Background(), "/no.Such/Method", nil)

	var buf bytes.Buffer
	h.Metrics().WritePrometheus(&buf)
	for _, want := range []string{
		`otlplite_refusals_total{transport="http",reason="not_found"} 1`,
		`otlplite_refusals_total{transport="http",reason="unsupported_media_type"} 1`,
		`otlplite_refusals_total{transport="http",reason="invalid_argument"} 1`,
		`otlplite_refusals_total{transport="http",reason="method_not_allowed"} 1`,
		`otlplite_refusals_total{transport="grpc",reason="invalid_argument"} 1`,
		`otlplite_refusals_total{transport="grpc",reason="unimplemented"} 1`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Log(buf.String())
	}
}

// A partial-success message is cut to maxResponseMessage at a UTF-8
// boundary (OTLP caps a response at 4 MiB).
func TestTruncateMessage(t *testing.T) {
	long := strings.Repeat("é", maxResponseMessage)
	got := truncateMessage(long)
	if len(got) > maxResponseMessage || !strings.HasSuffix(got, "(truncated)") || !strings.HasPrefix(got, "é") {
		t.Fatalf("len %d, %q...", len(got), got[:20])
	}
	if short := "3 of 4 spans rejected"; truncateMessage(short) != short {
		t.Fatal("short message changed")
	}
	resp := appendExportResponse(nil, ingest.Result{Items: 2, Rejected: 1, Message: long})
	if len(resp) > maxResponseMessage+32 {
		t.Fatalf("response of %d bytes", len(resp))
	}
}

// The write watchdog abandons a response whose write has been blocked for
// the timeout (at most 1.25 times it), and never one whose write ended.
func TestWriteGuardFiresOnlyOnBlockedWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 8 * time.Second
		timeouts := metrics.NewSet().NewCounter("t")
		gs := newWriteGuards(timeout, timeouts)
		defer close(gs.stop)
		w := httptest.NewRecorder()

		done := gs.get(nil, w)
		done.begin()
		done.end() // a write that completed at once
		stuck := gs.get(nil, w)
		stuck.begin() // a write that never completes
		time.Sleep(timeout * 5 / 4)
		synctest.Wait()
		if !gs.put(stuck) {
			t.Fatal("a write blocked for 1.25 x the timeout was not abandoned")
		}
		if gs.put(done) {
			t.Fatal("a completed write was abandoned")
		}
		if timeouts.Get() != 1 {
			t.Fatalf("%d timeouts counted, want 1", timeouts.Get())
		}
		// A guard given back and taken again starts clean.
		again := gs.get(nil, w)
		time.Sleep(2 * timeout)
		synctest.Wait()
		if gs.put(again) {
			t.Fatal("a reused guard fired without a write")
		}
	})
}
