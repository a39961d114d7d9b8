package otlpdecode

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
)

// The benchmarks report ns/item (span, data point, log record) besides
// ns/op, the unit the receiver's budget is stated in. The bench module
// compares them with pdata's UnmarshalProto on the same payloads.

func BenchmarkCheckTraces(b *testing.B) {
	src := golden(b, "traces_500x10.pb")
	for _, bb := range []struct {
		name string
		opts *Options
	}{{"500x10", nil}, {"500x10-utf8", utf8Opts}} {
		b.Run(bb.name, func(b *testing.B) {
			pbtest.BenchItems(b, src, 500, func() {
				if _, err := CheckTraces(src, bb.opts); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

func BenchmarkAppendValidTraces(b *testing.B) {
	src := golden(b, "traces_500x10.pb")
	var dst []byte
	pbtest.BenchItems(b, src, 500, func() {
		var err error
		if dst, err = AppendValidTraces(dst[:0], src, nil); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkCheckMetrics(b *testing.B) {
	src := golden(b, "metrics_all_kinds.pb")
	pbtest.BenchItems(b, src, 14, func() {
		if _, err := CheckMetrics(src, nil); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkCheckLogs(b *testing.B) {
	src := golden(b, "logs_all_fields.pb")
	pbtest.BenchItems(b, src, 14, func() {
		if _, err := CheckLogs(src, nil); err != nil {
			b.Fatal(err)
		}
	})
}
