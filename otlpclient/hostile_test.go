package otlpclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/internal/hostiledest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// pipeClient is an HTTP client of the hostile destination dial reaches,
// speaking h2c, or HTTP/1.1 when h1 is set. It fails every request after
// the thousandth: a flood of attempts keeps a synctest bubble busy, its
// fake clock stopped, so it must end by count, not by time.
//
// The clients are the ones the exporters build (NewHTTPClientDial for
// h2c, NewHTTP1Client), with their bounds.
func pipeClient(dial DialFunc, h1 bool) *http.Client {
	c := NewHTTPClientDial(nil, dial)
	if h1 {
		c = NewHTTP1Client(nil, dial)
	}
	c.Transport = &floodStop{base: c.Transport}
	return c
}

type floodStop struct {
	base http.RoundTripper
	n    atomic.Int64
}

var errFlood = errors.New("more than 1000 attempts: a flood")

func (f *floodStop) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.n.Add(1) > 1000 {
		return nil, &AttemptError{Err: errFlood}
	}
	return f.base.RoundTrip(r)
}

// unaryPaths are the client paths that retry one request: OTLP/gRPC and
// OTLP/HTTP (over HTTP/1.1 and h2c), each as a function exporting req.
func unaryPaths(dial DialFunc, b Backoff) map[string]func(context.Context, []byte) (otlp.PartialSuccess, error) {
	cfg := Config{Endpoint: "pipe:1", RequestTimeout: -1, AttemptTimeout: 5 * time.Second, Backoff: b}
	grpc := cfg
	grpc.HTTP = pipeClient(dial, false)
	u := NewUnaryExporter(grpc)
	h2 := cfg
	h2.HTTP = pipeClient(dial, false)
	hx2 := NewHTTPExporter(HTTPConfig{Config: h2, URL: "http://pipe:1/v1/traces"})
	h1 := cfg
	h1.HTTP = pipeClient(dial, true)
	hx1 := NewHTTPExporter(HTTPConfig{Config: h1, URL: "http://pipe:1/v1/traces"})
	return map[string]func(context.Context, []byte) (otlp.PartialSuccess, error){
		"grpc": u.ExportResult, "http2": hx2.ExportResult, "http1": hx1.ExportResult,
	}
}

// TestHostileRetryDelaysAreBounded: a destination that asks for a wait
// ending in the year 9999 (an HTTP-date Retry-After, a RetryInfo of
// 9223372036 s) or of three hours is retried no more often than every
// otlp.MaxServerDelay (no overflow into a flood) and no less often (not
// silenced for hours): over ten minutes of fake time, between 8 and 11
// attempts, and the request is delivered once the destination is honest.
// Before the clamp the year-9999 delay overflowed into ~10,000 attempts a
// second, and the three hours silenced it for three hours.
func TestHostileRetryDelaysAreBounded(t *testing.T) {
	for _, fault := range []hostiledest.Fault{hostiledest.LieDelayDate, hostiledest.LieDelayHours} {
		for _, path := range []string{"grpc", "http2", "http1"} {
			t.Run(fault.String()+"/"+path, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					srv, dial := hostiledest.ListenPipe()
					defer srv.Close()
					srv.SetFault(fault)
					export := unaryPaths(dial, Backoff{Initial: 100 * time.Millisecond, Max: time.Second})[path]
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					var (
						ps  otlp.PartialSuccess
						err error
					)
					done := make(chan struct{})
					go func() {
						defer close(done)
						ps, err = export(ctx, testRequest(1, 1))
					}()
					// Ten minutes, watched every second so that a flood
					// is stopped before it runs away.
					for range 600 {
						time.Sleep(time.Second)
						if srv.Attempts() > 1000 {
							break
						}
					}
					attempts := srv.Attempts()
					srv.SetFault(hostiledest.Honest)
					if attempts < 8 || attempts > 11 {
						cancel()
						<-done
						t.Fatalf("%d attempts in 10 minutes against %v, want 8 to 11 (one per %v, jittered)", attempts, fault, otlp.MaxServerDelay)
					}
					<-done
					if errors.Is(err, errFlood) {
						t.Fatalf("a flood against %v: %v", fault, err)
					}
					if err != nil || ps.Rejected != 0 {
						t.Fatalf("once honest: %+v, %v", ps, err)
					}
					if n := len(srv.Accepted()); n != 1 {
						t.Fatalf("the destination stored %d requests, want 1", n)
					}
				})
			})
		}
	}
}

// TestBackoffDelayNeverOverflows: whatever the server asks and whatever the
// configuration, the wait is positive and within its documented bound.
func TestBackoffDelayNeverOverflows(t *testing.T) {
	for _, b := range []Backoff{{}, {Initial: time.Hour, Max: 1<<63 - 1}, {Max: 1<<63 - 1, Jitter: 1e300}, {Jitter: -1}} {
		for _, server := range []time.Duration{0, -1, -1 << 63, time.Hour, 1<<63 - 1, 9223372036 * time.Second} {
			for _, attempt := range []int{1, 2, 62, 63, 64, 1 << 30} {
				d := b.Delay(attempt, server)
				if d <= 0 {
					t.Fatalf("%+v.Delay(%d, %v) = %v: not positive", b, attempt, server, d)
				}
				if b.Max == 0 && d > time.Duration(float64(otlp.MaxServerDelay)*1.2)+1 {
					t.Fatalf("%+v.Delay(%d, %v) = %v: over %v plus jitter", b, attempt, server, d, otlp.MaxServerDelay)
				}
			}
		}
	}
}

// TestParseRetryAfterHostile: Retry-After values that overflow a
// time.Duration are cut to otlp.MaxServerDelay.
func TestParseRetryAfterHostile(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	for _, v := range []string{"Fri, 31 Dec 9999 23:59:59 GMT", "9223372036", "99999999999999999999999", "10800"} {
		if got := ParseRetryAfter(v, now); got != otlp.MaxServerDelay {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", v, got, otlp.MaxServerDelay)
		}
	}
}

// TestHostileAnswersAreNotDeliveries: against each way a destination can
// answer badly, the unary paths (OTLP/gRPC, OTLP/HTTP over h2c and
// HTTP/1.1) never report a delivery that did not happen (a garbage or huge
// success body, a partial success rejecting -5 items, a reset or a stall
// are failures, retried), retry at most about once per Backoff.Max (no
// flood), refuse to follow a redirect (the URL needs fixing), cut an
// endless partial-success message, and deliver once the destination is
// honest: nothing acknowledged is lost.
func TestHostileAnswersAreNotDeliveries(t *testing.T) {
	for _, fault := range hostiledest.Faults() {
		for _, path := range []string{"grpc", "http2", "http1"} {
			t.Run(fault.String()+"/"+path, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					srv, dial := hostiledest.ListenPipe()
					defer srv.Close()
					srv.SetFault(fault)
					export := unaryPaths(dial, Backoff{Initial: 100 * time.Millisecond, Max: time.Second})[path]
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					type result struct {
						ps  otlp.PartialSuccess
						err error
					}
					res := make(chan result, 1)
					go func() {
						ps, err := export(ctx, testRequest(1, 1))
						res <- result{ps, err}
					}()
					var early *result
				watch:
					for range 20 {
						select {
						case r := <-res:
							early = &r
							break watch
						case <-time.After(time.Second):
						}
					}
					attempts := srv.Attempts()
					if attempts > 30 {
						t.Fatalf("%d attempts in 20 seconds: a flood (want about one a second)", attempts)
					}
					switch fault {
					case hostiledest.Redirect:
						if early == nil || !RefusesClient(early.err) {
							t.Fatalf("a redirect: %+v, want a refusal of the client (the URL is wrong)", early)
						}
						return
					case hostiledest.EndlessPartial:
						if early == nil || early.err != nil || early.ps.Rejected != 1 || len(early.ps.Message) > maxPartialMessage+32 {
							t.Fatalf("an endless partial success: %+v", early)
						}
						return
					}
					if early != nil {
						t.Fatalf("against %v the export ended: %+v %v; want it retried until the destination is honest", fault, early.ps, early.err)
					}
					srv.SetFault(hostiledest.Honest)
					select {
					case r := <-res:
						if r.err != nil || r.ps.Rejected != 0 {
							t.Fatalf("once honest: %+v, %v", r.ps, r.err)
						}
					case <-time.After(10 * time.Minute):
						t.Fatalf("not delivered within 10 minutes of the destination turning honest (%d attempts)", srv.Attempts())
					}
					// HugeHeaders stores each attempt before its refused
					// answer: at least once, duplicates allowed.
					if n := len(srv.Accepted()); n != 1 && (fault != hostiledest.HugeHeaders || n == 0) {
						t.Fatalf("the destination stored %d requests, want 1", n)
					}
				})
			})
		}
	}
}

// TestHostileStream: the stream mode against each fault. A stream that
// stalls (before or after its headers) is ended after AttemptTimeout and
// replaced, LastError saying so; a stream ended at once ("reconnect now")
// or answered with garbage is backed off, not reopened in a loop; the
// requests are delivered, each at least once, once the destination is
// honest.
func TestHostileStream(t *testing.T) {
	for _, fault := range hostiledest.Faults() {
		t.Run(fault.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, dial := hostiledest.ListenPipe()
				defer srv.Close()
				srv.SetFault(fault)
				var retries atomic.Int64
				e := NewStreamExporter(StreamConfig{
					Config: Config{
						Endpoint: "pipe:1", HTTP: pipeClient(dial, false), RequestTimeout: -1,
						AttemptTimeout: 5 * time.Second, Backoff: Backoff{Initial: 100 * time.Millisecond, Max: time.Second},
						OnRetry: func(error, time.Duration) { retries.Add(1) },
					},
					MaxPending: 8, ReportPartial: true,
				})
				defer func() {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					e.Close(ctx)
				}()
				const n = 3
				outcomes := make(chan error, n)
				for i := range n {
					if err := e.Send(context.Background(), testRequest(uint64(i+1), 1), func(err error) { outcomes <- err }); err != nil {
						t.Fatal(err)
					}
				}
				var early []error
				for range 20 {
					time.Sleep(time.Second)
				}
				for len(outcomes) > 0 {
					early = append(early, <-outcomes)
				}
				attempts, streams := srv.Attempts(), srv.Streams()
				if streams > 30 || attempts > 30*(n+1) {
					t.Fatalf("%d streams, %d attempts in 20 seconds: a flood (want about one stream a second)", streams, attempts)
				}
				switch fault {
				case hostiledest.Redirect:
					if len(early) != n || !RefusesClient(early[0]) {
						t.Fatalf("a redirect: %v, want refusals of the client", early)
					}
					return
				case hostiledest.EndlessPartial:
					for _, err := range early {
						pe, ok := err.(*PartialError)
						if !ok || len(pe.Message) > maxPartialMessage+32 {
							t.Fatalf("an endless partial success: %v", err)
						}
					}
					if len(early) != n {
						t.Fatalf("%d outcomes, want %d", len(early), n)
					}
					return
				case hostiledest.HugeHeaders:
					// Refused by the client's header bound: a failure.
				case hostiledest.StallBeforeHeaders, hostiledest.StallAfterHeaders:
					if streams < 2 {
						t.Fatalf("a stalled stream was never replaced (%d streams)", streams)
					}
					if e.LastError() == nil || retries.Load() == 0 {
						t.Fatalf("a stalled stream: LastError %v, %d retries; want the stall said", e.LastError(), retries.Load())
					}
				}
				if len(early) != 0 {
					t.Fatalf("against %v, outcomes before the destination was honest: %v", fault, early)
				}
				srv.SetFault(hostiledest.Honest)
				for i := range n {
					select {
					case err := <-outcomes:
						if err != nil {
							t.Fatalf("once honest: %v", err)
						}
					case <-time.After(10 * time.Minute):
						t.Fatalf("%d of %d delivered 10 minutes after the destination turned honest (%d streams)", i, n, srv.Streams())
					}
				}
				if got := len(srv.Accepted()); got < n {
					t.Fatalf("the destination stored %d requests, want %d", got, n)
				}
			})
		})
	}
}

// TestParseHTTPSuccess: what an OTLP/HTTP 200 may carry. A body is read as
// its Content-Type says (or as the request was encoded, without one); a
// proxy's page, garbage, or a negative partial success is not a delivery.
func TestParseHTTPSuccess(t *testing.T) {
	_, respType, _ := otlpjson.ForSignal(Traces)
	partial := []byte{0x0a, 0x05, 0x08, 0x03, 0x12, 0x01, 'x'} // rejected 3, "x"
	for _, c := range []struct {
		body    string
		ct      string
		jsonReq bool
		ok      bool
	}{
		{"", "text/html", false, true},
		{string(partial), "application/x-protobuf", false, true},
		{string(partial), "", false, true},
		{`{"partialSuccess":{"rejectedSpans":"3","errorMessage":"x"}}`, "application/json", false, true},
		{`{"partialSuccess":{"rejectedSpans":"3","errorMessage":"x"}}`, "", true, true},
		{"<html>hello</html>", "text/html", false, false},
		{"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "application/x-protobuf", false, false},
		{"not json", "application/json", true, false},
		{"\x0a\x0b\x08\xfb\xff\xff\xff\xff\xff\xff\xff\xff\x01", "application/x-protobuf", false, false}, // rejected -5
	} {
		ps, err := parseHTTPSuccess([]byte(c.body), c.ct, c.jsonReq, respType)
		if (err == nil) != c.ok {
			t.Errorf("%q as %q: %+v, %v; want ok=%v", c.body, c.ct, ps, err, c.ok)
		}
		if err == nil && c.body != "" && (ps.Rejected != 3 || ps.Message != "x") {
			t.Errorf("%q as %q: %+v", c.body, c.ct, ps)
		}
	}
}

// TestRedirectNotFollowed: a destination that redirects elsewhere gets a
// refusal of the client (the URL needs fixing), and the request, with the
// credentials WithHeader adds, never reaches the redirect's target.
func TestRedirectNotFollowed(t *testing.T) {
	var leaked atomic.Int64
	target := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
	}))
	redirector := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+target+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	header := http.Header{"Authorization": {"Bearer secret"}}
	cfg := Config{Endpoint: redirector, RequestTimeout: 5 * time.Second, Backoff: Backoff{Initial: time.Millisecond}}
	cfg.HTTP = WithHeader(NewHTTPClient(nil, 0, 0), header)
	_, err := NewUnaryExporter(cfg).ExportResult(context.Background(), testRequest(1, 1))
	if !RefusesClient(err) {
		t.Fatalf("gRPC to a redirect: %v, want a refusal of the client", err)
	}
	// OTLP/HTTP over HTTP/1.1.
	target1 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { leaked.Add(1) }))
	defer target1.Close()
	redirector1 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target1.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector1.Close()
	hcfg := cfg
	hcfg.HTTP = WithHeader(NewHTTP1Client(nil, nil), header)
	_, err = NewHTTPExporter(HTTPConfig{Config: hcfg, URL: redirector1.URL + "/v1/traces"}).ExportResult(context.Background(), testRequest(1, 1))
	if !RefusesClient(err) {
		t.Fatalf("HTTP to a redirect: %v, want a refusal of the client", err)
	}
	if n := leaked.Load(); n != 0 {
		t.Fatalf("the redirect's target got %d requests", n)
	}
}
