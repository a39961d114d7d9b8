package stefreceiver

import (
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"
)

// BenchmarkStreamFrames serves STEF streams of SDK-sized frames (22 points
// a frame, as the OpenTelemetry demo's SDKs send a resource's metrics) over
// h2c into a memory sink, the client's frames encoded beforehand, and
// reports the whole stream's cost per point: the per-frame work (request,
// admission, validation, sink, acknowledgement) beside the per-point
// decoding. burst: the client sends every frame before it reads an
// acknowledgement, as a stefexporter draining its queue does; lockstep: it
// waits for each frame's acknowledgement before the next, so no frame is
// ever waiting when one ends.
func BenchmarkStreamFrames(b *testing.B) {
	const frames, perFrame = 200, 22
	var buf chunkBuffer
	w, err := otelstef.NewMetricsWriter(&buf, pkg.WriterOptions{Compression: pkg.CompressionZstd})
	if err != nil {
		b.Fatal(err)
	}
	var ends []int // where each frame's chunk ends (the first's header before it)
	for i := range frames {
		writePoints(b, w, perFrame, i*perFrame)
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		ends = append(ends, len(buf.msgs))
	}
	all := buf.msgs
	for _, mode := range []string{"burst", "lockstep"} {
		b.Run(mode, func(b *testing.B) {
			addr, sink := serve(b, Config{})
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				p := dial(b, addr)
				p.sendFirst(b, "Metrics")
				p.recv(b)
				if mode == "burst" {
					p.w.Write(all)
					for acked := uint64(0); acked < frames; {
						acked, _ = parseAck(b, p.recv(b))
					}
				} else {
					prev := 0
					for i, end := range ends {
						p.w.Write(all[prev:end])
						prev = end
						for acked := uint64(0); acked < uint64(i+1); {
							acked, _ = parseAck(b, p.recv(b))
						}
					}
				}
				p.w.Close()
				if st := p.status(); st != "0 " {
					b.Fatalf("status %q", st)
				}
			}
			b.StopTimer()
			sink.mu.Lock()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*frames*perFrame), "ns/point")
			b.ReportMetric(float64(len(sink.writes))/float64(b.N), "requests/stream")
			sink.writes, sink.sigs = nil, nil
			sink.mu.Unlock()
		})
	}
}
