package ingest

import (
	"context"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// BenchmarkExportValidated is the pipeline's cost of a request of 500
// spans (traces_500x10, the golden payload) with its validation pass
// (Export: the check pool's hand-off and otlpdecode.CheckTraces) and
// without (ExportValidated, as for a columns message the decoder vouches
// for), to a sink that counts.
func BenchmarkExportValidated(b *testing.B) {
	body := pbtest.Golden(b, "traces_500x10.pb")
	res, err := otlpdecode.CheckTraces(body, &otlpdecode.Options{})
	if err != nil || res.Rejected != 0 {
		b.Fatal(res, err)
	}
	for _, c := range []struct {
		name string
		v    Validated
	}{{"Export", Validated{}}, {"ExportValidated", Validated{Items: res.Items, MaxAnyValueDepth: 1}}} {
		b.Run(c.name, func(b *testing.B) {
			p := New(Config{Sink: &countingSink{}})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				tk := p.Take(ctx)
				tk.Msg = append(tk.Msg[:0], body...)
				if err := tk.Charge(ctx, len(tk.Msg)); err != nil {
					b.Fatal(err)
				}
				if _, err := p.ExportValidated(ctx, Request{Transport: GRPCStream, Signal: otlp.Traces, Body: tk.Msg, Ticket: tk}, c.v); err != nil {
					b.Fatal(err)
				}
				p.Done(tk)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(res.Items), "ns/span")
		})
	}
}
