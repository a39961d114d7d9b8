package otlpclient

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/handler"
)

func TestUnaryExport(t *testing.T) {
	for _, codec := range []compression.Codec{compression.Identity, compression.Gzip, compression.Zstd} {
		t.Run(codec.String(), func(t *testing.T) {
			sink := newCountSink()
			addr := startServer(t, newHandler(sink, handler.StreamConfig{}))
			u := NewUnaryExporter(Config{Endpoint: addr, Compression: codec})
			for i := uint64(1); i <= 5; i++ {
				if err := u.Export(context.Background(), testRequest(i, 3)); err != nil {
					t.Fatal(err)
				}
			}
			if st := u.Stats(); st.Acknowledged != 5 || st.Sent != 5 || st.Retried != 0 {
				t.Fatalf("stats %+v", st)
			}
			if len(sink.counts()) != 5 {
				t.Fatalf("stored %v", sink.counts())
			}
		})
	}
}

// TestUnaryRetryDelayHonoured: the sink refuses the first attempt, the
// server answers UNAVAILABLE with RetryInfo, and the exporter retries no
// earlier than the delay (a lower bound, not a performance test).
func TestUnaryRetryDelayHonoured(t *testing.T) {
	const delay = 250 * time.Millisecond
	sink := newCountSink()
	sink.failFirst = true
	addr := startServer(t, handler.New(handler.Config{Sink: sink, Logger: quietLogger(), RetryDelay: delay}))
	u := NewUnaryExporter(Config{Endpoint: addr})
	if err := u.Export(context.Background(), testRequest(1, 1)); err != nil {
		t.Fatal(err)
	}
	if st := u.Stats(); st.Acknowledged != 1 || st.Retried != 1 || st.Sent != 2 {
		t.Fatalf("stats %+v", st)
	}
	at := sink.attempts[1]
	if len(at) != 2 || time.Duration(at[1]-at[0]) < delay {
		t.Fatalf("attempts at %v, want them %v apart", at, delay)
	}
}

func TestUnaryRefusals(t *testing.T) {
	sink := newCountSink()
	addr := startServer(t, newHandler(sink, handler.StreamConfig{}))

	// Malformed: INVALID_ARGUMENT is final, no retry.
	u := NewUnaryExporter(Config{Endpoint: addr})
	err := u.Export(context.Background(), []byte{0x0a, 0x05, 0xff})
	var st *grpcwire.Status
	if !errors.As(err, &st) || st.Code != grpcwire.InvalidArgument {
		t.Fatalf("err %v", err)
	}
	if s := u.Stats(); s.Failed != 1 || s.Retried != 0 {
		t.Fatalf("stats %+v", s)
	}

	// Nothing listening: transport errors are retried until the request
	// timeout, then the request is dropped.
	u = NewUnaryExporter(Config{Endpoint: freePort(t), RequestTimeout: 200 * time.Millisecond, Backoff: Backoff{Initial: 10 * time.Millisecond}})
	if err := u.Export(context.Background(), testRequest(1, 1)); !errors.Is(err, ErrDropped) {
		t.Fatalf("err %v", err)
	}
	if s := u.Stats(); s.Dropped != 1 || s.Retried == 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestStreamCompression(t *testing.T) {
	for _, codec := range []compression.Codec{compression.Gzip, compression.Zstd} {
		t.Run(codec.String(), func(t *testing.T) {
			sink := newCountSink()
			addr := startServer(t, newHandler(sink, handler.StreamConfig{}))
			e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr, Compression: codec}})
			o := newOutcomes()
			for i := uint64(1); i <= 20; i++ {
				if err := e.Send(context.Background(), testRequest(i, 10), o.done(i)); err != nil {
					t.Fatal(err)
				}
			}
			closeExporter(t, e)
			o.requireAllAcked(t, 20)
			if len(sink.counts()) != 20 {
				t.Fatalf("stored %d", len(sink.counts()))
			}
		})
	}
}

// TestStreamUnimplemented: a receiver without the stream service ends
// every stream with UNIMPLEMENTED; the requests fail instead of being
// resent forever.
func TestStreamUnimplemented(t *testing.T) {
	addr := startServer(t, newHandler(newCountSink(), handler.StreamConfig{}))
	cfg := StreamConfig{Config: Config{Endpoint: addr, Signal: Signal(9)}}
	e := NewStreamExporter(cfg)
	e.url = "http://" + addr + "/otlplite.v1.StreamExporter/ExportProfiles"
	o := newOutcomes()
	if err := e.Send(context.Background(), testRequest(1, 1), o.done(1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the outcome", func() bool { _, order := o.snapshot(); return len(order) == 1 })
	calls, _ := o.snapshot()
	var re *RequestError
	if !errors.As(calls[1][0], &re) {
		t.Fatalf("outcome %v", calls[1])
	}
	closeExporter(t, e)
	if st := e.Stats(); st.Failed != 1 || st.Retried != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStreamBadEndpoint: an endpoint that cannot form a URL fails the
// requests at once instead of leaving them to time out.
func TestStreamBadEndpoint(t *testing.T) {
	e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: "bad host:1"}})
	o := newOutcomes()
	if err := e.Send(context.Background(), testRequest(1, 1), o.done(1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failure", func() bool { _, order := o.snapshot(); return len(order) == 1 })
	if st := e.Stats(); st.Failed != 1 {
		t.Fatalf("stats %+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
