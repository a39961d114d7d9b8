package otlpdecode

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/internal/viewwalk"
	"github.com/otlp-lite/otlp-lite/otlpview"
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

// BenchmarkCheckTracesVisit is validation alone against validation with a
// Visitor, the decoded-data path of an embedding storage engine, on the
// same 500x10 request: one that only gets the views (the cost of decoding
// them), one that reads every field of every span (viewwalk.Sink: the
// span's scalars, ids, strings, attributes, events and links), and one
// that reads its resource's and scope's too.
func BenchmarkCheckTracesVisit(b *testing.B) {
	src := golden(b, "traces_500x10.pb")
	b.Run("validate", func(b *testing.B) {
		pbtest.BenchItems(b, src, 500, func() {
			if _, err := CheckTraces(src, nil); err != nil {
				b.Fatal(err)
			}
		})
	})
	var sink viewwalk.Sink
	for _, bb := range []struct {
		name   string
		read   bool // read every field of the span
		header bool // read the resource and scope with every span
	}{{"validate+views", false, false}, {"validate+visit-span", true, false}, {"validate+visit-span+resource", true, true}} {
		opts := &Options{Visit: &Visit{Visitor: &Visitor{Span: func(res *otlpview.Resource, scope *otlpview.Scope, s *otlpview.Span) error {
			if !bb.read {
				return nil // the views decoded, not read
			}
			if bb.header {
				if err := sink.Resource(res); err != nil {
					return err
				}
				if err := sink.Scope(scope); err != nil {
					return err
				}
			}
			return sink.Span(s)
		}}}}
		b.Run(bb.name, func(b *testing.B) {
			pbtest.BenchItems(b, src, 500, func() {
				if res, err := CheckTraces(src, opts); err != nil || res.Rejected != 0 {
					b.Fatal(res, err)
				}
			})
		})
	}
}
