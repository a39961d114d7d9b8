package otlpcolumns

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// envelopes returns the golden payloads of a signal wrapped as the export
// stream wraps them.
func envelopes(tb testing.TB, prefix string) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(pbtest.GoldenDir(tb), prefix+"*.pb"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no golden payloads for %s", prefix)
	}
	var out [][]byte
	for _, f := range files {
		env, err := otlp.AppendEnvelope(nil, 7, pbtest.Golden(tb, filepath.Base(f)))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, env)
	}
	return out
}

var signals = []struct {
	name string
	sig  Signal
}{{"traces", Traces}, {"metrics", Metrics}, {"logs", Logs}}

func roundTrip(t *testing.T, sig Signal, msg []byte) []byte {
	t.Helper()
	enc := NewEncoder(sig).Append(nil, msg)
	if len(enc) > MaxEncodedLen(len(msg)) {
		t.Fatalf("encoded %d bytes, more than MaxEncodedLen(%d) = %d", len(enc), len(msg), MaxEncodedLen(len(msg)))
	}
	charged := 0
	got, err := NewDecoder(sig).Decode([]byte("x"), enc, len(msg), func(n int) error { charged += n; return nil })
	if err != nil {
		t.Fatalf("cannot decode: %v", err)
	}
	if !bytes.Equal(got[1:], msg) || got[0] != 'x' {
		t.Fatalf("round trip changed the message (%d bytes -> %d)", len(msg), len(got)-1)
	}
	if charged < len(msg) || charged > len(msg)+chargeStep {
		t.Fatalf("charged %d for %d bytes of output", charged, len(msg))
	}
	return enc
}

// TestRoundTripGolden: every golden payload is transformed (not sent
// untransformed) and rebuilt byte for byte.
func TestRoundTripGolden(t *testing.T) {
	for _, s := range signals {
		for i, env := range envelopes(t, s.name) {
			enc := roundTrip(t, s.sig, env)
			if enc[0] != flagColumns {
				t.Errorf("%s payload %d sent untransformed", s.name, i)
			}
		}
	}
}

// TestRoundTripOddities: what protobuf allows but the schema does not
// name (unknown fields, wrong wire types, unpacked repeated fields,
// non-minimal varints, fields out of order) still round-trips, most of it
// transformed; what the transform cannot walk is sent untransformed.
func TestRoundTripOddities(t *testing.T) {
	PB := pbtest.PB{}
	span := PB.Fixed64(8, 2000).Str(5, "late-start").Fixed64(7, 1000). // end before start
										Varint(99, 5). // unknown field
										Fixed32(5, 3). // name as a fixed32
										Str(1, "0123456789abcdef")
	nonMinimal := append(append(pbtest.PB{}, span...), 0x9a, 0x80, 0x00, 0x02, 'h', 'i') // field 3 (trace_state) with a 3-byte tag
	attr := pbtest.StrAttr("k", "v")
	longLen := pbtest.PB{}.Tag(9, 2).Append(pbtest.PB{0x80 | byte(len(attr)), 0x00}).Append(attr) // a 2-byte length for a short message
	spans := pbtest.PB{}.Msg(2, nonMinimal.Append(longLen))
	env := pbtest.PB{}.Varint(1, 3).Msg(2, pbtest.PB{}.Msg(2, spans))
	if enc := roundTrip(t, Traces, env); enc[0] != flagColumns {
		t.Errorf("oddities sent untransformed")
	}
	group := pbtest.PB{}.Varint(1, 3).Msg(2, pbtest.PB{}.Tag(5, 3).Tag(5, 4))
	if enc := roundTrip(t, Traces, group); enc[0] != flagRaw {
		t.Errorf("a group was transformed")
	}
	bad := pbtest.PB{}.Varint(1, 3).Tag(2, 2).Append(pbtest.PB{5, 1})
	if enc := roundTrip(t, Traces, bad); enc[0] != flagRaw {
		t.Errorf("a cut message was transformed")
	}
	deep := pbtest.PB{}.Str(1, "v")
	for range maxDepth {
		deep = pbtest.PB{}.Msg(5, pbtest.PB{}.Msg(1, deep)) // array_value.values
	}
	deepEnv := pbtest.PB{}.Msg(2, pbtest.PB{}.Msg(1, pbtest.PB{}.Msg(1, pbtest.PB{}.Str(1, "k").Msg(2, deep))))
	if enc := roundTrip(t, Traces, deepEnv); enc[0] != flagRaw {
		t.Errorf("a message nested past maxDepth was transformed")
	}
	for _, sig := range []Signal{Profiles, 0, 200} {
		if enc := roundTrip(t, sig, env); enc[0] != flagRaw {
			t.Errorf("signal %d transformed", sig)
		}
	}
	roundTrip(t, Traces, nil)
}

// TestParentReferences: parent span ids and link span ids that are span
// ids of the request, before or after them, are sent as references (a
// byte or two, not nine), and the request is rebuilt exactly.
func TestParentReferences(t *testing.T) {
	id := func(i int) string { return string(pbtest.IDs(8, byte(i))) }
	trace := string(pbtest.IDs(16, 1))
	var spans pbtest.PB
	const n = 40
	for i := range n {
		span := pbtest.PB{}.Str(1, trace).Str(2, id(i))
		if i > 0 {
			span = span.Str(4, id((i*7)%n)) // before or after it
		}
		span = span.Str(5, "op").Fixed64(7, uint64(1000+i)).Fixed64(8, uint64(2000+i))
		if i%5 == 0 {
			span = span.Msg(13, pbtest.PB{}.Str(1, trace).Str(2, id(n-1-i)))
		}
		spans = spans.Msg(2, span)
	}
	env := pbtest.PB{}.Varint(1, 9).Msg(2, pbtest.PB{}.Msg(2, spans))
	enc := roundTrip(t, Traces, env)
	if enc[0] != flagColumns {
		t.Fatal("sent untransformed")
	}
	// Without references the parents and links alone would take 9 bytes
	// each beyond the span ids.
	noRefs := len(env) - (n-1+n/5)*9
	if len(enc) > noRefs {
		t.Errorf("encoded %d bytes, want under %d with references", len(enc), noRefs)
	}
}

// TestDecoderHolds: the decoder's index of the reference column stays
// within DecoderCost whatever the column claims.
func TestDecoderHolds(t *testing.T) {
	spans := pbtest.PB{}
	for range 3 * maxRefs / 2 {
		spans = spans.Msg(2, pbtest.PB{}.Str(2, "")) // empty span ids: 1 byte each in the column
	}
	env := pbtest.PB{}.Msg(2, pbtest.PB{}.Msg(2, spans))
	d := NewDecoder(Traces)
	roundTrip(t, Traces, env)
	if _, err := d.Decode(nil, NewEncoder(Traces).Append(nil, env), len(env), nil); err != nil {
		t.Fatal(err)
	}
	if held := int64(cap(d.offs)) * 4; held > DecoderCost {
		t.Errorf("index holds %d bytes, DecoderCost is %d", held, DecoderCost)
	}
}

// TestDecodeLimits: a declared length over the limit is refused before any
// output; output never passes the declared length; a refused charge is
// returned as it is.
func TestDecodeLimits(t *testing.T) {
	env := envelopes(t, "traces_500x10")[0]
	enc := NewEncoder(Traces).Append(nil, env)
	// A new decoder each time: an error ends a decoder's stream.
	if _, err := NewDecoder(Traces).Decode(nil, enc, len(env)-1, nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit below the length: %v, want ErrTooLarge", err)
	}
	if _, err := NewDecoder(Traces).Decode(nil, append([]byte{flagRaw}, env...), len(env)-1, nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("raw over the limit: %v, want ErrTooLarge", err)
	}
	refuse := errors.New("no room")
	charged := 0
	_, err := NewDecoder(Traces).Decode(nil, enc, len(env), func(n int) error {
		if charged+n > 100<<10 {
			return refuse
		}
		charged += n
		return nil
	})
	if err != refuse {
		t.Errorf("refused charge: %v, want it as it is", err)
	}
	// A declared length that the columns do not fill, or overflow.
	for _, delta := range []int{-1, 1} {
		mangled := append([]byte{flagColumns}, binary.AppendUvarint(nil, uint64(len(env)+delta))...)
		_, k := binary.Uvarint(enc[1:])
		mangled = append(mangled, enc[1+k:]...)
		if _, err := NewDecoder(Traces).Decode(nil, mangled, 2*len(env), nil); !errors.Is(err, ErrCorrupt) {
			t.Errorf("declared length %+d: %v, want ErrCorrupt", delta, err)
		}
	}
	// Every prefix of the encoding is refused (never a panic).
	for n := 0; n < len(enc); n += 1 + n/64 {
		if _, err := NewDecoder(Traces).Decode(nil, enc[:n], len(env), nil); err == nil {
			t.Fatalf("prefix of %d bytes decoded", n)
		}
	}
}

func TestSchemasFit(t *testing.T) {
	for _, s := range signals {
		if n := schemas[s.sig].cols; n > maxCols || n < 10 {
			t.Errorf("%s: %d columns", s.name, n)
		}
	}
}

// streamTrip sends msgs through one encoder and one decoder, as a stream
// does, and reports the encodings' sizes.
func streamTrip(t *testing.T, sig Signal, msgs ...[]byte) []int {
	t.Helper()
	e, d := NewEncoder(sig), NewDecoder(sig)
	var sizes []int
	for i, m := range msgs {
		enc := e.Append(nil, m)
		got, err := d.Decode(nil, enc, len(m), nil)
		if err != nil {
			t.Fatalf("message %d: cannot decode: %v", i, err)
		}
		if !bytes.Equal(got, m) {
			t.Fatalf("message %d changed (%d bytes -> %d)", i, len(m), len(got))
		}
		sizes = append(sizes, len(enc))
	}
	return sizes
}

// TestSeriesAcrossMessages: the attributes of a data point the stream has
// sent before are sent as a reference; untransformed messages between them
// leave encoder and decoder agreeing.
func TestSeriesAcrossMessages(t *testing.T) {
	point := func(v uint64, attrs ...pbtest.PB) pbtest.PB {
		p := pbtest.PB{}.Fixed64(3, 1000+v).Fixed64(6, v)
		for _, a := range attrs {
			p = p.Msg(7, a)
		}
		return p
	}
	req := func(v uint64) []byte {
		var m pbtest.PB
		for i := range 20 {
			m = m.Msg(1, point(v+uint64(i), pbtest.StrAttr("service.name", "checkout"), pbtest.IntAttr("series", int64(i)), pbtest.StrAttr("a-long-attribute-key", "and its long value")))
		}
		m = pbtest.PB{}.Str(1, "requests").Msg(7, m)
		return pbtest.PB{}.Varint(1, v).Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.Msg(2, m)))
	}
	group := pbtest.PB{}.Varint(1, 3).Msg(2, pbtest.PB{}.Tag(5, 3).Tag(5, 4))
	sizes := streamTrip(t, Metrics, req(1), group, req(2), req(3), append(req(4), 0xff), req(5))
	if sizes[2] > sizes[0]/2 {
		t.Errorf("the second request took %d bytes, the first %d: its series were not referenced", sizes[2], sizes[0])
	}
}

// FuzzRoundTrip: any bytes, as a message of any signal, round-trip.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range signals {
		for _, env := range envelopes(f, s.name) {
			if len(env) < 64<<10 {
				f.Add(env, uint8(s.sig))
			}
		}
	}
	f.Fuzz(func(t *testing.T, msg []byte, sig uint8) {
		roundTrip(t, Signal(sig%5), msg)
		// And on a stream: the same bytes again, and their halves.
		streamTrip(t, Signal(sig%5), msg, msg[:len(msg)/2], msg, msg[len(msg)/2:], msg)
	})
}

// FuzzDecode: the decoder on any bytes never panics, never writes more
// than the limit, and never returns without an error output of another
// length than declared.
func FuzzDecode(f *testing.F) {
	for _, s := range signals {
		for _, env := range envelopes(f, s.name) {
			if len(env) < 64<<10 {
				f.Add(NewEncoder(s.sig).Append(nil, env), uint8(s.sig))
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, sig uint8) {
		const limit = 1 << 16
		charged := 0
		d := NewDecoder(Signal(sig % 5))
		// Twice: the second time with the series the first one left.
		d.Decode(nil, src, limit, nil)
		out, err := d.Decode(nil, src, limit, func(n int) error { charged += n; return nil })
		for i, c := range d.cols {
			if c != nil || d.refCol != nil || d.refLen != nil || d.st != "" {
				t.Fatalf("the decoder holds its input (column %d) after Decode", i)
			}
		}
		if len(out) > limit {
			t.Fatalf("%d bytes of output over the limit %d", len(out), limit)
		}
		if charged < len(out) || charged > limit {
			t.Fatalf("charged %d for %d bytes of output (limit %d)", charged, len(out), limit)
		}
		if len(src) > 0 && src[0] == flagColumns && cap(out) > charged {
			// The capacity walk writes within (more): allocated only
			// once charged.
			t.Fatalf("allocated %d bytes of output, charged %d", cap(out), charged)
		}
		if err == nil && !strings.HasPrefix(string(src), "\x00") {
			// A decoded message encodes to something that decodes to it
			// (on a new stream).
			again, err := NewDecoder(Signal(sig%5)).Decode(nil, NewEncoder(Signal(sig%5)).Append(nil, out), limit, nil)
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("decoded message does not round-trip: %v", err)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	env := envelopes(b, "traces_500x10")[0]
	enc := NewEncoder(Traces).Append(nil, env)
	d := NewDecoder(Traces)
	var out []byte
	b.SetBytes(int64(len(env)))
	b.ReportAllocs()
	for b.Loop() {
		// The message is a stream's first: the decoder's series table
		// as it was before it (decoding it again on the same stream
		// would read its references against the runs it added).
		d.sets = seriesTable{arena: d.sets.arena[:0], offs: d.sets.offs[:0]}
		var err error
		if out, err = d.Decode(out[:0], enc, len(env), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/500, "ns/span")
}

func BenchmarkEncode(b *testing.B) {
	env := envelopes(b, "traces_500x10")[0]
	e := NewEncoder(Traces)
	var out []byte
	b.SetBytes(int64(len(env)))
	b.ReportAllocs()
	for b.Loop() {
		out = e.Append(out[:0], env)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/500, "ns/span")
}

// TestSeriesTableBounded: a stream that sends ever new series fills the
// decoder's table to its bounds and no further (DecoderCost counts them),
// and what it sends after is still rebuilt exactly, in full.
func TestSeriesTableBounded(t *testing.T) {
	e, d := NewEncoder(Metrics), NewDecoder(Metrics)
	for req := range 40 {
		var m pbtest.PB
		for i := range 400 {
			p := pbtest.PB{}.Fixed64(3, 1).Fixed64(6, 2).Msg(7, pbtest.StrAttr("k", strings.Repeat("x", 60)+string(rune('a'+req%26))+string(rune('a'+i%26))+string(rune('a'+i/26))+string(rune('a'+req/26))))
			m = m.Msg(1, p)
		}
		env := pbtest.PB{}.Varint(1, uint64(req)).Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.Str(1, "m").Msg(5, m))))
		got, err := d.Decode(nil, e.Append(nil, env), len(env), nil)
		if err != nil || !bytes.Equal(got, env) {
			t.Fatalf("request %d: %v", req, err)
		}
	}
	if len(d.sets.arena) == 0 || cap(d.sets.arena) > maxSeriesBytes || cap(d.sets.offs) > maxSeries {
		t.Fatalf("series table holds %d bytes (cap %d) and %d runs (cap %d)", len(d.sets.arena), cap(d.sets.arena), len(d.sets.offs), cap(d.sets.offs))
	}
	if len(d.sets.arena) < maxSeriesBytes*9/10 {
		t.Fatalf("series table %d bytes: the test did not fill it", len(d.sets.arena))
	}
}
