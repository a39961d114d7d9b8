package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// TestLatencyHistogram: each percentile read from the histogram is the
// exact one or at most 1/16 above it, over nine decades of durations; the
// maximum is exact.
func TestLatencyHistogram(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h latencyHistogram
	var all []time.Duration
	for range 20000 {
		// Log-uniform from 1µs to ~17 minutes.
		d := time.Duration(float64(time.Microsecond) * float64(uint64(1)<<r.IntN(30)) * (1 + r.Float64()))
		all = append(all, d)
		h.record(d)
	}
	slices.Sort(all)
	for _, q := range []float64{0, .5, .9, .99, .999, 1} {
		rank := max(int(q*float64(len(all))+0.999999), 1)
		exact := all[rank-1]
		got := h.quantile(q)
		if got < exact.Truncate(time.Microsecond) || float64(got) > float64(exact)*(1+1.0/16)+float64(time.Microsecond) {
			t.Errorf("quantile %v: %v, exact %v", q, got, exact)
		}
	}
	if got := time.Duration(h.max.Load()); got != all[len(all)-1] {
		t.Errorf("max %v, want %v", got, all[len(all)-1])
	}
	if h.quantile(.5) == 0 || (&latencyHistogram{}).quantile(.5) != 0 {
		t.Error("an empty histogram has no percentiles, a full one does")
	}
	if n := testing.AllocsPerRun(100, func() { h.record(time.Millisecond) }); n != 0 {
		t.Errorf("record allocates %v times", n)
	}
	// Past the last bucket: counted in it, the maximum still exact.
	h.record(1000 * time.Hour)
	if got := h.quantile(1); got != 1000*time.Hour {
		t.Errorf("quantile 1 after 1000h: %v", got)
	}
}

// TestRefusalReasons: each kind of failure is named by what refused it.
func TestRefusalReasons(t *testing.T) {
	for _, tc := range []struct {
		err          error
		reason, last string
	}{
		{&grpcwire.Status{Code: grpcwire.Unavailable, Message: "storage is busy"}, "gRPC UNAVAILABLE", "storage is busy"},
		{fmt.Errorf("send: %w", &grpcwire.Status{Code: grpcwire.InvalidArgument, Message: "bad span"}), "gRPC INVALID_ARGUMENT", "bad span"},
		{&otlpclient.AttemptError{Err: &otlpclient.HTTPError{StatusCode: 429, Status: "429 Too Many Requests"}, Retryable: true}, "HTTP 429", "429 Too Many Requests"},
		{&otlpclient.HTTPError{StatusCode: 400, Status: "400 Bad Request", Message: "cannot decode"}, "HTTP 400", "cannot decode"},
		{&otlpclient.RequestError{ID: 3, Message: "FAILED_NONE_RETRYABLE: no spans"}, "stream FAILED_NONE_RETRYABLE", "no spans"},
		{&otlpclient.RequestError{ID: 3, Message: "stream ended: x", Stream: &grpcwire.Status{Code: grpcwire.Unauthenticated, Message: "no token"}}, "gRPC UNAUTHENTICATED", "no token"},
		{&otlpclient.RequestError{ID: 3, Message: "9 bytes (9 on the wire) is too large for the server: x"}, "stream: request too large for the receiver", "9 bytes (9 on the wire) is too large for the server: x"},
		{fmt.Errorf("%w: deadline (last error: x)", otlpclient.ErrDropped), "dropped: not acknowledged within the request timeout", ""},
		{errors.New("connection reset"), "transport", "connection reset"},
	} {
		reason, last := refusalReason(tc.err)
		if reason != tc.reason || tc.last != "" && last != tc.last {
			t.Errorf("%v: reason %q, last %q; want %q, %q", tc.err, reason, last, tc.reason, tc.last)
		}
	}
	var rec clientRecorder
	rec.refusal(&grpcwire.Status{Code: grpcwire.Unavailable, Message: "first"})
	rec.refusal(&grpcwire.Status{Code: grpcwire.Unavailable, Message: "second\nline"})
	rec.refusal(errors.Join(errors.New("x"), otlpclient.ErrClosed)) // an interruption, not a refusal
	s := rec.summary(clientSummary{}, time.Second)
	if len(s.Refusals) != 1 || s.Refusals[0] != (refusal{Reason: "gRPC UNAVAILABLE", Count: 2, Last: "second line"}) {
		t.Fatalf("refusals %+v, want UNAVAILABLE twice, the last message on one line", s.Refusals)
	}
}

// TestClientFlagsHeaders: -header and -token-file reach the receiver on
// every request, the request the caller built is left as it was, and the
// announcement says what is sent without showing the token.
func TestClientFlagsHeaders(t *testing.T) {
	got := make(chan http.Header, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }))
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("\n# for the load test\n  s3cret-token  \nsecond\n"), 0o600)

	var c clientFlags
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	c.register(fs, false, "none", "gzip")
	if err := fs.Parse([]string{"-header", "x-scope-orgid: team-a", "-header", "X-Extra:1", "-header", "x-extra:2", "-token-file", tokenFile}); err != nil {
		t.Fatal(err)
	}
	if err := c.check(fs, srv.Listener.Addr().String()); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	resp, err := c.wrap(srv.Client()).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := <-got
	if h.Get("Authorization") != "Bearer s3cret-token" || h.Get("X-Scope-Orgid") != "team-a" || !slices.Equal(h.Values("X-Extra"), []string{"1", "2"}) {
		t.Fatalf("the receiver got headers %v", h)
	}
	if len(req.Header) != 0 {
		t.Fatalf("the caller's request was changed: %v", req.Header)
	}
	if d := c.describe(); d != "h2c, bearer token in clear text, 3 extra header(s), compression none" || strings.Contains(d, "s3cret") {
		t.Fatalf("describe: %q", d)
	}
}
