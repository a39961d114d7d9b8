package otlpclient

import (
	"context"
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
// client's allocations per batch (net/http's HTTP/2 included).
func BenchmarkExport(b *testing.B) {
	req := benchBatch(b)
	addr := startServerB(b, handler.New(handler.Config{Sink: discardSink{}, Logger: quietLogger()}))
	b.Run("stream", func(b *testing.B) {
		e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}})
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
	b.Run("unary", func(b *testing.B) {
		u := NewUnaryExporter(Config{Endpoint: addr})
		b.ReportAllocs()
		b.SetBytes(int64(len(req)))
		for b.Loop() {
			if err := u.Export(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
