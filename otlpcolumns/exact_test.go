package otlpcolumns

import (
	"math"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
)

type PB = pbtest.PB

// nonMinimal returns a length-delimited field num whose length varint
// takes size bytes.
func nonMinimal(num int, b PB, size int) PB {
	m := PB{}.Tag(num, 2)
	l := uint64(len(b))
	for range size - 1 {
		m = append(m, byte(l)|0x80)
		l >>= 7
	}
	return append(append(m, byte(l)), b...)
}

// TestRoundTripExact: valid OTLP that writes what the usual encoders do
// not (explicit proto3 defaults, empty messages, unknown fields at every
// level, packed and unpacked repeated fields, repeated scalars, 10-byte
// varints and lengths, odd doubles, nesting to the receiver's depth) is
// rebuilt byte for byte, alone and on a stream that sends it again.
func TestRoundTripExact(t *testing.T) {
	unknown := PB{}.Varint(1000, 1).Fixed32(17, 2).Fixed64(536870911, 3).Str(99, "?").Msg(18, PB{}.Varint(1, 0))
	defaults := PB{}.Str(1, "").Str(2, "").Str(3, "").Str(4, "").Str(5, "").Varint(6, 0).Fixed64(7, 0).Fixed64(8, 0).
		Varint(10, 0).Varint(12, 0).Varint(14, 0).Msg(15, nil).Fixed32(16, 0)
	deep := PB{}.Str(1, "leaf")
	for i := range 120 {
		if i%2 == 0 {
			deep = PB{}.Msg(5, PB{}.Msg(1, deep)) // array_value.values
		} else {
			deep = PB{}.Msg(6, PB{}.Msg(1, PB{}.Str(1, "k").Msg(2, deep))) // kvlist_value.values
		}
	}
	negative := PB{}.Str(1, "n").Msg(2, PB{}.Varint(3, uint64(math.MaxUint64))) // int -1: 10 bytes
	nan := PB{}.Str(1, "d").Msg(2, PB{}.Fixed64(4, 0x7ff8dead0000beef))
	negZero := PB{}.Str(1, "z").Msg(2, PB{}.Fixed64(4, 1<<63))
	span := func(i int, extra PB) PB {
		return PB{}.Str(1, string(pbtest.IDs(16, 1))).Str(2, string(pbtest.IDs(8, byte(i)))).Str(5, "op").
			Fixed64(7, uint64(1e18+i)).Fixed64(8, uint64(1e18+i+5)).Msg(9, pbtest.StrAttr("k", "v")).Append(extra)
	}
	traces := []PB{
		nil,
		PB{}.Varint(1, 0),
		PB{}.Varint(1, 0).Msg(2, nil),
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(1, nil).Msg(2, nil).Str(3, "")),
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, nil))), // an empty span
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, defaults))),
		PB{}.Varint(1, 1).Append(unknown).Msg(2, PB{}.Append(unknown).Msg(1, PB{}.Append(unknown).Msg(1, pbtest.StrAttr("service.name", "x").Append(unknown))).
			Msg(2, PB{}.Msg(1, PB{}.Append(unknown)).Msg(2, span(1, unknown)).Msg(2, span(2, PB{}.Msg(11, unknown).Msg(13, unknown).Msg(15, unknown))))),
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, span(1, PB{}.Msg(9, PB{}.Str(1, "deep").Msg(2, deep)).Msg(9, negative).Msg(9, nan).Msg(9, negZero))))),
		// Repeated scalars, the last one wins: both kept.
		PB{}.Varint(1, 1).Varint(1, 2).Msg(2, PB{}.Msg(2, PB{}.Msg(2, span(1, PB{}.Fixed64(7, 5).Str(5, "again").Str(2, "short").Str(4, string(pbtest.IDs(8, 1))))))),
		// 10-byte lengths and a 10-byte id.
		PB{}.Varint(1, 1).Append(nonMinimal(2, PB{}.Append(nonMinimal(2, PB{}.Append(nonMinimal(2, span(3, nil), 10)), 10)), 10)),
		// Parents: itself, empty, 16 bytes, a span of another request.
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, span(1, PB{}.Str(4, string(pbtest.IDs(8, 1))))).Msg(2, span(2, PB{}.Str(4, ""))).
			Msg(2, span(3, PB{}.Str(4, string(pbtest.IDs(16, 3))))).Msg(2, span(4, PB{}.Str(4, string(pbtest.IDs(8, 99))))))),
		// Attributes split by other fields, and invalid UTF-8.
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, span(1, PB{}.Str(5, "\xff\xfe").Msg(9, pbtest.StrAttr("a", "b")).Varint(10, 0).Msg(9, pbtest.StrAttr("k", "v")))))),
	}
	point := func(v uint64, extra PB) PB {
		return PB{}.Msg(7, pbtest.StrAttr("host", "a")).Fixed64(2, 0).Fixed64(3, 1e18+v).Fixed64(4, math.Float64bits(float64(v))).Append(extra)
	}
	hist := PB{}.Msg(9, pbtest.StrAttr("host", "a")).Fixed64(3, 1e18).Fixed64(4, 3).
		Str(6, string(PB{}.Append(PB{1, 0, 2}))). // packed bucket_counts (varint bytes)
		Str(7, strings.Repeat("\x00", 16)).       // packed explicit_bounds
		Fixed64(6, 1).Fixed64(6, 2).              // unpacked bucket_counts
		Fixed64(7, math.Float64bits(1.5)).Varint(10, 0)
	metrics := []PB{
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, PB{}.Str(1, "g").Msg(5, PB{}.Msg(1, point(1, nil)).Msg(1, point(2, unknown)).Msg(1, nil))))),
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, PB{}.Str(1, "h").Msg(9, PB{}.Msg(1, hist).Varint(2, 0).Msg(1, nil))))),
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, PB{}.Str(1, "s").Msg(7, PB{}.Msg(1, point(3, PB{}.Varint(8, 0))).Varint(2, 2).Varint(3, 0)).Msg(11, nil).Msg(10, nil)))),
	}
	rec := func(extra PB) PB {
		return PB{}.Fixed64(1, 1e18).Fixed64(11, 0).Varint(2, 0).Str(3, "").Msg(5, PB{}.Str(1, "body")).Msg(6, pbtest.StrAttr("k", "v")).
			Varint(7, 0).Fixed32(8, 0).Str(9, "").Str(10, "").Str(12, "").Append(extra)
	}
	logs := []PB{
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, rec(nil)).Msg(2, rec(unknown)).Msg(2, nil))),
		PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, rec(PB{}.Msg(5, deep)).Msg(5, PB{}.Msg(6, nil))))),
	}
	for _, c := range []struct {
		sig  Signal
		msgs []PB
	}{{Traces, traces}, {Metrics, metrics}, {Logs, logs}} {
		for i, m := range c.msgs {
			enc := roundTrip(t, c.sig, m)
			if len(m) > 0 && enc[0] != flagColumns {
				t.Errorf("signal %d message %d sent untransformed", c.sig, i)
			}
			streamTrip(t, c.sig, m, m, m)
		}
		var all [][]byte
		for _, m := range c.msgs {
			all = append(all, m)
		}
		streamTrip(t, c.sig, append(all, all...)...)
	}
}

// TestRoundTripDepthBound: a message nested to maxDepth exactly is
// transformed, one level deeper is sent untransformed; both round-trip.
func TestRoundTripDepthBound(t *testing.T) {
	// Span attributes: the KeyValue at depth 4, its AnyValue at 5, each
	// array level two more (ArrayValue, AnyValue).
	nest := func(levels int, inner PB) PB {
		for range levels {
			inner = PB{}.Msg(5, PB{}.Msg(1, inner))
		}
		return PB{}.Varint(1, 1).Msg(2, PB{}.Msg(2, PB{}.Msg(2, PB{}.Msg(9, PB{}.Str(1, "k").Msg(2, inner)))))
	}
	const k = (maxDepth - 6) / 2                   // the last AnyValue at depth 5+2k = maxDepth-1
	atBound := nest(k, PB{}.Msg(5, nil))           // and an empty ArrayValue at maxDepth
	past := nest(k, PB{}.Msg(5, PB{}.Msg(1, nil))) // and an empty AnyValue past it
	if enc := roundTrip(t, Traces, atBound); enc[0] != flagColumns {
		t.Error("nested to maxDepth: sent untransformed")
	}
	if enc := roundTrip(t, Traces, past); enc[0] != flagRaw {
		t.Error("nested past maxDepth: transformed")
	}
}
