package otlpcolumns

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	pb "github.com/otlp-lite/otlp-lite/otlppb"
)

// split parses an encoding (flagColumns) into its declared length and its
// columns, by index.
func split(t *testing.T, s *schema, enc []byte) (uint64, [][]byte) {
	t.Helper()
	if enc[0] != flagColumns {
		t.Fatal("sent untransformed")
	}
	src := enc[1:]
	n, k := binary.Uvarint(src)
	src = src[k:]
	ncols, k := binary.Uvarint(src)
	src = src[k:]
	lens := make([]int, s.cols)
	for range ncols {
		l, k := binary.Uvarint(src[1:])
		lens[src[0]] = int(l)
		src = src[1+k:]
	}
	cols := make([][]byte, s.cols)
	for i := range cols {
		cols[i], src = append([]byte(nil), src[:lens[i]]...), src[lens[i]:]
	}
	return n, cols
}

// join is split's inverse.
func join(n uint64, cols [][]byte) []byte {
	out := binary.AppendUvarint([]byte{flagColumns}, n)
	k := 0
	for _, c := range cols {
		if len(c) > 0 {
			k++
		}
	}
	out = binary.AppendUvarint(out, uint64(k))
	for i, c := range cols {
		if len(c) > 0 {
			out = binary.AppendUvarint(append(out, byte(i)), uint64(len(c)))
		}
	}
	for _, c := range cols {
		out = append(out, c...)
	}
	return out
}

// TestDecodeHostileEdges: encodings changed where an attacker would
// change them (an index from the input into a table or a column, a size
// or a tag at its limit, a declared length one off) are refused with the
// error that names them, or, at the limit but within it, rebuilt; never a
// panic, never output past the declared length.
func TestDecodeHostileEdges(t *testing.T) {
	s := &schemas[Traces]
	span := s.root.f[2].child.f[2].child.f[2].child
	id := "\x00\x00\x00\x00\x00\x00\x00\x01"
	env := pbtest.PB{}.Varint(1, 1).Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.
		Str(pb.SpanTraceID, strings.Repeat("t", 16)).Str(pb.SpanSpanID, id).Str(pb.SpanParentSpanID, id).
		Fixed64(pb.SpanStartTimeUnixNano, 5).Fixed64(pb.SpanEndTimeUnixNano, 9))))
	n, cols := split(t, s, NewEncoder(Traces).Append(nil, env))
	if got, err := NewDecoder(Traces).Decode(nil, join(n, cols), len(env), nil); err != nil || !bytes.Equal(got, env) {
		t.Fatalf("unchanged: %v", err)
	}
	with := func(col int, b []byte) [][]byte {
		c := append([][]byte(nil), cols...)
		c[col] = b
		return c
	}
	st := cols[colStruct]
	if st[0] != 1<<3 || st[1] != 2<<3|2 || st[2] != 1 {
		t.Fatalf("structure % x: not the envelope's id and a length of one byte", st[:3])
	}
	stWith := func(at int, b ...byte) []byte {
		return append(append(append([]byte(nil), st[:at]...), b...), st[at+1:]...)
	}
	for _, c := range []struct {
		name string
		n    uint64
		cols [][]byte
		err  error // nil: rebuilt, with a length of ten bytes
	}{
		// The span's trace id: back one value, when none is before it.
		{"back past the first", n, with(int(span.f[pb.SpanTraceID].col), []byte{1}), errRef},
		// Its parent: the second value of a reference column of one.
		{"ref past the column", n, with(int(span.f[pb.SpanParentSpanID].col), []byte{1 + 2}), errRef},
		{"ref before the column", n, with(int(span.f[pb.SpanParentSpanID].col), []byte{1 + 1}), errRef},
		// The envelope's resource's length: ten bytes (the most a
		// varint has), eleven.
		{"length of ten bytes", n + 9, with(colStruct, stWith(2, 10)), nil},
		{"length of eleven bytes", n + 10, with(colStruct, stWith(2, 11)), errSize},
		{"length of no bytes", n, with(colStruct, stWith(2, 0)), errSize},
		// The envelope's id's tag: the last one-byte tag (field 15,
		// wire type 7), a tag of eleven bytes, field 0 in two bytes,
		// field 2^29.
		{"tag 0x7f", n, with(colStruct, stWith(0, 0x7f)), errWire},
		{"tag of eleven bytes", n, with(colStruct, stWith(0, bytes.Repeat([]byte{0x80}, 10)...)), errTag},
		{"field 0 in two bytes", n, with(colStruct, stWith(0, 0x80, 0)), errTag},
		{"field 2^29", n, with(colStruct, stWith(0, binary.AppendUvarint(nil, 1<<29<<3)...)), errTag},
		// The envelope's id: a varint cut short.
		{"varint cut", n, with(int(s.root.f[1].col), []byte{0x81}), errCut},
		// A declared length one short.
		{"declared one short", n - 1, cols, errLong},
	} {
		charged := 0
		got, err := NewDecoder(Traces).Decode(nil, join(c.n, c.cols), int(c.n), func(m int) error { charged += m; return nil })
		if c.err == nil {
			if err != nil || len(got) != int(c.n) || got[3] != 0x80|byte(len(env)-4) {
				t.Errorf("%s: %v, % x", c.name, err, got[:min(len(got), 14)])
			}
		} else if !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
		if len(got) > int(c.n) || charged > int(c.n) || cap(got) > charged {
			t.Errorf("%s: %d bytes of output, %d allocated, %d charged, %d declared", c.name, len(got), cap(got), charged, c.n)
		}
	}
	// The declared length over the limit, by one.
	if _, err := NewDecoder(Traces).Decode(nil, join(n, cols), int(n)-1, nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
}

// TestDecodeSeriesNotSent: a reference to a series the stream has not
// sent (here the second message of a stream, decoded on a new one) is
// refused, and is rebuilt on the stream that sent it.
func TestDecodeSeriesNotSent(t *testing.T) {
	point := pbtest.PB{}.Fixed64(pb.NumberDataPointTimeUnixNano, 1).Msg(pb.NumberDataPointAttributes, pbtest.StrAttr("k", "v"))
	env := pbtest.PB{}.Varint(1, 1).Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.Str(pb.MetricName, "m").
		Msg(pb.MetricGauge, pbtest.PB{}.Msg(pb.GaugeDataPoints, point)))))
	e, d := NewEncoder(Metrics), NewDecoder(Metrics)
	first, second := e.Append(nil, env), e.Append(nil, env)
	if len(second) >= len(first) {
		t.Fatalf("the second message (%d bytes) references no series (the first %d)", len(second), len(first))
	}
	if _, err := NewDecoder(Metrics).Decode(nil, second, len(env), nil); !errors.Is(err, errRef) {
		t.Errorf("a series not sent: %v, want %v", err, errRef)
	}
	for i, m := range [][]byte{first, second} {
		if got, err := d.Decode(nil, m, len(env), nil); err != nil || !bytes.Equal(got, env) {
			t.Errorf("message %d: %v", i, err)
		}
	}
}

// TestRoundTripTagEdges: fields at the edge of one-byte tags (15, 16),
// tags written in more bytes than they need, and the largest field
// number, of every wire type, in a span, round-trip.
func TestRoundTripTagEdges(t *testing.T) {
	var span pbtest.PB
	for _, num := range []int{1, 2, 15, 16, 1<<29 - 1} {
		span = span.Varint(num, 300).Fixed64(num, 7).Str(num, "").Fixed32(num, 9) // "": field 15 is a span's status
	}
	for _, tag := range [][]byte{{0x8a, 0x00}, {0x92, 0x80, 0x00}, {0x82, 0x81, 0x00}} {
		span = append(append(span, tag...), 0)
	}
	env := pbtest.PB{}.Varint(1, 1).Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.Msg(2, span)))
	enc := NewEncoder(Traces).Append(nil, env)
	if enc[0] != flagColumns {
		t.Fatal("sent untransformed")
	}
	if got, err := NewDecoder(Traces).Decode(nil, enc, len(env), nil); err != nil || !bytes.Equal(got, env) {
		t.Fatalf("%v", err)
	}
	sameDecode(t, Traces, len(env), enc)
}

// TestDecodeGrowthBoundedBySent: a message that declares the limit and
// sends a few columns is charged and allocated at most growRatio times
// what it sent, or twice what it decoded to (the buffer doubles past the
// hint as output is produced), before it is refused: the declared length
// alone holds nothing.
func TestDecodeGrowthBoundedBySent(t *testing.T) {
	env := envelopes(t, "traces")[0]
	enc := NewEncoder(Traces).Append(nil, env)
	_, k := binary.Uvarint(enc[1:])
	const limit = 64 << 20
	lie := append(binary.AppendUvarint([]byte{flagColumns}, limit), enc[1+k:]...)
	charged := 0
	out, err := NewDecoder(Traces).Decode(nil, lie, limit, func(n int) error { charged += n; return nil })
	if err == nil {
		t.Fatal("a message that declares more than it decodes to is accepted")
	}
	bound := max(growRatio*(len(lie)-1), 2*len(env), chargeStep)
	if charged > bound || cap(out) > bound {
		t.Fatalf("declared %d, sent %d bytes (%d decoded): charged %d, allocated %d, over %d", limit, len(lie), len(env), charged, cap(out), bound)
	}
	// The honest message: charged once for its output, as before.
	charged = 0
	if out, err = NewDecoder(Traces).Decode(nil, enc, limit, func(n int) error { charged += n; return nil }); err != nil || !bytes.Equal(out, env) {
		t.Fatalf("the honest message: %v", err)
	}
	if charged < len(env) || charged > len(env)+chargeStep {
		t.Fatalf("the honest message charged %d for %d bytes", charged, len(env))
	}
}
