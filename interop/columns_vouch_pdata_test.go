package interop

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// The columns decoder vouches (otlpcolumns.Decoder.Vouched) that the
// request it wrote passes otlpdecode's Check*, and the pipeline then
// skips that pass: what it stores is read later by the Collector's pdata
// (forwarding, Kafka, the exports). These tests hold every request the
// decoder vouches for, honest or hostile, to pdata's reader as well: it
// reads it without an error, and counts the items the decoder counted.

// pdataItems reads req, a request of sig, with pdata's unmarshaler and
// returns its items.
func pdataItems(sig otlpcolumns.Signal, req []byte) (int, error) {
	switch sig {
	case otlpcolumns.Traces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(req)
		if err != nil {
			return 0, err
		}
		return td.SpanCount(), nil
	case otlpcolumns.Metrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(req)
		if err != nil {
			return 0, err
		}
		return md.DataPointCount(), nil
	}
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(req)
	if err != nil {
		return 0, err
	}
	return ld.LogRecordCount(), nil
}

func checkOfSignal(sig otlpcolumns.Signal) func([]byte, *otlpdecode.Options) (otlpdecode.Result, error) {
	switch sig {
	case otlpcolumns.Traces:
		return otlpdecode.CheckTraces
	case otlpcolumns.Metrics:
		return otlpdecode.CheckMetrics
	}
	return otlpdecode.CheckLogs
}

// vouchedReadByPdata decodes encs on one decoder and holds each request it
// vouches for to pdata's reader and to Check*; it returns which it
// vouched for.
func vouchedReadByPdata(t testing.TB, sig otlpcolumns.Signal, limit int, encs [][]byte) []bool {
	t.Helper()
	d := otlpcolumns.NewDecoder(sig)
	var vouched []bool
	for _, enc := range encs {
		ok, err := decodeReadByPdata(t, sig, d, limit, enc)
		if err != nil {
			return vouched
		}
		vouched = append(vouched, ok)
	}
	return vouched
}

// decodeReadByPdata decodes enc with d and, if d vouches for the request,
// holds it to pdata's reader and to Check*: it reports whether d vouched.
func decodeReadByPdata(t testing.TB, sig otlpcolumns.Signal, d *otlpcolumns.Decoder, limit int, enc []byte) (bool, error) {
	t.Helper()
	out, err := d.Decode(nil, enc, limit, nil)
	if err != nil {
		return false, err
	}
	v, ok := d.Vouched()
	if !ok {
		return false, nil
	}
	_, req, err := otlp.UnwrapEnvelope(bytes.Clone(out))
	if err != nil {
		t.Fatalf("vouched for an envelope that does not unwrap: %v", err)
	}
	items, err := pdataItems(sig, req)
	if err != nil {
		t.Fatalf("signal %d: vouched for %+v, pdata cannot read it: %v\nrequest %x", sig, v, err, req)
	}
	if items != v.Items {
		t.Fatalf("signal %d: vouched for %d items, pdata reads %d\nrequest %x", sig, v.Items, items, req)
	}
	// Check* with the nesting bound vouched for: the pipeline's may be
	// that low.
	res, err := checkOfSignal(sig)(req, &otlpdecode.Options{MaxAnyValueDepth: v.MaxAnyValueDepth})
	if err != nil || res.Items != v.Items || res.Rejected != 0 || res.IgnoredStrindex != 0 {
		t.Fatalf("signal %d: vouched for %+v, Check* finds %+v, %v", sig, v, res, err)
	}
	ownReaders(t, sig, req, v.Items)
	return true, nil
}

// ownReaders holds req, a request vouched for with items items, to
// otlp-lite's own readers of what it stored: the JSON export (and pdata
// reading the JSON back), and the rewrites by resource and by trace.
func ownReaders(t testing.TB, sig otlpcolumns.Signal, req []byte, items int) {
	t.Helper()
	data, _, ok := otlpjson.ForSignal(otlp.Signal(sig))
	if !ok {
		t.Fatalf("no JSON type for signal %d", sig)
	}
	js, err := otlpjson.Marshal(nil, data, req)
	if err != nil {
		t.Fatalf("signal %d: vouched for, otlpjson cannot export it: %v", sig, err)
	}
	var n int
	switch sig {
	case otlpcolumns.Traces:
		var td ptrace.Traces
		if td, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(js); err == nil {
			n = td.SpanCount()
		}
	case otlpcolumns.Metrics:
		var md pmetric.Metrics
		if md, err = (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(js); err == nil {
			n = md.DataPointCount()
		}
	default:
		var ld plog.Logs
		if ld, err = (&plog.JSONUnmarshaler{}).UnmarshalLogs(js); err == nil {
			n = ld.LogRecordCount()
		}
	}
	if err != nil || n != items {
		t.Fatalf("signal %d: vouched for %d items, its JSON export pdata reads %d, %v", sig, items, n, err)
	}
	if _, _, err := otlpdecode.AppendResources(nil, nil, req, otlp.Signal(sig), len(req)+64, -1, -1); err != nil {
		t.Fatalf("signal %d: vouched for, AppendResources: %v", sig, err)
	}
	if sig != otlpcolumns.Metrics {
		var ts otlpdecode.TraceSplitter
		key := func(dst []byte, id [16]byte) ([]byte, bool) { return append(dst, id[:]...), true }
		if _, _, err := ts.AppendByTrace(nil, nil, req, otlp.Signal(sig), len(req)+64, key, nil); err != nil {
			t.Fatalf("signal %d: vouched for, AppendByTrace: %v", sig, err)
		}
	}
}

// honestEnvelopes are the golden payloads and the demo sample's requests
// of each signal, as export stream envelopes.
func honestEnvelopes(t testing.TB) map[otlpcolumns.Signal][][]byte {
	t.Helper()
	out := map[otlpcolumns.Signal][][]byte{}
	for sig, prefix := range map[otlpcolumns.Signal]string{otlpcolumns.Traces: "traces", otlpcolumns.Metrics: "metrics", otlpcolumns.Logs: "logs"} {
		files, err := filepath.Glob(filepath.Join(pbtest.GoldenDir(t), prefix+"*.pb"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no golden payloads for %s", prefix)
		}
		for _, f := range files {
			env, err := otlp.AppendEnvelope(nil, 7, pbtest.Golden(t, filepath.Base(f)))
			if err != nil {
				t.Fatal(err)
			}
			out[sig] = append(out[sig], env)
		}
	}
	for sig, reqs := range pdataRequests(t) {
		for i, req := range reqs {
			env, err := otlp.AppendEnvelope(nil, uint64(100+i), req)
			if err != nil {
				t.Fatal(err)
			}
			out[sig] = append(out[sig], env)
		}
	}
	raw, err := os.ReadFile("../otlpcolumns/testdata/demo-sample.zst")
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	if raw, err = dec.DecodeAll(raw, nil); err != nil {
		t.Fatal(err)
	}
	for id := uint64(1); len(raw) > 0; id++ {
		sig := otlpcolumns.Signal(raw[0])
		l, k := binary.Uvarint(raw[1:])
		if k <= 0 || l > uint64(len(raw)-1-k) {
			t.Fatal("demo-sample.zst: bad record")
		}
		if env, err := otlp.AppendEnvelope(nil, id, raw[1+k:1+k+int(l)]); err == nil && len(out[sig]) < 40 {
			out[sig] = append(out[sig], env)
		}
		raw = raw[1+k+int(l):]
	}
	return out
}

// TestVouchedReadByPdata: the requests the decoder vouches for on honest
// streams (the golden payloads, the demo sample), pdata reads whole, with
// the items the decoder counted.
func TestVouchedReadByPdata(t *testing.T) {
	for sig, envs := range honestEnvelopes(t) {
		e := otlpcolumns.NewEncoder(sig)
		var encs [][]byte
		for _, env := range envs {
			encs = append(encs, e.Append(nil, env))
		}
		if got := vouchedReadByPdata(t, sig, 64<<20, encs); !slices.Contains(got, true) {
			t.Fatalf("signal %d: nothing honest vouched for", sig)
		}
	}
}

// vouchMutants is how many column-level mutants of each honest message
// TestVouchedColumnMutants tries (more with -vouch-mutants, for a long
// hunt).
var vouchMutants = flag.Int("vouch-mutants", 40, "column-level mutants of each message (TestVouchedColumnMutants)")

// TestVouchedColumnMutants: honest columns messages changed where a
// hostile client would change them, a column at a time (a value's byte, a
// structure byte, bytes inserted, removed or repeated), the column table
// and the declared length made consistent again so that the decoder
// reads the message through (byte flips alone are nearly all refused as
// corrupt): what it vouches for pdata reads whole, with its items.
func TestVouchedColumnMutants(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 13))
	for sig, envs := range honestEnvelopes(t) {
		e := otlpcolumns.NewEncoder(sig)
		var encs [][]byte
		for _, env := range envs {
			encs = append(encs, e.Append(nil, env))
		}
		mutants, vouched := 0, 0
		// base has decoded the messages before enc: the series
		// they left in the table. A shallow copy of it decodes each
		// mutant: what a copy appends to the table lands past base's
		// lengths (base never reads it), its other slices are reset
		// by every Decode.
		base := otlpcolumns.NewDecoder(sig)
		for _, enc := range encs {
			for range *vouchMutants {
				if len(enc) > 256<<10 || enc[0] != 1 {
					break
				}
				m, ok := mutateColumns(r, base, enc)
				if !ok {
					continue
				}
				mutants++
				d := *base
				if ok, _ := decodeReadByPdata(t, sig, &d, 64<<20, m); ok {
					vouched++
				}
			}
			if _, err := base.Decode(nil, enc, 64<<20, nil); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("signal %d: %d messages, %d mutants decoded, %d vouched for", sig, len(encs), mutants, vouched)
	}
}

// columnsOf splits a columns message (flag 1) into its declared length
// and its columns by index.
func columnsOf(enc []byte) (n uint64, cols map[int][]byte, ok bool) {
	src := enc[1:]
	n, k := binary.Uvarint(src)
	if k <= 0 {
		return 0, nil, false
	}
	src = src[k:]
	ncols, k := binary.Uvarint(src)
	if k <= 0 {
		return 0, nil, false
	}
	src = src[k:]
	var order []int
	lens := map[int]int{}
	for range ncols {
		l, k := binary.Uvarint(src[1:])
		if k <= 0 {
			return 0, nil, false
		}
		order = append(order, int(src[0]))
		lens[int(src[0])] = int(l)
		src = src[1+k:]
	}
	cols = map[int][]byte{}
	for _, c := range order {
		cols[c], src = bytes.Clone(src[:lens[c]]), src[lens[c]:]
	}
	return n, cols, true
}

// columnsMessage is columnsOf's inverse.
func columnsMessage(n uint64, cols map[int][]byte) []byte {
	out := binary.AppendUvarint([]byte{1}, n)
	var order []int
	for c, b := range cols {
		if len(b) > 0 {
			order = append(order, c)
		}
	}
	slices.Sort(order)
	out = binary.AppendUvarint(out, uint64(len(order)))
	for _, c := range order {
		out = binary.AppendUvarint(append(out, byte(c)), uint64(len(cols[c])))
	}
	for _, c := range order {
		out = append(out, cols[c]...)
	}
	return out
}

// mutateColumns changes one or two columns of enc, then declares the
// length its output has (decoded by a copy of base); ok false when it
// cannot be made to decode.
func mutateColumns(r *rand.Rand, base *otlpcolumns.Decoder, enc []byte) ([]byte, bool) {
	n, cols, ok := columnsOf(enc)
	if !ok || len(cols) == 0 {
		return nil, false
	}
	var present []int
	for c := range cols {
		present = append(present, c)
	}
	slices.Sort(present)
	for range 1 + r.IntN(2) {
		c := present[r.IntN(len(present))]
		b := cols[c]
		if len(b) == 0 {
			continue
		}
		i := r.IntN(len(b))
		switch r.IntN(7) {
		case 0:
			b[i] = byte(r.Uint32())
		case 1:
			b[i] = byte(r.IntN(4))
		case 2:
			b[i] ^= 1 << r.IntN(8)
		case 3:
			b = slices.Insert(b, i, byte(r.IntN(0x80)))
		case 4:
			b = slices.Delete(b, i, i+1)
		case 5:
			// A slice of the column repeated (a field, a value,
			// a structure's sub-message sent twice).
			j := i + 1 + r.IntN(min(24, len(b)-i))
			b = slices.Insert(b, j, b[i:j]...)
		default:
			j := r.IntN(len(b))
			b[i], b[j] = b[j], b[i]
		}
		cols[c] = b
	}
	// The decoder's errors say what to make consistent: a column's
	// bytes left over are cut, the declared length made the output's.
	for range 6 {
		m := columnsMessage(n, cols)
		d := *base
		_, err := d.Decode(nil, m, 64<<20, nil)
		if err == nil {
			return m, true
		}
		msg := err.Error()
		msg = msg[strings.LastIndex(msg, ": ")+2:]
		var got, declared uint64
		var c, left int
		switch {
		case strings.Contains(msg, "output longer than declared"):
			n += 1 << 12
		case strings.HasPrefix(msg, "column "):
			if _, e := fmt.Sscanf(msg, "column %d has %d bytes left", &c, &left); e != nil || left > len(cols[c]) {
				return nil, false
			}
			cols[c] = cols[c][:len(cols[c])-left]
		default:
			if _, e := fmt.Sscanf(msg, "%d bytes, declared %d", &got, &declared); e != nil {
				return nil, false
			}
			n = got
		}
	}
	return nil, false
}

// FuzzVouchedReadByPdata: FuzzVouchStream's input (otlpcolumns: columns
// messages, each behind its varint length, several on one decoder) and
// its corpus, what the decoder vouches for held to pdata's reader.
func FuzzVouchedReadByPdata(f *testing.F) {
	for _, dir := range []string{"FuzzVouchStream", "FuzzVouchSound"} {
		files, _ := filepath.Glob(filepath.Join("..", "otlpcolumns", "testdata", "fuzz", dir, "*"))
		for _, file := range files {
			if src, sig, plain, ok := readFuzzSeed(file); ok && !plain {
				if dir == "FuzzVouchSound" {
					// One message, twice on the stream (as
					// FuzzVouchSound decodes it).
					one := append(binary.AppendUvarint(nil, uint64(len(src))), src...)
					src = append(one, one...)
				}
				f.Add(src, sig)
			}
		}
	}
	for sig, envs := range honestEnvelopes(f) {
		e := otlpcolumns.NewEncoder(sig)
		var stream []byte
		for _, env := range envs[:min(3, len(envs))] {
			enc := e.Append(nil, env)
			stream = append(binary.AppendUvarint(stream, uint64(len(enc))), enc...)
		}
		f.Add(stream, uint8(sig))
	}
	f.Fuzz(func(t *testing.T, stream []byte, sig uint8) {
		s := otlpcolumns.Signal((int(sig)+2)%3 + 1)
		var encs [][]byte
		for len(stream) > 0 && len(encs) < 8 {
			l, k := binary.Uvarint(stream)
			if k <= 0 || l > uint64(len(stream)-k) {
				break
			}
			encs = append(encs, stream[k:k+int(l)])
			stream = stream[k+int(l):]
		}
		// FuzzVouchStream's limit.
		vouchedReadByPdata(t, s, 1<<16, encs)
	})
}

// readFuzzSeed reads a corpus file of otlpcolumns' fuzz targets: its
// []byte, its signal byte and, for FuzzVouchSound's, its bool.
func readFuzzSeed(file string) (src []byte, sig uint8, plain, ok bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, 0, false, false
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 3 || lines[0] != "go test fuzz v1" {
		return nil, 0, false, false
	}
	for _, line := range lines[1:] {
		open, close := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
		if open < 0 || close < open {
			return nil, 0, false, false
		}
		arg := line[open+1 : close]
		switch {
		case strings.HasPrefix(line, "[]byte("):
			s, err := strconv.Unquote(arg)
			if err != nil {
				return nil, 0, false, false
			}
			src = []byte(s)
		case strings.HasPrefix(line, "byte(") || strings.HasPrefix(line, "uint8("):
			if r, _, _, err := strconv.UnquoteChar(strings.Trim(arg, "'"), '\''); err == nil && strings.HasPrefix(arg, "'") {
				sig = uint8(r)
			} else if v, err := strconv.ParseUint(arg, 0, 8); err == nil {
				sig = uint8(v)
			}
		case strings.HasPrefix(line, "bool("):
			plain = arg == "true"
		}
	}
	return src, sig, plain, src != nil
}

// pdataRequests are requests of each signal that pdata writes, with every
// node the decoder vouches for and the demo data lacks: log records
// (bodies of nested arrays and lists, ids, event names), spans' events,
// links and status, exemplars with ids and filtered attributes on number
// and histogram points, scope attributes; a few of each, varied by i.
func pdataRequests(t testing.TB) map[otlpcolumns.Signal][][]byte {
	t.Helper()
	attrs := func(m pcommon.Map, i int) {
		m.PutStr("service.name", "svc-"+strconv.Itoa(i%3))
		m.PutInt("http.status_code", int64(200+i))
		m.PutDouble("ratio", float64(i)/7)
		m.PutBool("ok", i%2 == 0)
		m.PutEmptyBytes("raw").FromRaw([]byte{byte(i), 0, 0xff})
		s := m.PutEmptySlice("list")
		s.AppendEmpty().SetStr("a")
		inner := s.AppendEmpty().SetEmptyMap()
		inner.PutInt("depth", 2)
		deeper := inner.PutEmptySlice("deeper")
		deeper.AppendEmpty().SetEmptySlice().AppendEmpty().SetInt(int64(i))
	}
	tid := func(i int) pcommon.TraceID {
		var id pcommon.TraceID
		for k := range id {
			id[k] = byte(i*16 + k + 1)
		}
		return id
	}
	sid := func(i int) pcommon.SpanID {
		var id pcommon.SpanID
		for k := range id {
			id[k] = byte(i*8 + k + 1)
		}
		return id
	}
	out := map[otlpcolumns.Signal][][]byte{}
	for i := range 4 {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		attrs(rl.Resource().Attributes(), i)
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName("scope")
		sl.Scope().SetVersion("1.0")
		sl.Scope().Attributes().PutStr("k", "v")
		for j := range 3 + i {
			lr := sl.LogRecords().AppendEmpty()
			lr.SetTimestamp(pcommon.Timestamp(1e18 + uint64(i*1000+j)))
			lr.SetObservedTimestamp(pcommon.Timestamp(1e18 + uint64(i*1000+j+5)))
			lr.SetSeverityNumber(plog.SeverityNumberInfo)
			lr.SetSeverityText("INFO")
			lr.SetEventName("event." + strconv.Itoa(j))
			switch j % 3 {
			case 0:
				lr.Body().SetStr("hello " + strconv.Itoa(j))
			case 1:
				attrs(lr.Body().SetEmptyMap(), j)
			default:
				lr.Body().SetEmptySlice().AppendEmpty().SetEmptySlice().AppendEmpty().SetEmptyMap().PutStr("x", "y")
			}
			attrs(lr.Attributes(), j)
			if j%2 == 0 {
				lr.SetTraceID(tid(j))
				lr.SetSpanID(sid(j))
			}
			lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
		}
		b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
		if err != nil {
			t.Fatal(err)
		}
		out[otlpcolumns.Logs] = append(out[otlpcolumns.Logs], b)

		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		attrs(rs.Resource().Attributes(), i)
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("tracer")
		ss.Scope().Attributes().PutInt("n", int64(i))
		for j := range 4 + i {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(tid(i))
			sp.SetSpanID(sid(i*10 + j))
			if j > 0 {
				sp.SetParentSpanID(sid(i * 10))
			}
			sp.SetName("op-" + strconv.Itoa(j%2))
			sp.SetKind(ptrace.SpanKindServer)
			sp.SetStartTimestamp(pcommon.Timestamp(1e18 + uint64(j)))
			sp.SetEndTimestamp(pcommon.Timestamp(1e18 + uint64(j) + 1e6))
			sp.TraceState().FromRaw("a=b")
			attrs(sp.Attributes(), j)
			ev := sp.Events().AppendEmpty()
			ev.SetName("ev")
			ev.SetTimestamp(pcommon.Timestamp(1e18 + uint64(j) + 10))
			attrs(ev.Attributes(), j)
			ln := sp.Links().AppendEmpty()
			ln.SetTraceID(tid(i + 1))
			ln.SetSpanID(sid(j))
			ln.TraceState().FromRaw("c=d")
			ln.Attributes().PutStr("link", "yes")
			ln.SetFlags(1)
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage("bad")
			sp.SetFlags(0x301)
			sp.SetDroppedAttributesCount(uint32(j))
		}
		b, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		out[otlpcolumns.Traces] = append(out[otlpcolumns.Traces], b)

		md := pmetric.NewMetrics()
		rm := md.ResourceMetrics().AppendEmpty()
		attrs(rm.Resource().Attributes(), i%2)
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName("meter")
		exemplar := func(es pmetric.ExemplarSlice, j int) {
			ex := es.AppendEmpty()
			ex.SetTimestamp(pcommon.Timestamp(1e18 + uint64(j)))
			ex.SetDoubleValue(1.5 * float64(j))
			ex.SetTraceID(tid(j))
			ex.SetSpanID(sid(j))
			ex.FilteredAttributes().PutStr("user", "u"+strconv.Itoa(j))
			ex2 := es.AppendEmpty()
			ex2.SetIntValue(int64(j))
		}
		g := sm.Metrics().AppendEmpty()
		g.SetName("gauge")
		g.SetUnit("1")
		g.SetDescription("a gauge")
		g.Metadata().PutStr("m", "d")
		for j := range 3 {
			dp := g.SetEmptyGauge().DataPoints().AppendEmpty()
			attrs(dp.Attributes(), j)
			dp.SetTimestamp(pcommon.Timestamp(1e18 + uint64(j)))
			dp.SetDoubleValue(float64(i + j))
			exemplar(dp.Exemplars(), j)
		}
		sum := sm.Metrics().AppendEmpty()
		sum.SetName("sum")
		sd := sum.SetEmptySum()
		sd.SetIsMonotonic(true)
		sd.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		for j := range 3 {
			dp := sd.DataPoints().AppendEmpty()
			attrs(dp.Attributes(), j)
			dp.SetStartTimestamp(pcommon.Timestamp(1e18))
			dp.SetTimestamp(pcommon.Timestamp(1e18 + uint64(j)))
			dp.SetIntValue(int64(i * j))
			exemplar(dp.Exemplars(), j)
		}
		h := sm.Metrics().AppendEmpty()
		h.SetName("hist")
		hd := h.SetEmptyHistogram()
		hd.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		for j := range 3 {
			dp := hd.DataPoints().AppendEmpty()
			attrs(dp.Attributes(), j)
			dp.SetTimestamp(pcommon.Timestamp(1e18 + uint64(j)))
			dp.SetCount(uint64(10 + j))
			dp.SetSum(3.5)
			dp.SetMin(0.5)
			dp.SetMax(9)
			dp.BucketCounts().FromRaw([]uint64{1, 2, uint64(j), 4})
			dp.ExplicitBounds().FromRaw([]float64{1, 2.5, 5})
			exemplar(dp.Exemplars(), j)
		}
		b, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		if err != nil {
			t.Fatal(err)
		}
		out[otlpcolumns.Metrics] = append(out[otlpcolumns.Metrics], b)
	}
	return out
}

// writeColumnsSeeds writes pdataRequests' streams as seeds of otlpcolumns'
// FuzzVouchStream and FuzzVouchSound (go test -run TestWriteColumnsSeeds
// -args -write-columns-seeds): the nodes the demo data lacks, vouched for,
// for the fuzzers to change (FuzzVouchedReadByPdata reads them too).
var writeColumnsSeeds = flag.Bool("write-columns-seeds", false, "write otlpcolumns' fuzz seeds of pdata's requests")

func TestWriteColumnsSeeds(t *testing.T) {
	if !*writeColumnsSeeds {
		t.Skip("-write-columns-seeds not set")
	}
	names := map[otlpcolumns.Signal]string{otlpcolumns.Traces: "traces", otlpcolumns.Metrics: "metrics", otlpcolumns.Logs: "logs"}
	for sig, reqs := range pdataRequests(t) {
		e := otlpcolumns.NewEncoder(sig)
		var stream []byte
		for i, req := range reqs[:3] {
			env, err := otlp.AppendEnvelope(nil, uint64(i+1), req)
			if err != nil {
				t.Fatal(err)
			}
			enc := e.Append(nil, env)
			stream = append(binary.AppendUvarint(stream, uint64(len(enc))), enc...)
			if i == 0 {
				writeFuzzSeed(t, "FuzzVouchSound", "pdata-"+names[sig], fmt.Sprintf("[]byte(%q)\nbyte(%q)\nbool(false)\n", enc, rune(sig)))
			}
		}
		writeFuzzSeed(t, "FuzzVouchStream", "pdata-"+names[sig], fmt.Sprintf("[]byte(%q)\nbyte(%q)\n", stream, rune(sig)))
	}
}

func writeFuzzSeed(t *testing.T, fuzz, name, body string) {
	t.Helper()
	dir := filepath.Join("..", "otlpcolumns", "testdata", "fuzz", fuzz)
	if err := os.WriteFile(filepath.Join(dir, name), []byte("go test fuzz v1\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
}
