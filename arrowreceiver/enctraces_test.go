//go:build otelarrow

package arrowreceiver

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"
	tracesarrow "github.com/open-telemetry/otel-arrow/go/pkg/otel/traces/arrow"
	tracesotlp "github.com/open-telemetry/otel-arrow/go/pkg/otel/traces/otlp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// decodeTracesViaPdata is the conversion the encoder replaces, kept as
// the reference: otel-arrow's TracesFrom to pdata, then pdata's
// marshaling.
func (d *decoder) decodeTracesViaPdata(bar *arrowpb.BatchArrowRecords) (out []byte, items int, err error) {
	defer d.releaseRecords()
	if err := d.consume(bar); err != nil {
		return nil, 0, err
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("cannot convert Arrow records to OTLP: %v", v)
		}
	}()
	recs := d.recs
	d.recs = d.recs[:0]
	rel, main, err := tracesotlp.RelatedDataFrom(recs, tracesarrow.DefaultConfig())
	if err != nil || main == nil {
		return nil, 0, convErr(err)
	}
	td, err := tracesotlp.TracesFrom(main.Record(), rel)
	if err != nil {
		return nil, 0, convErr(err)
	}
	var m ptrace.ProtoMarshaler
	b, _ := m.MarshalTraces(td)
	return b, td.SpanCount(), nil
}

// normalTraces returns OTLP traces as pdata marshals them after reading
// them: what the encoder writes and what pdata writes compare equal when
// they hold the same fields (pdata writes some empty messages and fields
// the encoder omits, and both read the same).
func normalTraces(t testing.TB, b []byte) []byte {
	t.Helper()
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(b)
	if err != nil {
		t.Fatalf("the OTLP does not read: %v", err)
	}
	var m ptrace.ProtoMarshaler
	out, _ := m.MarshalTraces(td)
	return out
}

// compareStream decodes the stream of batches with both conversions (two
// decoders: the Arrow state is per stream) and fails on any difference.
// With lenient, a batch only one of them refuses ends the comparison
// (hostile input that otel-arrow's conversion reads in its own way);
// otherwise every batch must convert.
func compareStream(t testing.TB, bars []*arrowpb.BatchArrowRecords, lenient bool) (spans int) {
	t.Helper()
	p := ingest.New(ingest.Config{Sink: &discard.Sink{}})
	ours := newDecoder(p, 64<<20, DefaultMaxBatchRows)
	ref := newDecoder(p, 64<<20, DefaultMaxBatchRows)
	defer ours.close()
	defer ref.close()
	for i, bar := range bars {
		got, n, err := ours.decode(bar, otlp.Traces, nil)
		want, wn, werr := ref.decodeTracesViaPdata(bar)
		if err != nil || werr != nil {
			if lenient || (err != nil) == (werr != nil) {
				return spans
			}
			t.Fatalf("batch %d: ours: %v, otel-arrow's: %v", i, err, werr)
		}
		if n != wn {
			t.Fatalf("batch %d: %d spans, otel-arrow's conversion %d", i, n, wn)
		}
		if g, w := normalTraces(t, got), normalTraces(t, want); !bytes.Equal(g, w) {
			var u ptrace.ProtoUnmarshaler
			gt, _ := u.UnmarshalTraces(g)
			wt, _ := u.UnmarshalTraces(w)
			var jm ptrace.JSONMarshaler
			gj, _ := jm.MarshalTraces(gt)
			wj, _ := jm.MarshalTraces(wt)
			t.Fatalf("batch %d differs:\nours:        %s\notel-arrow's: %s", i, gj, wj)
		}
		spans += n
	}
	return spans
}

// randomTraces makes traces with every field of every message set or not
// at random: resources and scopes shared or not, all attribute types (maps
// with one key: otel-arrow's CBOR decoding orders a map's keys at random),
// events and links with attributes, ids zero or not.
func randomTraces(rng *rand.Rand, spans int) ptrace.Traces {
	td := ptrace.NewTraces()
	str := func(n int) string {
		if rng.IntN(8) == 0 {
			return ""
		}
		return fmt.Sprintf("s%d", rng.IntN(n))
	}
	attrs := func(m pcommon.Map, n int) {
		for k := range rng.IntN(n + 1) {
			key := fmt.Sprintf("k%d", rng.IntN(12))
			if k == 0 && rng.IntN(20) == 0 {
				key = ""
			}
			switch rng.IntN(9) {
			case 0:
				m.PutStr(key, str(30))
			case 1:
				m.PutInt(key, rng.Int64N(1000)-500)
			case 2:
				m.PutDouble(key, []float64{0, 1.5, -2, math.Inf(1), 3.25}[rng.IntN(5)])
			case 3:
				m.PutBool(key, rng.IntN(2) == 0)
			case 4:
				m.PutEmptyBytes(key).FromRaw([]byte(str(5)))
			case 5:
				s := m.PutEmptySlice(key)
				s.AppendEmpty().SetStr(str(4))
				s.AppendEmpty().SetInt(rng.Int64N(9))
			case 6:
				m.PutEmptyMap(key).PutDouble(str(3), 2.5)
			case 7:
				m.PutEmpty(key)
			default:
				m.PutStr(key, "common")
			}
		}
	}
	id := func(b []byte) {
		if rng.IntN(10) != 0 {
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
		}
	}
	left := spans
	for left > 0 {
		rs := td.ResourceSpans().AppendEmpty()
		attrs(rs.Resource().Attributes(), 3)
		rs.Resource().SetDroppedAttributesCount(uint32(rng.IntN(2)))
		if rng.IntN(3) == 0 {
			rs.SetSchemaUrl(str(3))
		}
		for range 1 + rng.IntN(3) {
			if left == 0 {
				break
			}
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(str(4))
			ss.Scope().SetVersion(str(2))
			attrs(ss.Scope().Attributes(), 2)
			ss.Scope().SetDroppedAttributesCount(uint32(rng.IntN(2)))
			if rng.IntN(3) == 0 {
				ss.SetSchemaUrl(str(3))
			}
			for range 1 + rng.IntN(min(left, 20)) {
				if left == 0 {
					break
				}
				left--
				sp := ss.Spans().AppendEmpty()
				var tid [16]byte
				var sid, psid [8]byte
				for tid == [16]byte{} {
					id(tid[:])
				}
				for sid == [8]byte{} {
					id(sid[:])
				}
				id(psid[:])
				sp.SetTraceID(tid)
				sp.SetSpanID(sid)
				sp.SetParentSpanID(psid)
				sp.TraceState().FromRaw(str(3))
				sp.SetName(str(50))
				sp.SetKind(ptrace.SpanKind(rng.IntN(6)))
				sp.SetFlags(uint32(rng.IntN(3)))
				start := uint64(1e18) + rng.Uint64N(1e12)
				sp.SetStartTimestamp(pcommon.Timestamp(start))
				sp.SetEndTimestamp(pcommon.Timestamp(start + rng.Uint64N(1e9)))
				attrs(sp.Attributes(), 8)
				sp.SetDroppedAttributesCount(uint32(rng.IntN(2)))
				sp.SetDroppedEventsCount(uint32(rng.IntN(2)))
				sp.SetDroppedLinksCount(uint32(rng.IntN(2)))
				if rng.IntN(2) == 0 {
					sp.Status().SetCode(ptrace.StatusCode(rng.IntN(3)))
					sp.Status().SetMessage(str(3))
				}
				for range rng.IntN(4) {
					ev := sp.Events().AppendEmpty()
					ev.SetName(str(4))
					ev.SetTimestamp(pcommon.Timestamp(start + rng.Uint64N(1e6)))
					attrs(ev.Attributes(), 3)
					ev.SetDroppedAttributesCount(uint32(rng.IntN(2)))
				}
				for range rng.IntN(3) {
					lk := sp.Links().AppendEmpty()
					var ltid [16]byte
					var lsid [8]byte
					id(ltid[:])
					id(lsid[:])
					if rng.IntN(2) == 0 {
						ltid = tid
					}
					lk.SetTraceID(ltid)
					lk.SetSpanID(lsid)
					lk.TraceState().FromRaw(str(3))
					attrs(lk.Attributes(), 3)
					lk.SetDroppedAttributesCount(uint32(rng.IntN(2)))
					lk.SetFlags(uint32(rng.IntN(2)))
				}
			}
		}
	}
	return td
}

// randomStream produces batches of random traces with one producer (a
// stream: dictionaries and schemas carry from batch to batch, and grow).
func randomStream(t testing.TB, seed uint64, batches, spans int) []*arrowpb.BatchArrowRecords {
	rng := rand.New(rand.NewPCG(seed, 7))
	prod := arrow_record.NewProducer()
	defer prod.Close()
	var bars []*arrowpb.BatchArrowRecords
	for range batches {
		bar, err := prod.BatchArrowRecordsFromTraces(randomTraces(rng, 1+rng.IntN(spans)))
		if err != nil {
			t.Fatal(err)
		}
		bars = append(bars, bar)
	}
	return bars
}

// TestTracesEncoderMatchesPdata: on random streams the encoder's OTLP
// holds what otel-arrow's conversion to pdata holds, field by field.
func TestTracesEncoderMatchesPdata(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			spans := compareStream(t, randomStream(t, seed, 6, 200), false)
			if spans == 0 {
				t.Fatal("no spans compared")
			}
		})
	}
}

// TestTracesEncoderTestdata compares both conversions on the checked-in
// producer stream (testdata/traces.arrows: batches, each after its length
// as a uvarint; see TestWriteTracesTestdata).
func TestTracesEncoderTestdata(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "traces.arrows"))
	if err != nil {
		t.Fatal(err)
	}
	var bars []*arrowpb.BatchArrowRecords
	for len(data) > 0 {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			t.Fatal("testdata/traces.arrows is cut short")
		}
		bar := new(arrowpb.BatchArrowRecords)
		if err := proto.Unmarshal(data[k:k+int(n)], bar); err != nil {
			t.Fatal(err)
		}
		bars = append(bars, bar)
		data = data[k+int(n):]
	}
	if spans := compareStream(t, bars, false); spans == 0 {
		t.Fatal("no spans compared")
	}
}

func appendStream(out []byte, bars []*arrowpb.BatchArrowRecords) []byte {
	for _, bar := range bars {
		m, err := proto.Marshal(bar)
		if err != nil {
			panic(err)
		}
		out = binary.AppendUvarint(out, uint64(len(m)))
		out = append(out, m...)
	}
	return out
}

// TestWriteTracesTestdata writes testdata/traces.arrows and the seeds of
// FuzzTracesDifferential when ARROWRECEIVER_WRITE_SEEDS is set.
func TestWriteTracesTestdata(t *testing.T) {
	if os.Getenv("ARROWRECEIVER_WRITE_SEEDS") == "" {
		t.Skip("set ARROWRECEIVER_WRITE_SEEDS=1 to rewrite testdata/traces.arrows")
	}
	if err := os.WriteFile(filepath.Join("testdata", "traces.arrows"), appendStream(nil, randomStream(t, 100, 8, 60)), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzTracesDifferential")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(3) {
		s := appendStream(nil, randomStream(t, 200+seed, 3, 6))
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(s)))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("random-%d", seed)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzTracesDifferential decodes a stream of batches (as FuzzDecode has
// them) with the encoder and with otel-arrow's conversion: no panic, and
// where both convert a batch, the same OTLP.
func FuzzTracesDifferential(f *testing.F) {
	f.Add(seedStream(f, "traces"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var bars []*arrowpb.BatchArrowRecords
		for range fuzzBatches {
			n, k := binary.Uvarint(data)
			if k <= 0 || n > uint64(len(data)-k) {
				break
			}
			b := new(batch)
			if err := parseBatch(data[k:k+int(n)], b); err == nil {
				bars = append(bars, &b.bar)
			}
			data = data[k+int(n):]
		}
		compareStream(t, bars, true)
	})
}
