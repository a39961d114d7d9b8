package handler

import (
	"context"
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
)

// BenchmarkStreamDecode: a steady stream's message decoded in process, as
// the read loop does (a pooled ticket, streamCodec.decode, the ticket
// given back), without the network and the pipeline around it: the part
// of the message path whose charges Ticket.Reserve changed. Requests of
// about 8,000 spans (bigTraceRequest), zstd and columns; every 64
// messages the stream starts again (the decoders reset).
func BenchmarkStreamDecode(b *testing.B) {
	for _, columns := range []bool{false, true} {
		name := "zstd"
		if columns {
			name = "columns"
		}
		b.Run(name, func(b *testing.B) {
			const n = 64
			var wire [][]byte
			enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
			cols := otlpcolumns.NewEncoder(otlpcolumns.Traces)
			for i := range n {
				env := envelope(uint64(i+1), bigTraceRequest(i%6))
				if columns {
					env = cols.Append(nil, env)
				}
				w, err := enc.AppendMessage(nil, env)
				if err != nil {
					b.Fatal(err)
				}
				wire = append(wire, w)
			}
			enc.Close()
			h := New(Config{Sink: &memSink{}, Logger: quietLogger()})
			window := h.stream.CompressionWindow
			c := &streamCodec{window: window, sig: otlp.Traces}
			c.dec, _ = compression.NewStreamDecoder(window)
			if columns {
				c.cols = otlpcolumns.NewDecoder(otlpcolumns.Traces)
			}
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i == n {
					i = 0
					if err := c.dec.Reset(); err != nil {
						b.Fatal(err)
					}
					if columns {
						c.cols.Reset()
					}
				}
				t := h.p.Take(ctx)
				t.Msg = append(t.Msg[:0], wire[i]...)
				if st := c.decode(h, t); st != nil {
					b.Fatal(st)
				}
				h.p.Done(t)
				i++
			}
		})
	}
}
