package otlpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// UnaryExporter sends each request as one standard OTLP/gRPC Export call
// (TraceService, MetricsService or LogsService), so it works against any
// OTLP receiver. It is safe for concurrent use: concurrent Export calls are
// multiplexed as HTTP/2 streams on one connection.
type UnaryExporter struct {
	cfg    Config
	client *grpcwire.Client
	keyed  *grpcwire.Client // client sending each context's idempotency key
	auto   *autoKeys        // with Config.IdempotencyKeys; nil otherwise
	method string
	c      counters
}

// NewUnaryExporter returns an exporter for cfg. It does not connect until
// the first Export.
func NewUnaryExporter(cfg Config) *UnaryExporter {
	hc := cfg.httpClient()
	client := &grpcwire.Client{HTTP: hc, BaseURL: cfg.baseURL(), Encoding: cfg.Compression}
	keyed := *client
	keyed.HTTP = wrapTransport(hc, func(base http.RoundTripper) http.RoundTripper { return keyTransport{base: base} })
	u := &UnaryExporter{cfg: cfg, client: client, keyed: &keyed, method: signalInfo(cfg.Signal).GRPCPath}
	if cfg.IdempotencyKeys {
		u.auto = newAutoKeys()
	}
	return u
}

// ErrDropped is returned for a request given up before it was
// acknowledged: its timeout passed, or the exporter was closed.
var ErrDropped = errors.New("request dropped before it was acknowledged")

// Export sends req, a serialized Export{Trace,Metrics,Logs,Profiles}ServiceRequest,
// and waits for the outcome. Following OTLP v1.11 "Failures", it retries
// retryable statuses and transport errors: after the server's RetryInfo
// delay when it sent one (UNAVAILABLE, RESOURCE_EXHAUSTED), with exponential
// back-off and jitter otherwise, until Config.RequestTimeout or ctx ends.
// Then it returns an error wrapping ErrDropped.
//
// It returns nil when the server accepted the request, including a partial
// success (the rejected items are added to Stats().Rejected), and the
// *grpcwire.Status for a non-retryable refusal.
func (u *UnaryExporter) Export(ctx context.Context, req []byte) error {
	_, err := u.ExportResult(ctx, req)
	return err
}

// ExportResult is Export that also returns the partial success of the
// server's response: what it rejected of a request it accepted (zero when
// it took everything, or when err is not nil).
//
// The export carries the idempotency key of ctx (WithIdempotencyKey), or a
// random one with Config.IdempotencyKeys, the same on every attempt.
func (u *UnaryExporter) ExportResult(ctx context.Context, req []byte) (otlp.PartialSuccess, error) {
	client := u.client
	key, err := exportKey(ctx, u.auto)
	if err != nil {
		u.c.failed.Add(1)
		return otlp.PartialSuccess{}, err
	}
	if key != "" {
		ctx, client = WithIdempotencyKey(ctx, key), u.keyed
	}
	return u.cfg.retry(ctx, &u.c, func(ctx context.Context) (otlp.PartialSuccess, error) {
		resp, err := client.Invoke(ctx, u.method, req)
		if err != nil {
			return otlp.PartialSuccess{}, err
		}
		ps, err := parseResponse(resp)
		if err != nil {
			// OK with a body that is no Export*ServiceResponse: not a
			// delivery; retried.
			return otlp.PartialSuccess{}, &AttemptError{Err: fmt.Errorf("gRPC OK but %w", err), Retryable: true}
		}
		return ps, nil
	})
}

// Stats returns the exporter's counters.
func (u *UnaryExporter) Stats() Stats { return u.c.snapshot() }

// AttemptError is an attempt's failure (see Config.Retry) that says itself
// whether it is worth retrying, for failures the loop cannot classify: it
// takes a *grpcwire.Status by its code (otlp.Retryable) and any other error
// for a transport failure, which it retries.
type AttemptError struct {
	Err error
	// Retryable is whether another attempt may succeed.
	Retryable bool
	// Delay is the least wait the server asked for before the next
	// attempt (an HTTP Retry-After), zero if none.
	Delay time.Duration
}

func (e *AttemptError) Error() string { return e.Err.Error() }
func (e *AttemptError) Unwrap() error { return e.Err }

// Retry is the retry loop of UnaryExporter for requests sent some other way
// (OTLP/HTTP, say): it calls attempt until attempt succeeds, returns a
// failure that is not retryable, or c.RequestTimeout or ctx ends, and
// returns what the last attempt returned, or an error wrapping ErrDropped if
// it gave up. Each attempt gets a context bounded by c.AttemptTimeout, and
// retries wait as c.Backoff says, at least the server's delay: a
// *grpcwire.Status's RetryInfo or an *AttemptError's Delay. c.OnRetry, if
// set, is called before each wait.
func (c *Config) Retry(ctx context.Context, attempt func(ctx context.Context) (otlp.PartialSuccess, error)) (otlp.PartialSuccess, error) {
	return c.retry(ctx, nil, attempt)
}

// retry is Retry, counting in cnt if it is not nil.
func (c *Config) retry(ctx context.Context, cnt *counters, attempt func(ctx context.Context) (otlp.PartialSuccess, error)) (otlp.PartialSuccess, error) {
	if cnt == nil {
		cnt = new(counters)
	}
	if t := c.requestTimeout(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	// cause is the last attempt's error that says more than the request's
	// own deadline: an attempt cut short by the deadline fails with it,
	// which would hide why the earlier attempts failed (connection
	// refused, UNAVAILABLE...).
	var cause error
	for n := 1; ; n++ {
		cnt.sent.Add(1)
		ps, err := c.attempt(ctx, attempt)
		if err != nil && (ctx.Err() == nil || !errors.Is(err, ctx.Err()) || cause == nil) {
			cause = err
		}
		if err == nil {
			cnt.acked.Add(1)
			if ps.Rejected > 0 {
				cnt.rejected.Add(uint64(ps.Rejected))
			}
			return ps, nil
		}
		retry, serverWait := classify(err)
		if !retry {
			cnt.failed.Add(1)
			return otlp.PartialSuccess{}, err
		}
		if ctx.Err() != nil {
			cnt.dropped.Add(1)
			return otlp.PartialSuccess{}, fmt.Errorf("%w: %v (last error: %v)", ErrDropped, ctx.Err(), cause)
		}
		delay := c.Backoff.Delay(n, serverWait)
		if c.OnRetry != nil {
			c.OnRetry(err, delay)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			cnt.dropped.Add(1)
			return otlp.PartialSuccess{}, fmt.Errorf("%w: %v (last error: %v)", ErrDropped, ctx.Err(), cause)
		}
		cnt.retried.Add(1)
	}
}

// attempt runs one attempt, bounded by AttemptTimeout.
func (c *Config) attempt(ctx context.Context, attempt func(ctx context.Context) (otlp.PartialSuccess, error)) (otlp.PartialSuccess, error) {
	if c.AttemptTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.AttemptTimeout)
		defer cancel()
	}
	return attempt(ctx)
}

// classify says whether an attempt's failure is retryable (Classify), and
// the least wait the server asked for.
func classify(err error) (retry bool, serverWait time.Duration) {
	retry = Classify(err) == Retryable
	if ae, ok := errors.AsType[*AttemptError](err); ok {
		return retry, max(ae.Delay, 0)
	}
	if st, ok := errors.AsType[*grpcwire.Status](err); ok {
		return retry, serverDelay(st)
	}
	return retry, 0
}
