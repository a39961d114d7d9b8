package otlpclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// TestUnaryExportResult: the first call is answered UNAVAILABLE, the
// second with a partial success; ExportResult returns the partial success,
// OnRetry saw the failure, and Export's counters agree.
func TestUnaryExportResult(t *testing.T) {
	var calls atomic.Int32
	addr := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/grpc")
		if calls.Add(1) == 1 {
			w.Header().Set("Grpc-Status", "14")
			w.Header().Set("Grpc-Message", "busy")
			w.WriteHeader(http.StatusOK)
			return
		}
		// ExportTraceServiceResponse{partial_success: {rejected_spans: 3, error_message: "x"}}
		msg := []byte{0x0a, 0x05, 0x08, 0x03, 0x12, 0x01, 'x'}
		w.Header().Set("Trailer", "Grpc-Status")
		w.WriteHeader(http.StatusOK)
		w.Write(append([]byte{0, 0, 0, 0, byte(len(msg))}, msg...))
		w.Header().Set("Grpc-Status", "0")
	}))
	var retries []error
	u := NewUnaryExporter(Config{
		Endpoint: addr,
		Backoff:  Backoff{Initial: time.Millisecond},
		OnRetry:  func(err error, _ time.Duration) { retries = append(retries, err) },
	})
	ps, err := u.ExportResult(context.Background(), testRequest(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if ps.Rejected != 3 || ps.Message != "x" {
		t.Fatalf("partial success %+v", ps)
	}
	if len(retries) != 1 {
		t.Fatalf("OnRetry saw %v, want one UNAVAILABLE", retries)
	}
	if st, ok := errors.AsType[*grpcwire.Status](retries[0]); !ok || st.Code != grpcwire.Unavailable {
		t.Fatalf("OnRetry saw %v, want UNAVAILABLE", retries[0])
	}
	if s := u.Stats(); s.Acknowledged != 1 || s.Retried != 1 || s.Sent != 2 || s.Rejected != 3 {
		t.Fatalf("stats %+v", s)
	}
}

// TestRetryHonoursDelayAndReportsRetries: an attempt's AttemptError asks
// for a delay above the back-off; Retry waits at least that long and tells
// OnRetry so before each wait.
func TestRetryHonoursDelayAndReportsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var delays []time.Duration
		cfg := Config{
			Backoff: Backoff{Initial: time.Millisecond},
			OnRetry: func(err error, d time.Duration) { delays = append(delays, d) },
		}
		start := time.Now()
		var times []time.Duration
		ps, err := cfg.Retry(t.Context(), func(ctx context.Context) (otlp.PartialSuccess, error) {
			times = append(times, time.Since(start))
			if len(times) < 3 {
				return otlp.PartialSuccess{}, &AttemptError{Err: errors.New("503"), Retryable: true, Delay: 3 * time.Second}
			}
			return otlp.PartialSuccess{Rejected: 2}, nil
		})
		if err != nil || ps.Rejected != 2 {
			t.Fatalf("Retry = %+v, %v", ps, err)
		}
		if len(delays) != 2 || delays[0] < 3*time.Second || delays[1] < 3*time.Second {
			t.Fatalf("OnRetry delays %v, want two of at least 3s", delays)
		}
		if times[1]-times[0] != delays[0] || times[2]-times[1] != delays[1] {
			t.Fatalf("attempts at %v, delays %v", times, delays)
		}
	})
}

// TestRetryPermanent: a non-retryable failure ends Retry at once, with the
// attempt's error, and OnRetry is not called.
func TestRetryPermanent(t *testing.T) {
	for _, fail := range []error{
		&AttemptError{Err: errors.New("HTTP 400")},
		grpcwire.Errorf(grpcwire.InvalidArgument, "bad"),
	} {
		var n, retries int
		cfg := Config{OnRetry: func(error, time.Duration) { retries++ }}
		_, err := cfg.Retry(context.Background(), func(ctx context.Context) (otlp.PartialSuccess, error) {
			n++
			return otlp.PartialSuccess{}, fail
		})
		if err != fail || n != 1 || retries != 0 {
			t.Fatalf("Retry = %v after %d attempts and %d retries, want %v after one", err, n, retries, fail)
		}
	}
}

// TestRetryAttemptTimeout: each attempt's context ends AttemptTimeout after
// it started; an attempt that runs out is retried.
func TestRetryAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{AttemptTimeout: 2 * time.Second, Backoff: Backoff{Initial: time.Second, Jitter: -1}}
		n := 0
		_, err := cfg.Retry(t.Context(), func(ctx context.Context) (otlp.PartialSuccess, error) {
			n++
			dl, ok := ctx.Deadline()
			if !ok || time.Until(dl) != 2*time.Second {
				t.Errorf("attempt %d: deadline %v (%v), want in 2s", n, dl, ok)
			}
			if n < 3 {
				start := time.Now()
				<-ctx.Done()
				if d := time.Since(start); d != 2*time.Second {
					t.Errorf("attempt %d ended after %v, want 2s", n, d)
				}
				return otlp.PartialSuccess{}, ctx.Err()
			}
			return otlp.PartialSuccess{}, nil
		})
		if err != nil || n != 3 {
			t.Fatalf("Retry = %v after %d attempts", err, n)
		}
	})
}

// TestRetryRequestTimeout: by default a request is dropped 30s after it
// started; with a negative RequestTimeout it is retried until ctx ends.
func TestRetryRequestTimeout(t *testing.T) {
	down := func(ctx context.Context) (otlp.PartialSuccess, error) {
		return otlp.PartialSuccess{}, errors.New("connection refused")
	}
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{}
		start := time.Now()
		_, err := cfg.Retry(t.Context(), down)
		if !errors.Is(err, ErrDropped) || time.Since(start) != 30*time.Second {
			t.Fatalf("Retry = %v after %v, want ErrDropped after 30s", err, time.Since(start))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		retries := 0
		cfg := Config{RequestTimeout: -1, Backoff: Backoff{Max: time.Second}, OnRetry: func(error, time.Duration) { retries++ }}
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		start := time.Now()
		_, err := cfg.Retry(ctx, down)
		if !errors.Is(err, ErrDropped) || time.Since(start) != time.Hour {
			t.Fatalf("Retry = %v after %v, want ErrDropped after the context's hour", err, time.Since(start))
		}
		if retries < 3000 {
			t.Fatalf("%d retries in an hour at most 1.2s apart", retries)
		}
	})
}

// An attempt that the request's deadline cuts short fails with the
// deadline; the error reported is still the earlier attempts' reason.
func TestRetryDroppedKeepsTheCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := 0
		flaky := func(ctx context.Context) (otlp.PartialSuccess, error) {
			if n++; n == 1 {
				return otlp.PartialSuccess{}, errors.New("dial tcp: connection refused")
			}
			<-ctx.Done() // the second attempt hangs until the deadline
			return otlp.PartialSuccess{}, ctx.Err()
		}
		cfg := Config{RequestTimeout: 10 * time.Second}
		_, err := cfg.Retry(t.Context(), flaky)
		if !errors.Is(err, ErrDropped) || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("Retry = %v, want ErrDropped naming the connection refused", err)
		}
	})
}
