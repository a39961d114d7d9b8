package handler

import (
	"context"
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
)

// BenchmarkStreamSetup: a stream's stateful decoders (zstd and columns)
// set up, its first message decoded (metrics500x10), and the stream
// ended, with the spares (the decoders of the last stream, reset) or
// without them (new decoders every stream, closed at its end: what the
// handler did before streamSpares).
func BenchmarkStreamSetup(b *testing.B) {
	enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
	wire, err := enc.AppendMessage(nil, otlpcolumns.NewEncoder(otlpcolumns.Metrics).Append(nil, envelope(1, metrics500x10())))
	if err != nil {
		b.Fatal(err)
	}
	enc.Close()
	for _, spares := range []bool{false, true} {
		name := "new"
		if spares {
			name = "spares"
		}
		b.Run(name, func(b *testing.B) {
			h := New(Config{Sink: &memSink{}, Logger: quietLogger()})
			window := h.stream.CompressionWindow
			cost := compression.StreamDecoderCost(window) + otlpcolumns.DecoderCost
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				c := &streamCodec{cost: cost, window: window, sig: otlp.Metrics}
				if spares {
					c.dec = h.spares.zstdDecoder(context.Background(), window, compression.StreamDecoderCost(window))
					c.cols = h.spares.colsDecoder(context.Background(), otlp.Metrics)
				}
				if c.dec == nil || c.cols == nil {
					// The first (or new) stream: no spares, its
					// own charge.
					if c.dec != nil || c.cols != nil || !h.p.HoldStreamState(cost) {
						b.Fatal("no room for the stream's state, or half its decoders spare")
					}
					c.dec, _ = compression.NewStreamDecoder(window)
					c.cols = otlpcolumns.NewDecoder(otlpcolumns.Metrics)
				}
				t := h.p.Take(ctx)
				t.Msg = append(t.Msg[:0], wire...)
				if st := c.decode(h, t); st != nil {
					b.Fatal(st)
				}
				h.p.Done(t)
				if spares {
					c.close(h)
				} else {
					h.p.ReleaseStreamState(c.cost)
					c.dec.Close()
				}
			}
		})
	}
}
