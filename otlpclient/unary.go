package otlpclient

import (
	"context"
	"errors"
	"fmt"
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
	method string
	c      counters
}

// NewUnaryExporter returns an exporter for cfg. It does not connect until
// the first Export.
func NewUnaryExporter(cfg Config) *UnaryExporter {
	return &UnaryExporter{
		cfg: cfg,
		client: &grpcwire.Client{
			HTTP:     cfg.httpClient(),
			BaseURL:  cfg.baseURL(),
			Encoding: cfg.Compression,
		},
		method: signalInfo(cfg.Signal).GRPCPath,
	}
}

// ErrDropped is returned for a request given up before it was
// acknowledged: its timeout passed, or the exporter was closed.
var ErrDropped = errors.New("request dropped before it was acknowledged")

// Export sends req, a serialized Export{Trace,Metrics,Logs}ServiceRequest,
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
	if t := u.cfg.requestTimeout(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	for attempt := 1; ; attempt++ {
		u.c.sent.Add(1)
		resp, err := u.client.Invoke(ctx, u.method, req)
		if err == nil {
			u.c.acked.Add(1)
			if ps, _ := otlp.ParsePartialSuccess(resp); ps.Rejected > 0 {
				u.c.rejected.Add(uint64(ps.Rejected))
			}
			return nil
		}
		var st *grpcwire.Status
		var delay time.Duration
		switch {
		case errors.As(err, &st) && !otlp.Retryable(st):
			u.c.failed.Add(1)
			return err
		case st != nil:
			delay = u.cfg.Backoff.Delay(attempt, serverDelay(st))
		default:
			// A transport error: the server may be restarting.
			delay = u.cfg.Backoff.Delay(attempt, 0)
		}
		if ctx.Err() != nil {
			u.c.dropped.Add(1)
			return fmt.Errorf("%w: %v (last error: %v)", ErrDropped, ctx.Err(), err)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			u.c.dropped.Add(1)
			return fmt.Errorf("%w: %v (last error: %v)", ErrDropped, ctx.Err(), err)
		}
		u.c.retried.Add(1)
	}
}

// Stats returns the exporter's counters.
func (u *UnaryExporter) Stats() Stats { return u.c.snapshot() }
