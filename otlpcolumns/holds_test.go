package otlpcolumns

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
)

// TestDecoderKeepsNoInput: between messages the decoder holds nothing of
// the message it decoded: its columns are slices of the caller's src (the
// stream's zstd output, up to MaxEncodedLen of the limit, 96 MiB at the
// default 64 MiB), which DecoderCost does not count and which the caller
// releases, and its charge with it, once the request is done. A decoder
// that kept them would pin each idle stream's last message uncharged.
func TestDecoderKeepsNoInput(t *testing.T) {
	for _, s := range signals {
		env := envelopes(t, s.name)[0]
		d := NewDecoder(s.sig)
		wp := func() weak.Pointer[byte] {
			src := NewEncoder(s.sig).Append(nil, env)
			if src[0] != flagColumns {
				t.Fatalf("%s: sent untransformed", s.name)
			}
			if _, err := d.Decode(nil, src, len(env), nil); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			return weak.Make(&src[len(src)-1])
		}()
		runtime.GC()
		if wp.Value() != nil {
			t.Errorf("%s: the decoder still holds the message it decoded", s.name)
		}
		runtime.KeepAlive(d)
	}
}

// TestDecoderSize: DecoderCost's estimate of the Decoder itself holds.
func TestDecoderSize(t *testing.T) {
	if n := unsafe.Sizeof(Decoder{}); n > unsafeSizeofDecoder {
		t.Errorf("unsafe.Sizeof(Decoder{}) = %d, DecoderCost counts %d", n, unsafeSizeofDecoder)
	}
}

// TestDecoderCostHolds: a stream whose requests carry more span ids,
// trace ids, forward parents and new names than the decoder indexes
// leaves it holding no more than DecoderCost, and is still rebuilt
// exactly.
func TestDecoderCostHolds(t *testing.T) {
	e, d := NewEncoder(Traces), NewDecoder(Traces)
	const n = maxRefs + maxRefs/4
	for req := range 3 {
		var spans pbtest.PB
		for i := range n {
			id := binary.BigEndian.AppendUint64(nil, uint64(req*n+i))
			parent := binary.BigEndian.AppendUint64(nil, uint64(req*n+(i+1)%n)) // the next span: forward
			trace := binary.BigEndian.AppendUint64(bytes.Repeat([]byte{byte(req)}, 8), uint64(i/2))
			spans = spans.Msg(2, pbtest.PB{}.Str(1, string(trace)).Str(2, string(id)).Str(4, string(parent)).
				Str(5, fmt.Sprintf("%070d", req*n+i)).Fixed64(7, uint64(1e9+i)).Fixed64(8, uint64(2e9+i)))
		}
		env := pbtest.PB{}.Varint(1, uint64(req)).Msg(2, pbtest.PB{}.Msg(2, spans))
		enc := e.Append(nil, env)
		if enc[0] != flagColumns {
			t.Fatal("sent untransformed")
		}
		got, err := d.Decode(nil, enc, len(env), nil)
		if err != nil || !bytes.Equal(got, env) {
			t.Fatalf("request %d: %v", req, err)
		}
	}
	held := int64(unsafe.Sizeof(*d)) +
		int64(cap(d.offs)+cap(d.loffs)+cap(d.backs))*4 + int64(cap(d.backLen)) +
		int64(cap(d.starts)+cap(d.traceStarts))*8 + int64(cap(d.childStart))*int64(unsafe.Sizeof(childStart{})) +
		int64(cap(d.sets.arena)) + int64(cap(d.sets.offs))*4 + int64(cap(d.sets.buckets))
	if held > DecoderCost {
		t.Errorf("the decoder holds %d bytes, DecoderCost is %d", held, DecoderCost)
	}
	if len(d.sets.arena) < maxSeriesBytes*9/10 || len(d.offs) <= maxRefs || len(d.childStart) < maxRefs*9/10 {
		t.Errorf("the test did not fill the tables: series %d bytes, %d refs indexed, %d children", len(d.sets.arena), len(d.offs), len(d.childStart))
	}
	t.Logf("held %d of DecoderCost %d", held, DecoderCost)
}

// TestDecodeChargesWhatItAllocates: the output buffer the decoder grows is
// charged before it is allocated, so that a message that declares more
// than it decodes to (or fails half way) holds no memory beyond its
// charge, and that charge is at most an eighth over what it declared (the
// room a stream's next, slightly larger message decodes into).
func TestDecodeChargesWhatItAllocates(t *testing.T) {
	var spans pbtest.PB
	for i := range 20900 { // just over 1 MiB: past a doubling of the output buffer
		spans = spans.Msg(2, pbtest.PB{}.Str(2, string(binary.BigEndian.AppendUint64(nil, uint64(i)))).Str(5, fmt.Sprintf("span %d with a name of some length", i)))
	}
	env := pbtest.PB{}.Varint(1, 1).Msg(2, pbtest.PB{}.Msg(2, spans))
	enc := NewEncoder(Traces).Append(nil, env)
	_, k := binary.Uvarint(enc[1:])
	for _, declared := range []int{len(env), len(env) + 1, 2 * len(env), 4 * len(env)} {
		lie := append(binary.AppendUvarint([]byte{flagColumns}, uint64(declared)), enc[1+k:]...)
		charged := 0
		out, err := NewDecoder(Traces).Decode(nil, lie, 8*len(env), func(n int) error { charged += n; return nil })
		if (err == nil) != (declared == len(env)) {
			t.Fatalf("declared %d for %d: %v", declared, len(env), err)
		}
		if cap(out) > charged {
			t.Errorf("declared %d for %d bytes: allocated %d, charged %d", declared, len(env), cap(out), charged)
		}
		if charged > declared+declared/growthRoom {
			t.Errorf("declared %d: charged %d, more than an eighth over", declared, charged)
		}
	}
}

// TestDecoderErrorsStick: after an error (here a charge refused half way
// through a message whose series the table has started to take) the
// decoder refuses every later message with the same error, rather than
// decode them against a table the encoder does not have.
func TestDecoderErrorsStick(t *testing.T) {
	e, d := NewEncoder(Metrics), NewDecoder(Metrics)
	// Points of series from..to-1, repeated times.
	points := func(m pbtest.PB, v uint64, from, to, times int) pbtest.PB {
		for range times {
			for i := from; i < to; i++ {
				m = m.Msg(1, pbtest.PB{}.Msg(7, pbtest.StrAttr("series", fmt.Sprintf("%0100d", i))).Fixed64(3, v))
			}
		}
		return m
	}
	req := func(v uint64, m pbtest.PB) []byte {
		return pbtest.PB{}.Varint(1, v).Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.Str(1, "m").Msg(5, m))))
	}
	// The first message sends 2,000 series; the second 200 new ones,
	// then the first's ten times over: references (and a time, the same
	// in each point), so that it decodes
	// to more than growRatio times its columns and its output is
	// charged as it grows, the refusal coming after the new series.
	first := req(1, points(nil, 1, 0, 2000, 1))
	second := req(2, points(points(nil, 2, 2000, 2200, 1), 2, 0, 2000, 10))
	third := req(3, points(nil, 3, 0, 2000, 1))
	enc1, enc2, enc3 := e.Append(nil, first), e.Append(nil, second), e.Append(nil, third)
	if _, err := d.Decode(nil, enc1, len(first), nil); err != nil {
		t.Fatal(err)
	}
	if len(second) <= growRatio*len(enc2) {
		t.Fatalf("the second message decodes to %d bytes, %d of columns: within growRatio, charged at once", len(second), len(enc2))
	}
	refuse := errors.New("no room")
	charged := 0
	if _, err := d.Decode(nil, enc2, len(second), func(n int) error {
		if charged += n; charged > 3*len(second)/4 {
			return refuse
		}
		return nil
	}); err != refuse {
		t.Fatalf("second message: %v, want the refusal", err)
	}
	if len(d.sets.offs) <= 2000 {
		t.Fatal("the refusal came before any new series: the test shows nothing")
	}
	if out, err := d.Decode(nil, enc3, len(third), nil); err != refuse {
		t.Fatalf("after the refusal: %v (%d bytes, equal to the request: %v), want the refusal again", err, len(out), bytes.Equal(out, third))
	}
}

// BenchmarkDecodeNameReferences: a request of spans whose names repeat a
// run of empty names that fills the series table, 60 times: the output
// (63 MB from 321 bytes of columns) costs its copy, not a walk of each
// run again.
func BenchmarkDecodeNameReferences(b *testing.B) {
	var names pbtest.PB
	for range (maxSeriesBytes - 64) / 2 {
		names = names.Str(5, "")
	}
	wrap := func(n int) []byte {
		var s pbtest.PB
		for range n {
			s = s.Msg(2, names)
		}
		return pbtest.PB{}.Varint(1, 1).Msg(2, pbtest.PB{}.Msg(2, s))
	}
	first, bomb := wrap(1), wrap(60)
	e := NewEncoder(Traces)
	encFirst, encBomb := e.Append(nil, first), e.Append(nil, bomb)
	d := NewDecoder(Traces)
	if _, err := d.Decode(nil, encFirst, len(first), nil); err != nil {
		b.Fatal(err)
	}
	table := d.sets
	out := make([]byte, 0, len(bomb))
	b.SetBytes(int64(len(bomb)))
	for b.Loop() {
		d.sets.offs, d.sets.buckets, d.sets.last = table.offs[:1], table.buckets[:1], table.last
		var err error
		if out, err = d.Decode(out[:0], encBomb, len(bomb), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEncoderCostHolds: a stream of messages that fill every table of the
// encoder to its bound (more span ids, trace ids and forward parents than
// it indexes, more series than its table takes, by count and by bytes) and
// that are larger than maxKept leaves the encoder holding no more than
// EncoderCost of the heap, and the messages are still rebuilt exactly.
func TestEncoderCostHolds(t *testing.T) {
	if n := unsafe.Sizeof(Encoder{}); n > unsafeSizeofEncoder {
		t.Errorf("unsafe.Sizeof(Encoder{}) = %d, EncoderCost counts %d", n, unsafeSizeofEncoder)
	}
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	before := heap()
	e := NewEncoder(Traces)
	d := NewDecoder(Traces)
	size := 0
	func() {
		const n = maxRefs + maxRefs/4
		for req := range 4 {
			var spans pbtest.PB
			for i := range n {
				id := binary.BigEndian.AppendUint64(nil, uint64(req*n+i))
				parent := binary.BigEndian.AppendUint64(nil, uint64(req*n+(i+1)%n)) // forward
				tr := uint64(i)                                                     // odd requests (the last): every span its own trace
				if req%2 == 0 {
					tr = uint64(i / 2)
				}
				trace := binary.BigEndian.AppendUint64(bytes.Repeat([]byte{byte(req)}, 8), tr)
				span := pbtest.PB{}.Str(1, string(trace)).Str(2, string(id)).Str(4, string(parent)).
					Fixed64(7, uint64(1e9+i)).Fixed64(8, uint64(2e9+i))
				if req < 2 {
					// New names, long: the series table fills by bytes.
					span = span.Str(5, fmt.Sprintf("%0200d", req*n+i))
				} else {
					// New attributes, short: the table fills by count.
					span = span.Msg(9, pbtest.IntAttr("k", int64(req*n+i)))
				}
				spans = spans.Msg(2, span)
			}
			env := pbtest.PB{}.Varint(1, uint64(req)).Msg(2, pbtest.PB{}.Msg(2, spans))
			size = max(size, len(env))
			enc := e.Append(nil, env)
			if enc[0] != flagColumns {
				t.Fatal("sent untransformed")
			}
			got, err := d.Decode(nil, enc, len(env), nil)
			if err != nil || !bytes.Equal(got, env) {
				t.Fatalf("request %d: %v", req, err)
			}
		}
	}()
	d = nil
	held := heap() - before
	runtime.KeepAlive(e)
	if size <= maxKept {
		t.Errorf("the largest message is %d bytes, not past maxKept %d", size, maxKept)
	}
	if len(e.sets.offs) < maxSeries*9/10 && len(e.sets.arena) < maxSeriesBytes*9/10 {
		t.Errorf("the test did not fill the series table: %d runs, %d bytes", len(e.sets.offs), len(e.sets.arena))
	}
	if len(e.index) < maxRefs*9/10 || len(e.backs) < maxRefs*9/10 {
		t.Errorf("the test did not fill the maps: %d refs, %d backs", len(e.index), len(e.backs))
	}
	kept := cap(e.refs) * int(unsafe.Sizeof(pendingRef{}))
	for _, c := range e.cols {
		kept += cap(c)
	}
	if kept > maxKept {
		t.Errorf("the encoder keeps %d bytes of buffers after a message of %d, more than maxKept %d", kept, size, maxKept)
	}
	if held > EncoderCost {
		t.Errorf("the encoder holds %d bytes of the heap, EncoderCost is %d", held, EncoderCost)
	}
	t.Logf("held %d of EncoderCost %d (messages up to %d bytes)", held, EncoderCost, size)
}

// TestEncoderKeepsNoInput: between messages the encoder holds nothing of
// the message it encoded, sent untransformed or not: EncoderCost does not
// count the caller's message (a forward destination's record, up to
// 64 MiB), which the caller may release once it is sent. Its list of
// parent span ids met by the walk points into the message: a walk that
// gave up (here on a group after a parent span id) left it so.
func TestEncoderKeepsNoInput(t *testing.T) {
	e := NewEncoder(Traces)
	span := func(group bool) pbtest.PB {
		s := pbtest.PB{}.Str(2, "\x00\x00\x00\x00\x00\x00\x00\x01").Str(4, "\x00\x00\x00\x00\x00\x00\x00\x02")
		if group {
			s = s.Tag(17, 3).Tag(17, 4) // a group: the walk gives up
		}
		return s.Str(5, strings.Repeat("n", 1<<20))
	}
	for _, group := range []bool{true, false} {
		wp := func() weak.Pointer[byte] {
			msg := pbtest.PB{}.Varint(1, 1).Msg(2, pbtest.PB{}.Msg(2, pbtest.PB{}.Msg(2, span(group))))
			enc := e.Append(nil, msg)
			if want := map[bool]byte{true: flagRaw, false: flagColumns}[group]; enc[0] != want {
				t.Fatalf("group %v: flag %d, want %d", group, enc[0], want)
			}
			return weak.Make(&msg[len(msg)-1])
		}()
		runtime.GC()
		if wp.Value() != nil {
			t.Errorf("group %v: the encoder still holds the message it encoded", group)
		}
	}
	runtime.KeepAlive(e)
}
