package otlpcolumns

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	pb "github.com/otlp-lite/otlp-lite/otlppb"
)

// TestVouchSeriesOfAnotherField: a hostile stream's reference, from a
// histogram point, to the run a number point's attributes left (field 7,
// which in a HistogramDataPoint is explicit_bounds) copies that run there:
// five bytes of packed doubles, a malformed request, and bounds the
// point's rule never counted. Such a message (the encoder never writes
// one: its runs are found by their bytes, tag included) is not vouched
// for; the pipeline's validation then refuses it.
func TestVouchSeriesOfAnotherField(t *testing.T) {
	kv := P{}.Str(1, "k").Msg(2, P{}) // 5 bytes: not a whole double
	npt := P{}.Msg(pb.NumberDataPointAttributes, kv).Fixed64(3, 2).Fixed64(4, 3)
	// Its attributes' run the number point's length: the request's
	// declared length stays.
	hpt := P{}.Msg(pb.HistogramDataPointAttributes, kv).Fixed64(3, 2).Append(packed(6, 2)).Append(packed(7, 1))
	req := pbtest.Request(P{}.Msg(1, pbtest.StrAttr("service.name", "s")), nil, []P{
		P{}.Str(1, "g").Msg(pb.MetricGauge, P{}.Msg(1, npt)),
		P{}.Str(1, "h").Msg(pb.MetricHistogram, P{}.Msg(1, hpt)),
	})
	env, _ := otlp.AppendEnvelope(nil, 1, req)
	encs := encodeAll(Metrics, [][]byte{env, env})
	if got := decodeVouched(t, Metrics, encs); len(got) != 2 || !got[0] || !got[1] {
		t.Fatalf("the honest stream vouched: %v", got)
	}
	// The histogram point's reference column, in the schema.
	s := &schemas[Metrics]
	hp := s.root.f[2].child.f[2].child.f[2].child.f[pb.MetricHistogram].child.f[1].child
	col := hp.seriesCol[0]
	n, cols := split(t, s, encs[1])
	if len(cols[col]) != 1 {
		t.Fatalf("the histogram point's reference column is %x", cols[col])
	}
	other := 0
	for v := range byte(8) {
		cols[col] = []byte{v}
		d := NewDecoder(Metrics)
		if _, err := d.Decode(nil, encs[0], len(env), nil); err != nil {
			t.Fatal(err)
		}
		out, err := d.Decode(nil, join(n, cols), len(env)+64, nil)
		if err != nil {
			continue
		}
		if _, req, err := otlp.UnwrapEnvelope(append([]byte(nil), out...)); err == nil {
			if _, err := otlpdecode.CheckMetrics(req, nil); err != nil {
				other++
			}
		}
		if vv, ok := d.Vouched(); ok {
			sound(t, Metrics, out, vv)
		}
	}
	if other == 0 {
		t.Fatal("no reference made the request malformed: the test tests nothing")
	}
}
