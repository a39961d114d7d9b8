package otlpview_test

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/internal/viewwalk"
	. "github.com/otlp-lite/otlp-lite/otlpview"
)

// The benchmarks report ns/item (span, data point, log record) besides
// ns/op. The bench module compares them with pdata's UnmarshalProto on the
// same payloads.

func BenchmarkTracesDecoder(b *testing.B) {
	src := pbtest.Golden(b, "traces_500x10.pb")
	var d TracesDecoder
	b.Run("500x10/spans", func(b *testing.B) {
		pbtest.BenchItems(b, src, 500, func() {
			if err := d.Decode(src, func(*Resource, *Scope, *Span) error { return nil }); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("500x10/attributes", func(b *testing.B) {
		pbtest.BenchItems(b, src, 500, func() {
			if _, _, err := viewwalk.Traces(&d, src); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func BenchmarkMetricsDecoder(b *testing.B) {
	src := pbtest.Golden(b, "metrics_all_kinds.pb")
	var d MetricsDecoder
	pbtest.BenchItems(b, src, 14, func() {
		if _, err := viewwalk.Metrics(&d, src); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkLogsDecoder(b *testing.B) {
	src := pbtest.Golden(b, "logs_all_fields.pb")
	var d LogsDecoder
	pbtest.BenchItems(b, src, 14, func() {
		if _, err := viewwalk.Logs(&d, src); err != nil {
			b.Fatal(err)
		}
	})
}
