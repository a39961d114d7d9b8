package otlpclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// TestParseRetryAfter: both forms RFC 9110 allows, and what is ignored.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"soon", 0},
		{now.Add(50 * time.Second).Format(http.TimeFormat), 50 * time.Second},
		{now.Add(90 * time.Second).Format(http.TimeFormat), otlp.MaxServerDelay},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"Friday, 02-Jan-26 15:04:35 GMT", 30 * time.Second}, // RFC 850, obsolete but allowed
	} {
		if got := ParseRetryAfter(c.in, now); got != c.want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestHTTPExporterRetryAfterDate: a 503 with an HTTP-date Retry-After is
// retried no sooner than the date asks (as OnRetry's delay shows), then a
// JSON partial success is read; headers and the content type are sent.
func TestHTTPExporterRetryAfterDate(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Header.Get("X-Scope-OrgID") != "team-a" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", time.Now().Add(3*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"partialSuccess":{"rejectedSpans":"2","errorMessage":"bad span"}}`)
	}))
	defer srv.Close()
	var delays []time.Duration
	h := NewHTTPExporter(HTTPConfig{
		Config: Config{
			Signal:  otlp.Traces,
			Backoff: Backoff{Initial: time.Millisecond, Jitter: -1},
		},
		URL:    srv.URL + "/v1/traces",
		JSON:   true,
		Header: http.Header{"X-Scope-Orgid": {"team-a"}},
	})
	// The test does not wait out the delay: it stops the retry loop when
	// it sees it, then asks again.
	ctx, cancel := context.WithCancel(context.Background())
	h.cfg.OnRetry = func(_ error, d time.Duration) { delays = append(delays, d); cancel() }
	if _, err := h.ExportResult(ctx, testRequest(1, 3)); !errors.Is(err, ErrDropped) {
		t.Fatalf("first export: %v, want dropped after the 503", err)
	}
	if len(delays) != 1 || delays[0] < time.Second || delays[0] > 4*time.Second {
		t.Fatalf("retry delays %v, want about 3s from the HTTP-date", delays)
	}
	ps, err := h.ExportResult(context.Background(), testRequest(2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if ps.Rejected != 2 || ps.Message != "bad span" {
		t.Fatalf("partial success %+v", ps)
	}
}

// TestHTTPExporterRefusals: a 400 is a refusal of the data, a 401 of the
// client; neither is retried.
func TestHTTPExporterRefusals(t *testing.T) {
	status := http.StatusBadRequest
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	h := NewHTTPExporter(HTTPConfig{Config: Config{Signal: otlp.Traces}, URL: srv.URL + "/v1/traces"})
	_, err := h.ExportResult(context.Background(), testRequest(1, 1))
	if he, ok := errors.AsType[*HTTPError](err); !ok || he.StatusCode != 400 || RefusesClient(err) {
		t.Fatalf("400: %v", err)
	}
	status = http.StatusUnauthorized
	_, err = h.ExportResult(context.Background(), testRequest(1, 1))
	if !RefusesClient(err) {
		t.Fatalf("401: %v, want a refusal of the client", err)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d calls, want 2 (no retries)", n)
	}
}
