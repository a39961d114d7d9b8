package otlpdecode

import (
	"reflect"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlpview"
)

// TestVisitedSpanIsItsView: the span view the check fills as it walks
// (checker.spanView) is the view otlpview decodes from the span's
// bytes, field for field, lists included: for the golden payloads and for
// spans with every field twice, fields of the wrong wire type, long
// varints and a repeated status.
func TestVisitedSpanIsItsView(t *testing.T) {
	odd := pbtest.PB{}.
		Msg(1, pbtest.IDs(16, 9)).Msg(1, pbtest.IDs(16, 1)). // the last id wins
		Msg(2, pbtest.IDs(8, 2)).Str(3, "ts").Msg(4, pbtest.IDs(8, 3)).
		Str(5, "first").Str(5, "name").Varint(6, 3).Varint(6, 1<<40).
		Fixed64(7, 10).Fixed64(8, 20).Msg(9, pbtest.StrAttr("a", "1")).
		Varint(10, 300).Msg(11, pbtest.PB{}.Fixed64(1, 5).Str(2, "ev")).
		Msg(9, pbtest.StrAttr("b", "2")).Varint(12, 1).
		Msg(13, pbtest.PB{}.Msg(1, pbtest.IDs(16, 4)).Msg(2, pbtest.IDs(8, 5))).
		Varint(14, 2).Msg(15, pbtest.PB{}.Str(2, "msg")).Msg(15, pbtest.PB{}.Varint(3, 2)).
		Fixed32(16, 0x301).
		Varint(9, 7).Fixed64(11, 1).Varint(99, 1). // wrong wire types, an unknown field
		Msg(1, pbtest.IDs(16, 1))
	bare := pbtest.PB{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 2))
	payloads := map[string][]byte{
		"odd":  pbtest.Request(pbtest.PB{}, pbtest.PB{}, []pbtest.PB{odd, bare, pbtest.Span(16, 8, nil)}),
		"500":  pbtest.Golden(t, "traces_500x10.pb"),
		"all":  pbtest.Golden(t, "traces_all_fields.pb"),
		"ids":  pbtest.Golden(t, "traces_invalid_ids.pb"),
		"none": pbtest.Golden(t, "traces_empty.pb"),
	}
	for name, src := range payloads {
		var views otlpview.ItemViews
		visited := 0
		v := &Visitor{Span: func(_ *otlpview.Resource, _ *otlpview.Scope, sv *otlpview.Span) error {
			visited++
			want, err := views.Span(sv.Raw)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !reflect.DeepEqual(*sv, *want) {
				t.Errorf("%s: span %d: visited view\n%+v\nwant\n%+v", name, visited, *sv, *want)
			}
			return nil
		}}
		res, err := CheckTraces(src, &Options{Visit: &Visit{Visitor: v}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if visited != res.Items-res.Rejected {
			t.Errorf("%s: visited %d of %d valid spans", name, visited, res.Items-res.Rejected)
		}
	}
}
