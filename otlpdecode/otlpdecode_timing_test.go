package otlpdecode

import (
	"testing"
)

// The benchmarks report ns/item (span, data point, log record) besides
// ns/op, the unit the receiver's budget is stated in. The bench module
// compares them with pdata's UnmarshalProto on the same payloads.

func benchItems(b *testing.B, src []byte, items int, fn func()) {
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fn()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(items), "ns/item")
}

func BenchmarkCheckTraces(b *testing.B) {
	src := golden(b, "traces_500x10.pb")
	for _, bb := range []struct {
		name string
		opts *Options
	}{{"500x10", nil}, {"500x10-utf8", utf8Opts}} {
		b.Run(bb.name, func(b *testing.B) {
			benchItems(b, src, 500, func() {
				if _, err := CheckTraces(src, bb.opts); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkTracesDecoder(b *testing.B) {
	src := golden(b, "traces_500x10.pb")
	var d TracesDecoder
	b.Run("500x10/spans", func(b *testing.B) {
		benchItems(b, src, 500, func() {
			if err := d.Decode(src, func(*Resource, *Scope, *Span) error { return nil }); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("500x10/attributes", func(b *testing.B) {
		benchItems(b, src, 500, func() {
			if _, _, err := walkTraces(&d, src); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func BenchmarkAppendValidTraces(b *testing.B) {
	src := golden(b, "traces_500x10.pb")
	var dst []byte
	benchItems(b, src, 500, func() {
		var err error
		if dst, err = AppendValidTraces(dst[:0], src, nil); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkCheckMetrics(b *testing.B) {
	src := golden(b, "metrics_all_kinds.pb")
	benchItems(b, src, 14, func() {
		if _, err := CheckMetrics(src, nil); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkMetricsDecoder(b *testing.B) {
	src := golden(b, "metrics_all_kinds.pb")
	var d MetricsDecoder
	benchItems(b, src, 14, func() {
		if _, err := walkMetrics(&d, src); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkCheckLogs(b *testing.B) {
	src := golden(b, "logs_all_fields.pb")
	benchItems(b, src, 14, func() {
		if _, err := CheckLogs(src, nil); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkLogsDecoder(b *testing.B) {
	src := golden(b, "logs_all_fields.pb")
	var d LogsDecoder
	benchItems(b, src, 14, func() {
		if _, err := walkLogs(&d, src); err != nil {
			b.Fatal(err)
		}
	})
}
