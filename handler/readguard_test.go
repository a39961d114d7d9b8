package handler

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// stalledUnary sends a unary export that promises 256 bytes, sends 3 and
// stalls, and returns the status it is answered with.
func stalledUnary(t *testing.T, c *grpcwire.Client, timeout string) *grpcwire.Status {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	req, _ := http.NewRequest("POST", c.BaseURL+traceExport, pr)
	req.Header.Set("Content-Type", "application/grpc")
	if timeout != "" {
		req.Header.Set("Grpc-Timeout", timeout)
	}
	go pw.Write([]byte{0, 0, 0, 1, 0, 1, 2, 3})
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	h := resp.Trailer
	if h.Get("Grpc-Status") == "" {
		h = resp.Header
	}
	code, err := strconv.Atoi(h.Get("Grpc-Status"))
	if err != nil {
		t.Fatalf("grpc-status %q", h.Get("Grpc-Status"))
	}
	return &grpcwire.Status{Code: grpcwire.Code(code), Message: h.Get("Grpc-Message")}
}

// TestUnaryReadGuard: a unary export's body read timeout is enforced by
// the handler's read guards (no read deadline per call): a stalled
// request gets DEADLINE_EXCEEDED naming the stall, its guard is given
// back, and an honest request on the same handler is stored.
func TestUnaryReadGuard(t *testing.T) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger(), BodyReadTimeout: 200 * time.Millisecond})
	c := startHandler(t, h)
	st := stalledUnary(t, c, "")
	if st.Code != grpcwire.DeadlineExceeded || !strings.Contains(st.Message, "request body stalled") {
		t.Fatalf("stalled request: %v %q, want DEADLINE_EXCEEDED naming the stall", st.Code, st.Message)
	}
	if _, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID)); err != nil {
		t.Fatalf("honest request after a stalled one: %v", err)
	}
	if len(sink.all()) != 1 {
		t.Fatalf("%d requests stored, want 1", len(sink.all()))
	}
	h.readGuards.mu.Lock()
	made, free := len(h.readGuards.all), len(h.readGuards.free)
	h.readGuards.mu.Unlock()
	if made != free {
		t.Fatalf("%d read guards made, %d given back", made, free)
	}
}

// TestUnaryReadGuardGRPCTimeout: with the read guard, a unary request
// that stalls past its grpc-timeout is still answered at that deadline,
// not at the (much longer) body read timeout.
func TestUnaryReadGuardGRPCTimeout(t *testing.T) {
	c := startHandler(t, New(Config{Sink: &memSink{}, Logger: quietLogger(), BodyReadTimeout: time.Minute}))
	start := time.Now()
	st := stalledUnary(t, c, "200m")
	if st.Code != grpcwire.DeadlineExceeded || strings.Contains(st.Message, "stalled") {
		t.Fatalf("status %v %q, want DEADLINE_EXCEEDED for the grpc-timeout", st.Code, st.Message)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("answered after %v: the body read timeout, not the grpc-timeout", d)
	}
}

// expiringWriter stands in for net/http's HTTP/2 ResponseWriter where
// read deadlines are concerned: one in the past fails the pending and
// later body reads with os.ErrDeadlineExceeded, as net/http's does.
type expiringWriter struct {
	http.ResponseWriter
	body *io.PipeWriter // the client's end of the request body
}

func (w *expiringWriter) SetReadDeadline(d time.Time) error {
	if !d.IsZero() && !d.After(time.Now()) {
		w.body.CloseWithError(fmt.Errorf("%w", os.ErrDeadlineExceeded))
	}
	return nil
}

// TestUnaryReadGuardBound: a unary request whose client sends one byte and
// stalls is answered DEADLINE_EXCEEDED between the body read timeout and
// 1.25 times it (the watchdog looks four times per timeout), naming the
// stall; one whose grpc-timeout is shorter is answered at that deadline,
// naming it. Measured on the bubble's clock.
func TestUnaryReadGuardBound(t *testing.T) {
	const timeout = 4 * time.Second
	for _, tc := range []struct {
		name        string
		grpcTimeout string
		min, max    time.Duration
		says        string
	}{
		{"body read timeout", "", timeout, timeout * 5 / 4, "request body stalled"},
		{"grpc-timeout", "1S", time.Second, time.Second, "context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				gs := newReadGuards(timeout)
				defer close(gs.stop)
				pr, pw := io.Pipe()
				defer pw.Close()
				r := httptest.NewRequest("POST", traceExport, pr)
				r.Header.Set("Content-Type", "application/grpc")
				if tc.grpcTimeout != "" {
					r.Header.Set("Grpc-Timeout", tc.grpcTimeout)
				}
				call, st := grpcwire.StartCall(&expiringWriter{ResponseWriter: httptest.NewRecorder(), body: pw}, r, grpcwire.Limits{})
				if st != nil {
					t.Fatal(st)
				}
				defer call.Close()
				call.SetMessageReadTimeout(timeout)
				start := time.Now()
				g := gs.get(call, nil)
				call.WatchReadTimeout()
				g.begin()
				go pw.Write([]byte{0})
				_, _, st = call.ReadUnary(nil, nil)
				took := time.Since(start)
				gs.put(g)
				if st == nil || st.Code != grpcwire.DeadlineExceeded || !strings.Contains(st.Message, tc.says) {
					t.Fatalf("status %v, want DEADLINE_EXCEEDED saying %q", st, tc.says)
				}
				if took < tc.min || took > tc.max {
					t.Fatalf("answered after %v, want %v to %v", took, tc.min, tc.max)
				}
			})
		})
	}
}

// returnedWriter counts the read deadlines set after its handler
// returned, which net/http's HTTP/2 ResponseWriter answers with a nil
// pointer panic on the goroutine that sets them.
type returnedWriter struct {
	http.ResponseWriter
	returned atomic.Bool
	late     atomic.Int32
}

func (w *returnedWriter) SetReadDeadline(time.Time) error {
	if w.returned.Load() {
		w.late.Add(1)
	}
	return nil
}

// panicBody is a request body whose read panics, as a decompressor bug
// on a hostile message would.
type panicBody struct{}

func (panicBody) Read([]byte) (int, error) { panic("decompressor bug") }
func (panicBody) Close() error             { return nil }

// TestUnaryReadGuardAfterPanic: a panic while a unary request is read is
// that request's alone (net/http recovers it and resets the stream): its
// read guard, still armed, must not then set a read deadline on the
// stream whose handler has returned, which would panic on the watchdog's
// goroutine and end the process.
func TestUnaryReadGuardAfterPanic(t *testing.T) {
	const timeout = 4 * time.Second
	h := New(Config{Sink: &memSink{}, Logger: quietLogger(), BodyReadTimeout: timeout})
	synctest.Test(t, func(t *testing.T) {
		h.readGuards = newReadGuards(timeout) // its watchdog in the bubble
		defer close(h.readGuards.stop)
		r := httptest.NewRequest("POST", traceExport, nil)
		r.Body = panicBody{}
		r.ProtoMajor, r.ProtoMinor = 2, 0
		r.Header.Set("Content-Type", "application/grpc")
		w := &returnedWriter{ResponseWriter: httptest.NewRecorder()}
		func() {
			defer func() {
				if p := recover(); p == nil {
					t.Error("the body's panic did not reach net/http")
				}
			}()
			h.ServeHTTP(w, r)
		}()
		w.returned.Store(true)
		time.Sleep(2 * timeout)
		synctest.Wait()
		if n := w.late.Load(); n > 0 {
			t.Fatalf("the read guard set the stream's read deadline %d times after its handler returned", n)
		}
	})
}
