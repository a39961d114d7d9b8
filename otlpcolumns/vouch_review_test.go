package otlpcolumns

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
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
	env2, _ := otlp.AppendEnvelope(nil, 2, req)
	encs := encodeAll(Metrics, [][]byte{env, env2})
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
		if vv, ok := d.Vouched(); ok {
			sound(t, Metrics, out, vv)
		}
		if _, req, err := otlp.UnwrapEnvelope(append([]byte(nil), out...)); err == nil {
			if _, err := otlpdecode.CheckMetrics(req, nil); err != nil {
				other++
				if *writeSeeds {
					// Also handler's TestStreamColumnsCrossFieldSeries'.
					writeSeed(t, "FuzzVouchStream", "cross-field", streamOf([][]byte{encs[0], join(n, cols)}), uint8(Metrics))
				}
			}
		}
	}
	if other == 0 {
		t.Fatal("no reference made the request malformed: the test tests nothing")
	}
}

// streamOf joins a stream's encoded messages for FuzzVouchStream: each a
// uvarint length and its bytes.
func streamOf(encs [][]byte) []byte {
	var b []byte
	for _, e := range encs {
		b = append(binary.AppendUvarint(b, uint64(len(e))), e...)
	}
	return b
}

// FuzzVouchStream: for any columns messages, several on one decoder (the
// series table carrying runs, and their marks, from message to message,
// as a hostile client's stream would), what the decoder vouches for the
// checker finds (sound). Its input is streamOf's: the seeds are honest
// streams, which the fuzzer changes where a client would (a reference, a
// column, a structure byte).
func FuzzVouchStream(f *testing.F) {
	for _, c := range vouchCases {
		good, _ := otlp.AppendEnvelope(nil, 1, c.good)
		bad, _ := otlp.AppendEnvelope(nil, 2, c.bad)
		f.Add(streamOf(encodeAll(c.sig, [][]byte{good, bad, good})), uint8(c.sig))
	}
	for _, s := range signals {
		envs := envelopes(f, s.name)
		f.Add(streamOf(encodeAll(s.sig, append(envs, envs...))), uint8(s.sig))
	}
	for sig, envs := range demoSample(f) {
		f.Add(streamOf(encodeAll(sig, envs[:3])), uint8(sig))
	}
	f.Fuzz(func(t *testing.T, stream []byte, sig uint8) {
		s := fuzzSignal(sig)
		var encs [][]byte
		for len(stream) > 0 && len(encs) < 8 {
			l, k := binary.Uvarint(stream)
			if k <= 0 || l > uint64(len(stream)-k) {
				break
			}
			encs = append(encs, stream[k:k+int(l)])
			stream = stream[k+int(l):]
		}
		// FuzzVouchSound's limit.
		decodeVouchedWithin(t, s, 1<<16, encs)
	})
}

// writeSeeds writes the review's hostile streams as FuzzVouchStream's
// seeds (go test -run TestVouch -args -write-seeds).
var writeSeeds = flag.Bool("write-seeds", false, "write FuzzVouchStream's seeds to testdata")

func writeSeed(t *testing.T, fuzz, name string, stream []byte, sig uint8) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", fuzz)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nbyte(%q)\n", stream, rune(sig))
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fuzzSignal is the signal a fuzz target's byte names: the seeds' bytes
// are their Signal's (1-3), each the signal it names. (sig%3 + 1, before,
// decoded every seed with the next signal's decoder, where nearly all
// were corrupt or not vouched for.)
func fuzzSignal(sig uint8) Signal { return Signal((int(sig)+2)%3 + 1) }

// TestVouchBackToPlaceholder: a span's trace_id sent as a reference back
// to one of the column's values too long to be referenced (the decoder
// keeps a place holder of no bytes for it: the encoder never refers to
// one) wrote the field's tag and no value, so the fields after it were
// misread by any parser, while the span's rule saw a valid trace_id
// after it. Such a reference is corrupt.
func TestVouchBackToPlaceholder(t *testing.T) {
	long := pbtest.IDs(30, 0x40) // raw 31 bytes: a place holder
	sp := func(seed byte) P {
		return P{}.Msg(1, long).Msg(1, pbtest.IDs(16, seed)).Msg(2, pbtest.IDs(8, seed)).Str(5, "op").Fixed64(7, 1).Fixed64(8, 2)
	}
	req := pbtest.Request(P{}.Msg(1, pbtest.StrAttr("service.name", "s")), nil, []P{sp(1), sp(0x21)})
	env, _ := otlp.AppendEnvelope(nil, 1, req)
	enc := NewEncoder(Traces).Append(nil, env)
	// Not vouched for since an earlier trace_id of another length than
	// 16 rejects its span (otlpdecode.ValidIDLen: pdata refuses it),
	// but decoded: the reference below is what is refused.
	if got := decodeVouched(t, Traces, [][]byte{enc}); len(got) != 1 || got[0] {
		t.Fatalf("the message with 30-byte trace_ids vouched: %v", got)
	}
	s := &schemas[Traces]
	span := s.root.f[2].child.f[2].child.f[2].child
	col := span.f[pb.SpanTraceID].col
	n, cols := split(t, s, enc)
	lit := append([]byte{0, byte(len(long))}, long...)
	i := bytes.LastIndex(cols[col], lit)
	if i <= 0 {
		t.Fatalf("the second span's long trace_id is not sent whole: %x", cols[col])
	}
	// The second span's first trace_id: two values back, the first
	// span's first (its place holder).
	cols[col] = append(append(append([]byte(nil), cols[col][:i]...), 2), cols[col][i+len(lit):]...)
	bad := join(n-uint64(len(lit)-1), cols)
	d := NewDecoder(Traces)
	out, err := d.Decode(nil, bad, len(env), nil)
	if v, ok := d.Vouched(); ok {
		sound(t, Traces, out, v)
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("a reference to a place holder: %v, want %v", err, ErrCorrupt)
	}
	if *writeSeeds {
		writeSeed(t, "FuzzVouchStream", "back-to-placeholder", streamOf([][]byte{bad}), uint8(Traces))
	}
}

// TestSeriesFieldsAlike: within a signal's schema, the nodes that have
// a series field of the same number (a gauge's and a sum's number points:
// the encoder refers from one to the other's runs) are at the same depth,
// with the same rules, their field's values walked with the same rules:
// a run's tag then says how it was walked (seriesRef's test before it
// vouches for a reference; the mark it carries is of the same depth).
func TestSeriesFieldsAlike(t *testing.T) {
	for _, sig := range []Signal{Traces, Metrics, Logs} {
		type place struct {
			depth int
			rules string
		}
		owner := map[uint8]place{}
		seen := map[*node]bool{}
		var visit func(n *node, depth int)
		visit = func(n *node, depth int) {
			if n == nil || seen[n] {
				return
			}
			seen[n] = true
			for _, num := range n.series {
				if num == 0 {
					continue
				}
				p := place{depth, fmt.Sprint(n.rule, ":", rulesOf(n.f[num].child, map[*node]bool{}))}
				if o, ok := owner[num]; ok && o != p {
					t.Errorf("signal %d: series field %d at %+v and at %+v", sig, num, o, p)
				}
				owner[num] = p
			}
			for i := range n.f {
				visit(n.f[i].child, depth+1)
			}
			if n.byCtx != nil {
				for _, c := range n.byCtx {
					visit(c, depth)
				}
			}
		}
		visit(schemas[sig].root, 0)
		if len(owner) == 0 && sig != Logs {
			t.Errorf("signal %d: no series found", sig)
		}
	}
}

// rulesOf is the rules of n's tree: each node's and its fields'.
func rulesOf(n *node, seen map[*node]bool) string {
	if n == nil {
		return "-"
	}
	if seen[n] {
		return "^"
	}
	seen[n] = true
	s := fmt.Sprint(n.rule, "(")
	for i, f := range n.f {
		if f.rule != ruleNone || f.child != nil {
			s += fmt.Sprint(i, ":", f.kind, ",", f.rule, rulesOf(f.child, seen), ";")
		}
	}
	if n.byCtx != nil {
		for _, c := range n.byCtx[1:] {
			s += "|" + rulesOf(c, seen)
		}
	}
	return s + ")"
}
