package forward

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
)

// sender delivers a lane's records with one of otlpclient's exporters and
// reports each outcome to lane.outcome exactly once.
type sender interface {
	// send hands r over; it blocks while Destination.InFlight records
	// are in flight, and fails (without an outcome) only if ctx ends
	// first or the sender is closed.
	send(ctx context.Context, r *record) error
	// close waits, until the lane's send context ends, for the
	// records in flight.
	close()
	// holding is the failure that keeps records from being delivered
	// now, nil if none.
	holding() error
}

// clientConfig is what otlpclient needs of d to send sig over hc.
func clientConfig(d Destination, sig storage.Signal, hc *http.Client) otlpclient.Config {
	return otlpclient.Config{
		Endpoint:       d.Endpoint,
		TLS:            d.TLS,
		Signal:         sig,
		Compression:    d.Compression,
		AttemptTimeout: d.Timeout,
		Backoff:        d.Backoff,
		HTTP:           hc,
	}
}

// httpURL is the OTLP/HTTP URL of sig at d.
func httpURL(d Destination, sig storage.Signal) string {
	scheme := "http://"
	if d.TLS != nil {
		scheme = "https://"
	}
	return scheme + otlpclient.AuthorityOf(d.Endpoint) + d.Path + sig.Info().HTTPPath
}

func newSender(d Destination, sig storage.Signal, hc *http.Client, l *lane) sender {
	cfg := clientConfig(d, sig, hc)
	cfg.RequestTimeout = -1 // retried until delivered or stopped, never dropped
	cfg.OnRetry = func(err error, _ time.Duration) {
		l.retries.Inc()
		l.setState(BackingOff, err)
		l.observe(Event{Kind: Retried, Err: err})
	}
	switch d.Protocol {
	case Sink:
		return newUnarySender(l, d.InFlight, func(ctx context.Context, r *record) (otlp.PartialSuccess, error) {
			return cfg.Retry(ctx, func(ctx context.Context) (otlp.PartialSuccess, error) {
				err := l.dest.sink.Write(ctx, sig, r.data, r.items)
				if err != nil {
					// A sink says ErrUnavailable or ErrOverloaded when a
					// later write may succeed (storage.Sink).
					retry := errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrOverloaded)
					return otlp.PartialSuccess{}, &otlpclient.AttemptError{Err: err, Retryable: retry}
				}
				return otlp.PartialSuccess{}, nil
			})
		})
	case Stream:
		return &streamSender{l: l, exp: otlpclient.NewStreamExporter(otlpclient.StreamConfig{Config: cfg, MaxPending: d.InFlight, ReportPartial: true, DisableStreamCompression: d.DisableStreamCompression, DisableStreamColumns: d.DisableStreamColumns, ClientID: l.source})}
	case HTTP:
		h := otlpclient.NewHTTPExporter(otlpclient.HTTPConfig{Config: cfg, URL: httpURL(d, sig), JSON: d.JSON})
		return newUnarySender(l, d.InFlight, func(ctx context.Context, r *record) (otlp.PartialSuccess, error) {
			return h.ExportResult(ctx, r.data)
		})
	default:
		u := otlpclient.NewUnaryExporter(cfg)
		return newUnarySender(l, d.InFlight, func(ctx context.Context, r *record) (otlp.PartialSuccess, error) {
			return u.ExportResult(ctx, r.data)
		})
	}
}

// unarySender runs up to InFlight requests at once, each retried by
// otlpclient's loop until delivered, refused, or the Forwarder stops.
type unarySender struct {
	l      *lane
	slots  chan struct{}
	export func(context.Context, *record) (otlp.PartialSuccess, error)
}

func newUnarySender(l *lane, inFlight int, export func(context.Context, *record) (otlp.PartialSuccess, error)) *unarySender {
	return &unarySender{l: l, slots: make(chan struct{}, inFlight), export: export}
}

func (s *unarySender) send(ctx context.Context, r *record) error {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.l.spawn(func() {
		ctx := r.ctx(s.l.sendCx)
		if r.key != "" {
			ctx = otlpclient.WithIdempotencyKey(ctx, r.key)
		}
		ps, err := s.export(ctx, r)
		<-s.slots
		s.l.outcome(r, ps, err)
	})
	return nil
}

func (s *unarySender) close()         {}
func (s *unarySender) holding() error { return nil }

// streamSender pipelines records on an otlp-lite stream; the exporter
// resends what a broken stream left unacknowledged.
type streamSender struct {
	l   *lane
	exp *otlpclient.StreamExporter
}

func (s *streamSender) send(ctx context.Context, r *record) error {
	done := func(err error) {
		if pe, ok := err.(*otlpclient.PartialError); ok {
			s.l.outcome(r, otlp.PartialSuccess{Rejected: pe.Rejected, Message: pe.Message}, nil)
			return
		}
		s.l.outcome(r, otlp.PartialSuccess{}, err)
	}
	var err error
	if r.id != 0 {
		// The record's position is its id: with the stream's ClientID,
		// the key a resend after a crash sends again (keys.go).
		err = s.exp.SendID(ctx, r.id, r.data, done)
	} else {
		err = s.exp.Send(ctx, r.data, done)
	}
	if errors.Is(err, otlpclient.ErrClosed) || ctx.Err() != nil {
		return err
	}
	if err != nil {
		// Not a valid export request: the log holds what a receiver
		// acknowledged, so this is damage that passed the CRC.
		s.l.outcome(r, otlp.PartialSuccess{}, &otlpclient.AttemptError{Err: err})
	}
	return nil
}

func (s *streamSender) close() { s.exp.Close(s.l.sendCx) }

func (s *streamSender) holding() error { return s.exp.LastError() }
