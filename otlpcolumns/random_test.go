package otlpcolumns

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
)

// gen builds random requests shaped like OTLP (what the transform looks
// into: span ids, parents before and after, trace ids that repeat,
// series that repeat across messages, names, times), with the oddities a
// valid message may have (fields in any order, repeated, unknown, empty,
// non-minimal lengths), so that the stream's state meets the cases the
// byte-level fuzzers rarely build.
type gen struct {
	r     *rand.Rand
	ids   [][]byte
	names []string
	attrs []pbtest.PB
}

func (g *gen) pick(n int) int { return g.r.IntN(n) }

func (g *gen) id(n int) []byte {
	if len(g.ids) > 0 && g.pick(3) > 0 {
		id := g.ids[g.pick(len(g.ids))]
		if len(id) == n || g.pick(8) == 0 {
			return id
		}
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	if g.pick(10) == 0 {
		b = b[:g.pick(n+1)]
	}
	g.ids = append(g.ids, b)
	return b
}

func (g *gen) name() string {
	if len(g.names) > 0 && g.pick(4) > 0 {
		return g.names[g.pick(len(g.names))]
	}
	s := "op" + strconv.Itoa(g.pick(1000))
	g.names = append(g.names, s)
	return s
}

func (g *gen) anyValue(depth int) pbtest.PB {
	switch g.pick(7) {
	case 0:
		return pbtest.PB{}.Str(1, g.name())
	case 1:
		return pbtest.PB{}.Varint(2, uint64(g.pick(2)))
	case 2:
		return pbtest.PB{}.Varint(3, g.r.Uint64())
	case 3:
		return pbtest.PB{}.Fixed64(4, g.r.Uint64()>>g.pick(64))
	case 4:
		if depth < 4 {
			var a pbtest.PB
			for range g.pick(3) {
				a = a.Msg(1, g.anyValue(depth+1))
			}
			return pbtest.PB{}.Msg(5, a)
		}
	case 5:
		if depth < 4 {
			return pbtest.PB{}.Msg(6, pbtest.PB{}.Msg(1, pbtest.PB{}.Str(1, g.name()).Msg(2, g.anyValue(depth+1))))
		}
	}
	return pbtest.PB{}.Str(7, string(g.id(3)))
}

func (g *gen) attr() pbtest.PB {
	if len(g.attrs) > 0 && g.pick(3) > 0 {
		return g.attrs[g.pick(len(g.attrs))]
	}
	a := pbtest.PB{}.Str(1, g.name()).Msg(2, g.anyValue(0))
	g.attrs = append(g.attrs, a)
	return a
}

// fields joins parts in a random order, sometimes repeated, sometimes with
// an unknown field or a non-minimal length among them.
func (g *gen) fields(parts ...pbtest.PB) pbtest.PB {
	g.r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	var m pbtest.PB
	for _, p := range parts {
		m = m.Append(p)
		if g.pick(20) == 0 {
			m = m.Append(p)
		}
		if g.pick(30) == 0 {
			m = m.Varint(100+g.pick(1000), g.r.Uint64())
		}
	}
	return m
}

func (g *gen) msg(num int, b pbtest.PB) pbtest.PB {
	if g.pick(25) == 0 {
		return nonMinimal(num, b, 2+g.pick(9))
	}
	return pbtest.PB{}.Msg(num, b)
}

func (g *gen) attrs3(num int) pbtest.PB {
	var a pbtest.PB
	for range g.pick(4) {
		a = a.Append(g.msg(num, g.attr()))
	}
	return a
}

func (g *gen) span(base uint64) pbtest.PB {
	start := base + uint64(g.pick(1e6))
	parts := []pbtest.PB{
		pbtest.PB{}.Str(1, string(g.id(16))), pbtest.PB{}.Str(2, string(g.id(8))), pbtest.PB{}.Str(5, g.name()),
		pbtest.PB{}.Fixed64(7, start), pbtest.PB{}.Fixed64(8, start+uint64(g.pick(1e5))), g.attrs3(9),
	}
	if g.pick(4) > 0 {
		parts = append(parts, pbtest.PB{}.Str(4, string(g.id(8))))
	}
	if g.pick(3) == 0 {
		parts = append(parts, pbtest.PB{}.Varint(6, uint64(g.pick(6))), pbtest.PB{}.Fixed32(16, uint32(g.pick(512))))
	}
	if g.pick(4) == 0 {
		parts = append(parts, g.msg(11, g.fields(pbtest.PB{}.Fixed64(1, start+5), pbtest.PB{}.Str(2, g.name()), g.attrs3(3))))
	}
	if g.pick(5) == 0 {
		parts = append(parts, g.msg(13, g.fields(pbtest.PB{}.Str(1, string(g.id(16))), pbtest.PB{}.Str(2, string(g.id(8))), g.attrs3(4))))
	}
	if g.pick(3) == 0 {
		parts = append(parts, g.msg(15, g.fields(pbtest.PB{}.Varint(3, uint64(g.pick(3))), pbtest.PB{}.Str(2, g.name()))))
	}
	return g.fields(parts...)
}

func (g *gen) point(base uint64) pbtest.PB {
	return g.fields(g.attrs3(7), pbtest.PB{}.Fixed64(2, base), pbtest.PB{}.Fixed64(3, base+uint64(g.pick(1e9))), pbtest.PB{}.Fixed64(4, g.r.Uint64()))
}

func (g *gen) request(sig Signal, id uint64) []byte {
	base := uint64(1.7e18) + uint64(g.pick(1e12))
	var items pbtest.PB
	for range g.pick(30) {
		switch sig {
		case Traces:
			items = items.Append(g.msg(2, g.span(base)))
		case Metrics:
			var pts pbtest.PB
			for range g.pick(6) {
				pts = pts.Append(g.msg(1, g.point(base)))
			}
			items = items.Append(g.msg(2, g.fields(pbtest.PB{}.Str(1, g.name()), g.msg(5+2*g.pick(2), pts))))
		case Logs:
			items = items.Append(g.msg(2, g.fields(pbtest.PB{}.Fixed64(1, base+uint64(g.pick(1e6))), pbtest.PB{}.Fixed64(11, base), g.msg(5, g.anyValue(0)),
				g.attrs3(6), pbtest.PB{}.Str(9, string(g.id(16))), pbtest.PB{}.Str(10, string(g.id(8))))))
		}
	}
	resource := g.msg(1, g.attrs3(1))
	scope := g.msg(2, g.fields(g.msg(1, pbtest.PB{}.Str(1, g.name())), items))
	return pbtest.PB{}.Varint(1, id).Append(g.msg(2, g.fields(resource, scope)))
}

// TestRandomStreams: streams of random OTLP-shaped requests round-trip
// byte for byte, transformed. RANDOM_STREAMS=n runs n streams a signal
// (default 30).
func TestRandomStreams(t *testing.T) {
	n := 30
	if v, err := strconv.Atoi(os.Getenv("RANDOM_STREAMS")); err == nil {
		n = v
	}
	for _, s := range signals {
		for seed := range n {
			g := &gen{r: rand.New(rand.NewPCG(uint64(seed), uint64(s.sig)))}
			var msgs [][]byte
			for i := range 8 {
				msgs = append(msgs, g.request(s.sig, uint64(i)))
			}
			streamTrip(t, s.sig, msgs...)
			for _, m := range msgs {
				if enc := NewEncoder(s.sig).Append(nil, m); enc[0] != flagColumns {
					t.Fatalf("%s seed %d: sent untransformed", s.name, seed)
				}
			}
		}
	}
}
