package otlpclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/internal/hostiledest"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// pipeClient is an HTTP client of the hostile destination dial reaches,
// speaking h2c, or HTTP/1.1 when h1 is set. It fails every request after
// the thousandth: a flood of attempts keeps a synctest bubble busy, its
// fake clock stopped, so it must end by count, not by time.
func pipeClient(dial func(ctx context.Context, network, addr string) (net.Conn, error), h1 bool) *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols), DialContext: dial}
	if h1 {
		tr.Protocols.SetHTTP1(true)
	} else {
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	return &http.Client{Transport: &floodStop{base: tr}}
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
func unaryPaths(dial func(ctx context.Context, network, addr string) (net.Conn, error), b Backoff) map[string]func(context.Context, []byte) (otlp.PartialSuccess, error) {
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
