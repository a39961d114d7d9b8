package otlpcolumns

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

type P = pbtest.PB

// checkOf is otlpdecode's check of sig's requests.
func checkOf(sig Signal) func([]byte, *otlpdecode.Options) (otlpdecode.Result, error) {
	switch sig {
	case Traces:
		return otlpdecode.CheckTraces
	case Metrics:
		return otlpdecode.CheckMetrics
	}
	return otlpdecode.CheckLogs
}

// sound fails t unless otlpdecode's check of out, an envelope the decoder
// wrote and vouched for with v, finds what v promises: no error, nothing
// rejected, no *_strindex ignored, v.Items items, with the nesting bound
// v.MaxAnyValueDepth as well as the default one.
func sound(t testing.TB, sig Signal, out []byte, v Vouch) {
	t.Helper()
	if v.MaxAnyValueDepth < 1 || v.MaxAnyValueDepth > otlpdecode.DefaultMaxAnyValueDepth {
		t.Fatalf("vouched with a nesting bound of %d", v.MaxAnyValueDepth)
	}
	_, req, err := otlp.UnwrapEnvelope(bytes.Clone(out))
	if err != nil {
		t.Fatalf("vouched for an envelope that does not unwrap: %v", err)
	}
	for _, depth := range []int{v.MaxAnyValueDepth, 0} {
		res, err := checkOf(sig)(req, &otlpdecode.Options{MaxAnyValueDepth: depth})
		if err != nil || res.Rejected != 0 || res.Items != v.Items || res.IgnoredStrindex != 0 {
			t.Fatalf("vouched for %+v, the checker (depth %d) finds %+v, %v", v, depth, res, err)
		}
	}
}

// decodeVouched decodes encs, one stream's messages, on one decoder,
// holds every message it vouches for to sound and returns which vouched.
func decodeVouched(t testing.TB, sig Signal, encs [][]byte) []bool {
	return decodeVouchedWithin(t, sig, 64<<20, encs)
}

// decodeVouchedWithin is decodeVouched with the decoder's limit.
func decodeVouchedWithin(t testing.TB, sig Signal, limit int, encs [][]byte) []bool {
	t.Helper()
	d := NewDecoder(sig)
	var got []bool
	for _, enc := range encs {
		out, err := d.Decode(nil, enc, limit, nil)
		if err != nil {
			_, ok := d.Vouched()
			if ok {
				t.Fatalf("vouched after an error: %v", err)
			}
			return got
		}
		v, ok := d.Vouched()
		if ok {
			sound(t, sig, out, v)
		}
		got = append(got, ok)
	}
	return got
}

// encodeAll encodes envelopes on one stream.
func encodeAll(sig Signal, envs [][]byte) [][]byte {
	e := NewEncoder(sig)
	var encs [][]byte
	for _, m := range envs {
		encs = append(encs, e.Append(nil, m))
	}
	return encs
}

// demoSample returns the envelopes of the checked-in sample of the
// OpenTelemetry demo data (../shared/datasets, as published with the STEF
// benchmarks, Apache License 2.0) by signal: from the middle of each
// file, 24 SDK-sized trace requests (512 spans' resources a request) and
// 40 metric ones (a resource each), then two requests of 1,000 items of
// each (bench/internal/dataset.Cut); a zstd stream of records, each the
// signal's byte, a uvarint length and the plain request.
func demoSample(t testing.TB) map[Signal][][]byte {
	raw, err := os.ReadFile("testdata/demo-sample.zst")
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	if raw, err = dec.DecodeAll(raw, nil); err != nil {
		t.Fatal(err)
	}
	out := map[Signal][][]byte{}
	for id := uint64(1); len(raw) > 0; id++ {
		sig := Signal(raw[0])
		l, k := binary.Uvarint(raw[1:])
		if k <= 0 || l > uint64(len(raw)-1-k) {
			t.Fatal("testdata/demo-sample.zst: bad record")
		}
		env, err := otlp.AppendEnvelope(nil, id, raw[1+k:1+k+int(l)])
		if err != nil {
			t.Fatal(err)
		}
		out[sig] = append(out[sig], env)
		raw = raw[1+k+int(l):]
	}
	return out
}

// TestVouchDemoSample: every message of the demo data's sample, traces
// and metrics, SDK-sized and of 1,000 items, is vouched for (the win is in
// real data vouching), and soundly.
func TestVouchDemoSample(t *testing.T) {
	for sig, envs := range demoSample(t) {
		got := decodeVouched(t, sig, encodeAll(sig, envs))
		for i, ok := range got {
			if !ok {
				t.Errorf("signal %d: message %d of %d not vouched for", sig, i, len(envs))
			}
		}
		if len(got) != len(envs) {
			t.Fatalf("signal %d: %d of %d messages decoded", sig, len(got), len(envs))
		}
	}
}

// TestVouchLogs: a logs request as the SDKs send them (a body, attributes,
// ids, times, severity) is vouched for, and soundly.
func TestVouchLogs(t *testing.T) {
	var recs []P
	for i := range 50 {
		recs = append(recs, P{}.Fixed64(1, uint64(1e18+i)).Fixed64(11, uint64(1e18+i+1)).Varint(2, 9).Str(3, "INFO").
			Msg(5, P{}.Str(1, "a message")).Msg(6, pbtest.StrAttr("k", "v")).Msg(6, pbtest.IntAttr("n", -int64(i))).
			Fixed32(8, 1).Msg(9, pbtest.IDs(16, byte(i+1))).Msg(10, pbtest.IDs(8, byte(i+2))))
	}
	req := pbtest.Request(P{}.Msg(1, pbtest.StrAttr("service.name", "s")), P{}.Str(1, "scope"), recs)
	env, _ := otlp.AppendEnvelope(nil, 1, req)
	if got := decodeVouched(t, Logs, encodeAll(Logs, [][]byte{env, env})); len(got) != 2 || !got[0] || !got[1] {
		t.Fatalf("vouched: %v", got)
	}
}

// TestVouchGolden: the golden payloads (every field of every signal,
// invalid ids, all kinds of metrics) and random streams (fields shuffled,
// repeated, unknown) are vouched for soundly, wherever they are.
func TestVouchGolden(t *testing.T) {
	for _, s := range signals {
		var envs [][]byte
		envs = append(envs, envelopes(t, s.name)...)
		for seed := range 10 {
			g := &gen{r: rand.New(rand.NewPCG(uint64(seed), uint64(s.sig)))}
			for i := range 8 {
				envs = append(envs, g.request(s.sig, uint64(i)))
			}
		}
		n := 0
		for _, ok := range decodeVouched(t, s.sig, encodeAll(s.sig, envs)) {
			if ok {
				n++
			}
		}
		t.Logf("%s: %d of %d vouched for", s.name, n, len(envs))
	}
}

// vouchCases are requests that must not be vouched for, each beside one
// like it that is: each rule of the checker the decoder establishes, and
// each thing it does not look at. Removing a rule's check from the
// generated walks (gen_test.go, genRuleEnd, genFieldRule) fails its case.
var vouchCases = []struct {
	name      string
	sig       Signal
	bad, good P
}{
	{"span without trace_id", Traces, span(P{}.Msg(2, pbtest.IDs(8, 1))), span(P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 1)))},
	{"span trace_id 15 bytes", Traces, span(P{}.Msg(1, pbtest.IDs(15, 1)).Msg(2, pbtest.IDs(8, 1))), span(P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 1)))},
	{"span trace_id all zeroes", Traces, span(P{}.Msg(1, make(P, 16)).Msg(2, pbtest.IDs(8, 1))), span(P{}.Msg(1, pbtest.IDs(16, 0)).Msg(2, pbtest.IDs(8, 1)))},
	{"span two trace_ids, the last invalid", Traces, span(P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 1)).Msg(1, make(P, 16))),
		span(P{}.Msg(1, pbtest.IDs(16, 2)).Msg(2, pbtest.IDs(8, 1)).Msg(1, pbtest.IDs(16, 1)))},
	{"span without span_id", Traces, span(P{}.Msg(1, pbtest.IDs(16, 1))), span(P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 1)))},
	{"span span_id all zeroes", Traces, span(P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, make(P, 8))), span(P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 0)))},
	{"span two span_ids, the last 9 bytes", Traces, span(P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 1)).Msg(2, pbtest.IDs(9, 1))),
		span(P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 2)).Msg(2, pbtest.IDs(8, 1)))},
	{"span parent_span_id 7 bytes", Traces, span(ids().Msg(4, pbtest.IDs(7, 3))), span(ids().Msg(4, pbtest.IDs(8, 3)))},
	{"span parent another span's id", Traces, spans(ids(), ids2().Msg(4, pbtest.IDs(8, 2)).Msg(4, pbtest.IDs(5, 2))),
		spans(ids(), ids2().Msg(4, P{}).Msg(4, pbtest.IDs(8, 2)))},
	{"link trace_id 15 bytes", Traces, span(ids().Msg(13, P{}.Msg(1, pbtest.IDs(15, 1)).Msg(2, pbtest.IDs(8, 1)))),
		span(ids().Msg(13, P{}.Msg(1, make(P, 16)).Msg(2, make(P, 8))))},
	{"link without span_id", Traces, span(ids().Msg(13, P{}.Msg(1, pbtest.IDs(16, 1)))), span(ids().Msg(13, P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 1))))},
	{"link span_id another span's, then 3 bytes", Traces, spans(ids(), ids2().Msg(13, P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 2)).Msg(2, pbtest.IDs(3, 2)))),
		spans(ids(), ids2().Msg(13, P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, P{}).Msg(2, pbtest.IDs(8, 2))))},
	{"span flags of another wire type (a two-byte tag)", Traces, span(ids().Varint(16, 1)), span(ids().Fixed32(16, 1))},
	{"span unknown field (a two-byte tag)", Traces, span(ids().Varint(17, 1)), span(ids().Fixed32(16, 1).Varint(6, 1))},
	{"span flags' tag not minimal", Traces, span(ids().Append(P{0x85, 0x81, 0x00, 1, 0, 0, 0})), span(ids().Append(P{0x85, 0x01, 1, 0, 0, 0}))},
	{"span name of another wire type", Traces, span(ids().Varint(5, 1)), span(ids().Str(5, "x"))},
	{"attribute key_strindex", Traces, span(ids().Msg(9, pbtest.StrAttr("k", "v").Varint(3, 1))), span(ids().Msg(9, pbtest.StrAttr("k", "v")))},
	{"attribute string_value_strindex", Traces, span(ids().Msg(9, P{}.Str(1, "k").Msg(2, P{}.Varint(8, 1)))), span(ids().Msg(9, P{}.Str(1, "k").Msg(2, P{}.Varint(3, 1))))},
	{"attribute nested 130 deep", Traces, span(ids().Msg(9, P{}.Str(1, "k").Msg(2, nested(130)))), span(ids().Msg(9, P{}.Str(1, "k").Msg(2, nested(40))))},
	{"resource entity ref (cold)", Traces, resourced(P{}.Msg(3, P{}.Str(2, "t"))), resourced(P{}.Msg(1, pbtest.StrAttr("k", "v")))},
	{"histogram buckets without bounds", Metrics, metric(P{}.Msg(9, P{}.Msg(1, hpoint(2, 0)))), metric(P{}.Msg(9, P{}.Msg(1, hpoint(2, 1))))},
	{"histogram buckets in two runs", Metrics, metric(P{}.Msg(9, P{}.Msg(1, hpoint(2, 1).Append(packed(6, 1))))), metric(P{}.Msg(9, P{}.Msg(1, hpoint(1, 1).Append(packed(6, 1)))))},
	{"histogram bounds not of 8 bytes", Metrics, metric(P{}.Msg(9, P{}.Msg(1, hpoint(0, 0).Msg(7, make(P, 9))))), metric(P{}.Msg(9, P{}.Msg(1, hpoint(0, 0).Msg(7, make(P, 8)))))},
	{"metric with two data fields", Metrics, metric(P{}.Msg(5, P{}.Msg(1, npoint())).Msg(7, P{}.Msg(1, npoint()))), metric(P{}.Msg(5, P{}.Msg(1, npoint()).Msg(1, npoint())))},
	{"exemplar trace_id 3 bytes", Metrics, metric(P{}.Msg(5, P{}.Msg(1, npoint().Msg(5, P{}.Fixed64(2, 1).Msg(5, pbtest.IDs(3, 1)))))),
		metric(P{}.Msg(5, P{}.Msg(1, npoint().Msg(5, P{}.Fixed64(2, 1).Msg(5, pbtest.IDs(16, 1)).Msg(4, pbtest.IDs(8, 1))))))},
	{"histogram exemplar span_id 7 bytes", Metrics, metric(P{}.Msg(9, P{}.Msg(1, hpoint(0, 0).Msg(8, P{}.Msg(4, pbtest.IDs(7, 1)))))),
		metric(P{}.Msg(9, P{}.Msg(1, hpoint(0, 0).Msg(8, P{}.Msg(4, P{}).Msg(7, pbtest.StrAttr("k", "v"))))))},
	{"summary (cold)", Metrics, metric(P{}.Msg(11, P{}.Msg(1, P{}.Fixed64(3, 1)))), metric(P{}.Msg(5, P{}.Msg(1, npoint())))},
	{"log trace_id 15 bytes", Logs, logRec(P{}.Msg(9, pbtest.IDs(15, 1))), logRec(P{}.Msg(9, make(P, 16)))},
	{"log span_id 9 bytes, then empty", Logs, logRec(P{}.Msg(10, P{}).Msg(10, pbtest.IDs(9, 1))), logRec(P{}.Msg(10, pbtest.IDs(8, 1)).Msg(10, P{}))},
	// An earlier occurrence of an id of a length pdata refuses (it
	// reads every occurrence), the last valid: the checker rejects the
	// item (otlpdecode.ValidIDLen), so it is not vouched for.
	{"span trace_id 3 bytes, then valid", Traces, span(P{}.Msg(1, pbtest.IDs(3, 1)).Msg(2, pbtest.IDs(8, 1)).Msg(1, pbtest.IDs(16, 1))),
		span(P{}.Msg(1, pbtest.IDs(16, 2)).Msg(2, pbtest.IDs(8, 1)).Msg(1, pbtest.IDs(16, 1)))},
	{"span parent_span_id 5 bytes, then 8", Traces, span(ids().Msg(4, pbtest.IDs(5, 3)).Msg(4, pbtest.IDs(8, 3))),
		span(ids().Msg(4, pbtest.IDs(8, 4)).Msg(4, pbtest.IDs(8, 3)))},
	{"link trace_id 15 bytes, then 16", Traces, span(ids().Msg(13, P{}.Msg(1, pbtest.IDs(15, 1)).Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 1)))),
		span(ids().Msg(13, P{}.Msg(1, P{}).Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 1))))},
	{"log trace_id 3 bytes, then 16", Logs, logRec(P{}.Msg(9, pbtest.IDs(3, 1)).Msg(9, pbtest.IDs(16, 1))),
		logRec(P{}.Msg(9, pbtest.IDs(16, 2)).Msg(9, pbtest.IDs(16, 1)))},
	{"exemplar span_id 5 bytes, then 8", Metrics, metric(P{}.Msg(5, P{}.Msg(1, npoint().Msg(5, P{}.Fixed64(2, 1).Msg(4, pbtest.IDs(5, 1)).Msg(4, pbtest.IDs(8, 1)))))),
		metric(P{}.Msg(5, P{}.Msg(1, npoint().Msg(5, P{}.Fixed64(2, 1).Msg(4, P{}).Msg(4, pbtest.IDs(8, 1))))))},
	{"log body nested 130 deep", Logs, logRec(P{}.Msg(5, nested(130))), logRec(P{}.Msg(5, nested(60)))},
	{"log body kvlist nested 100 deep", Logs, logRec(P{}.Msg(5, nestedList(130))), logRec(P{}.Msg(5, nestedList(60)))},
}

func ids() P  { return P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 1)) }
func ids2() P { return P{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, 9)) }

// span is a request of one span with fields f (then a name and times).
func span(f P) P { return spans(f) }

func spans(fs ...P) P {
	var items []P
	for _, f := range fs {
		items = append(items, f.Str(5, "op").Fixed64(7, 1).Fixed64(8, 2))
	}
	return pbtest.Request(P{}.Msg(1, pbtest.StrAttr("service.name", "s")), P{}.Str(1, "scope"), items)
}

// resourced is a request of one valid span under resource r.
func resourced(r P) P {
	return pbtest.Request(r, nil, []P{ids().Str(5, "op")})
}

// nested is an AnyValue nested depth deep in arrays.
func nested(depth int) P {
	v := P{}.Str(1, "leaf")
	for range depth - 1 {
		v = P{}.Msg(5, P{}.Msg(1, v))
	}
	return v
}

// nestedList is an AnyValue nested depth deep in key-value lists.
func nestedList(depth int) P {
	v := P{}.Varint(3, 1)
	for range depth - 1 {
		v = P{}.Msg(6, P{}.Msg(1, P{}.Str(1, "k").Msg(2, v)))
	}
	return v
}

func metric(f P) P {
	return pbtest.Request(P{}.Msg(1, pbtest.StrAttr("service.name", "s")), nil, []P{P{}.Str(1, "m").Append(f)})
}

func npoint() P {
	return P{}.Msg(7, pbtest.StrAttr("k", "v")).Fixed64(2, 1).Fixed64(3, 2).Fixed64(4, 3)
}

// hpoint is a histogram point with counts bucket_counts and bounds
// explicit_bounds, packed.
func hpoint(counts, bounds int) P {
	p := P{}.Msg(9, pbtest.StrAttr("k", "v")).Fixed64(2, 1).Fixed64(3, 2).Fixed64(4, 3)
	if counts > 0 {
		p = p.Append(packed(6, counts))
	}
	if bounds > 0 {
		p = p.Append(packed(7, bounds))
	}
	return p
}

func packed(num, n int) P { return P{}.Msg(num, make(P, 8*n)) }

func logRec(f P) P {
	return pbtest.Request(nil, nil, []P{P{}.Fixed64(1, 5).Str(3, "INFO").Append(f)})
}

// TestVouchRules: each case's bad request is not vouched for, the good one
// beside it is (so the case tests its rule, not something else), both
// soundly; and the bad one vouched for after a good one on the stream.
func TestVouchRules(t *testing.T) {
	for _, c := range vouchCases {
		t.Run(c.name, func(t *testing.T) {
			good, _ := otlp.AppendEnvelope(nil, 1, c.good)
			bad, _ := otlp.AppendEnvelope(nil, 2, c.bad)
			got := decodeVouched(t, c.sig, encodeAll(c.sig, [][]byte{good, bad, good}))
			if len(got) != 3 || !got[0] || got[1] || !got[2] {
				t.Fatalf("vouched for good, bad, good: %v", got)
			}
		})
	}
}

// TestVouchSeriesCarriesItsMark: a data point's attributes that could not
// be vouched for (a key_strindex), sent again as a reference to the series
// the first message left, are not vouched for in the second either.
func TestVouchSeriesCarriesItsMark(t *testing.T) {
	bad := P{}.Msg(7, pbtest.StrAttr("k", "v").Varint(3, 1)).Fixed64(2, 1).Fixed64(3, 2).Fixed64(4, 3)
	m := metric(P{}.Msg(5, P{}.Msg(1, bad)))
	env, _ := otlp.AppendEnvelope(nil, 1, m)
	encs := encodeAll(Metrics, [][]byte{env, env})
	if len(encs[1]) >= len(encs[0]) {
		t.Fatalf("the second message (%d bytes) does not refer to the first's series (%d bytes)", len(encs[1]), len(encs[0]))
	}
	if got := decodeVouched(t, Metrics, encs); len(got) != 2 || got[0] || got[1] {
		t.Fatalf("vouched: %v", got)
	}
}

// TestVouchOverflowingVarint: a varint field whose ten bytes overflow 64
// bits (the encoder sends such a request untransformed: here its columns
// are patched) is not vouched for; the same of 64 bits is.
func TestVouchOverflowingVarint(t *testing.T) {
	max := P{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	env, _ := otlp.AppendEnvelope(nil, 1, span(ids().Tag(6, 0).Append(max)))
	good := NewEncoder(Traces).Append(nil, env)
	i := bytes.Index(good, max)
	if i < 0 {
		t.Fatal("the varint is not in the columns")
	}
	bad := bytes.Clone(good)
	bad[i+9] = 0x02
	for _, c := range []struct {
		enc  []byte
		want bool
	}{{good, true}, {bad, false}} {
		if got := decodeVouched(t, Traces, [][]byte{c.enc}); len(got) != 1 || got[0] != c.want {
			t.Fatalf("vouched: %v, want %v", got, c.want)
		}
	}
}

// TestVouchUntransformed: a message sent untransformed, behind the flag
// byte, is not vouched for.
func TestVouchUntransformed(t *testing.T) {
	env, _ := otlp.AppendEnvelope(nil, 1, span(ids()))
	if got := decodeVouched(t, Traces, [][]byte{append([]byte{flagRaw}, env...)}); len(got) != 1 || got[0] {
		t.Fatalf("vouched: %v", got)
	}
}

// FuzzVouchSound: for any bytes the decoder accepts, as a columns message
// or as OTLP bytes the encoder transforms first, twice on one stream (the
// second time with the series the first left), what it vouches for the
// checker finds: no error, nothing rejected, the items it counted, within
// its nesting bound.
func FuzzVouchSound(f *testing.F) {
	for _, c := range vouchCases {
		for _, r := range []P{c.bad, c.good} {
			env, _ := otlp.AppendEnvelope(nil, 1, r)
			f.Add([]byte(env), uint8(c.sig), true)
			f.Add(NewEncoder(c.sig).Append(nil, env), uint8(c.sig), false)
		}
	}
	for _, s := range signals {
		for _, env := range envelopes(f, s.name) {
			f.Add(env, uint8(s.sig), true)
			f.Add(NewEncoder(s.sig).Append(nil, env), uint8(s.sig), false)
		}
	}
	for sig, envs := range demoSample(f) {
		for _, env := range envs[:2] {
			f.Add(NewEncoder(sig).Append(nil, env), uint8(sig), false)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, sig uint8, plain bool) {
		s := fuzzSignal(sig)
		if plain {
			src = NewEncoder(s).Append(nil, src)
		}
		// The limit FuzzGenSame's: a message of a few bytes that
		// refers to the series the first left again and again
		// decodes to the limit, which the checker then reads.
		decodeVouchedWithin(t, s, 1<<16, [][]byte{src, src})
	})
}
