package otlpclient

import (
	"context"
	"net/http"
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/storage"
)

// The proposal's batch: 500 spans with 10 attributes (~250 KB).
func benchBatch(b *testing.B) []byte {
	b.Helper()
	return NewSpanGenerator(500, 10, 1).AppendBatch(nil)
}

func BenchmarkAppendFrame(b *testing.B) {
	for _, codec := range []compression.Codec{compression.Identity, compression.Zstd} {
		b.Run(codec.String(), func(b *testing.B) {
			req := benchBatch(b)
			var frame, scratch []byte
			b.ReportAllocs()
			b.SetBytes(int64(len(req)))
			for i := 0; b.Loop(); i++ {
				var err error
				if frame, scratch, err = appendFrame(frame[:0], scratch, codec, uint64(i), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseAck(b *testing.B) {
	src := appendAck(123456789, 0, "", 0, false, 0)
	var a Ack
	b.ReportAllocs()
	for b.Loop() {
		if err := ParseAck(src, &a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSpanGenerator(b *testing.B) {
	g := NewSpanGenerator(500, 10, 1)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = g.AppendBatch(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

type discardSink struct{}

func (discardSink) Write(context.Context, storage.Signal, []byte, int) error { return nil }
func (discardSink) Close() error                                             { return nil }

// BenchmarkExport sends the proposal's batch to an in-process server over
// loopback: per-batch cost of the client and server together, and the
// client's allocations per batch (net/http's HTTP/2 included). The -keys
// cases send an idempotency key with each batch (Config.IdempotencyKeys:
// a random key per unary export, a client identity per stream), which
// this server ignores: the difference is the client's cost of keys.
func BenchmarkExport(b *testing.B) {
	req := benchBatch(b)
	addr := startServerB(b, handler.New(handler.Config{Sink: discardSink{}, Logger: quietLogger()}))
	for _, keys := range []bool{false, true} {
		sfx := ""
		if keys {
			sfx = "-keys"
		}
		b.Run("stream"+sfx, func(b *testing.B) {
			e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr, IdempotencyKeys: keys}})
			b.ReportAllocs()
			b.SetBytes(int64(len(req)))
			for b.Loop() {
				if err := e.Send(context.Background(), req, nil); err != nil {
					b.Fatal(err)
				}
			}
			if err := e.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
		b.Run("unary"+sfx, func(b *testing.B) {
			u := NewUnaryExporter(Config{Endpoint: addr, IdempotencyKeys: keys})
			b.ReportAllocs()
			b.SetBytes(int64(len(req)))
			for b.Loop() {
				if err := u.Export(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIdempotencyKeyCost is what a key adds to one unary export on
// the client, isolated from the network and the server (which dominate
// BenchmarkExport's noise): a key of Config.IdempotencyKeys, the
// context carrying it, and the request clone that adds its metadata
// (keyTransport) over a transport that answers at once. "none" is the
// same export path without a key.
func BenchmarkIdempotencyKeyCost(b *testing.B) {
	resp := &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}
	base := roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	hreq, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://127.0.0.1:4317/x", http.NoBody)
	if err != nil {
		b.Fatal(err)
	}
	hreq.Header.Set("Content-Type", "application/grpc")
	for _, keys := range []bool{false, true} {
		name := "none"
		if keys {
			name = "random-key"
		}
		b.Run(name, func(b *testing.B) {
			tr := keyTransport{base: base}
			var auto *autoKeys
			if keys {
				auto = newAutoKeys()
			}
			b.ReportAllocs()
			for b.Loop() {
				ctx := context.Background()
				key, err := exportKey(ctx, auto)
				if err != nil {
					b.Fatal(err)
				}
				if key != "" {
					ctx = WithIdempotencyKey(ctx, key)
				}
				if _, err := tr.RoundTrip(hreq.WithContext(ctx)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
