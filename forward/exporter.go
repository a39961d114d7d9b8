package forward

import (
	"context"
	"fmt"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
)

// ExportFunc sends one encoded request of a signal, and returns when it
// was accepted or the attempts gave up.
type ExportFunc func(ctx context.Context, sig storage.Signal, body []byte) error

// NewExporter returns an ExportFunc that sends to d for a sender that does
// not forward from the log (self-telemetry): the same clients, TLS,
// headers, compression and per-attempt timeout as a forwarder's lane to d,
// each request retried by otlpclient's loop for at most timeout (and its
// context). d's protocol is OTLP/gRPC or OTLP/HTTP: a stream and a sink
// are for the forwarder's records, which it keeps until delivered.
func NewExporter(d Destination, timeout time.Duration) (ExportFunc, error) {
	if d.Protocol != GRPC && d.Protocol != HTTP {
		return nil, fmt.Errorf("%s is not an OTLP/gRPC or OTLP/HTTP endpoint: want grpc://, grpcs://, http:// or https://", d.String())
	}
	hc := httpClient(d)
	send := map[storage.Signal]func(context.Context, []byte) error{}
	for _, sig := range otlp.Signals {
		cfg := clientConfig(d, sig, hc)
		cfg.RequestTimeout = timeout
		if d.Protocol == HTTP {
			h := otlpclient.NewHTTPExporter(otlpclient.HTTPConfig{Config: cfg, URL: httpURL(d, sig), JSON: d.JSON})
			send[sig] = func(ctx context.Context, body []byte) error {
				_, err := h.ExportResult(ctx, body)
				return err
			}
			continue
		}
		u := otlpclient.NewUnaryExporter(cfg)
		send[sig] = u.Export
	}
	return func(ctx context.Context, sig storage.Signal, body []byte) error {
		f, ok := send[sig]
		if !ok {
			return fmt.Errorf("cannot export signal %v", sig)
		}
		return f(ctx, body)
	}, nil
}
