package stefreceiver

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/otlp-lite/otlp-lite/internal/pbappend"
	"strings"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
)

// bufferChunks collects what a STEF writer writes, as a stream.
type bufferChunks struct{ bytes.Buffer }

func (b *bufferChunks) WriteChunk(header, content []byte) error {
	b.Write(header)
	b.Write(content)
	return nil
}

// writeUniqueResources writes n points, each with a resource of its own:
// an attribute value of size bytes never seen before, which the writer
// puts in its dictionaries (the resource's and the strings').
func writeUniqueResources(t testing.TB, w *otelstef.MetricsWriter, n, from, size int) {
	pad := strings.Repeat("x", size)
	for i := range n {
		r := &w.Record
		r.Resource().Attributes().EnsureLen(1)
		r.Resource().Attributes().SetKey(0, "service.instance.id")
		r.Resource().Attributes().Value(0).SetString(fmt.Sprintf("%08d%s", from+i, pad))
		r.Metric().SetName("requests")
		r.Metric().SetType(otelstef.MetricTypeGauge)
		r.Point().SetTimestamp(uint64(1 + from + i))
		r.Point().Value().SetInt64(int64(i))
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
	}
}

// lenientSender sends chunks until the server ends the stream, then drops
// them: a rotated stream's client sees the end in the server's status.
type lenientSender struct{ p *peer }

func (c lenientSender) WriteChunk(header, content []byte) error {
	msg := pbappend.VarintField(pbappend.BytesField(nil, 2, append(append([]byte(nil), header...), content...)), 3, 1)
	var hdr [5]byte
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(msg)))
	c.p.w.Write(append(hdr[:], msg...)) // an error: the stream ended
	return nil
}

// The meter finds the dictionaries of both readers the library has: if a
// newer library moves them, this fails rather than the bound going quiet.
func TestDictMeterKnowsTheReaders(t *testing.T) {
	var mb, sb bufferChunks
	mw, err := otelstef.NewMetricsWriter(&mb, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writePoints(t, mw, 1, 0)
	mw.Flush()
	sw, err := otelstef.NewSpansWriter(&sb, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sw.Record.Span().SetName("GET /")
	if err := sw.Write(); err != nil {
		t.Fatal(err)
	}
	sw.Flush()
	mr, err := otelstef.NewMetricsReader(&mb)
	if err != nil {
		t.Fatal(err)
	}
	sr, err := otelstef.NewSpansReader(&sb)
	if err != nil {
		t.Fatal(err)
	}
	for name, rd := range map[string]any{"metrics": mr, "spans": sr} {
		m := newDictMeter(rd)
		if m == nil {
			t.Fatalf("%s reader: no dictionaries found: the library's layout changed (dicts.go)", name)
		}
		if len(m.dicts) < 10 {
			t.Fatalf("%s reader: %d dictionaries found, want the dozen of otelstef v0.1.1", name, len(m.dicts))
		}
	}
	if newDictMeter(&struct{ state int }{}) != nil || newDictMeter(&struct {
		state struct{ XDecoderDict struct{ dict int } }
	}{}) != nil || newDictMeter(nil) != nil {
		t.Fatal("a value that is not a reader has a meter")
	}
}

// What the meter counts covers what the writer put in the dictionaries
// (resources with a 1 KB value each), and falls back when the writer
// restarts them: its limit, 150 KB by its own count, is reached after
// about 146 of the 300 records.
func TestDictMeterCountsAndRestarts(t *testing.T) {
	var b bufferChunks
	w, err := otelstef.NewMetricsWriter(&b, pkg.WriterOptions{MaxTotalDictSize: 150_000})
	if err != nil {
		t.Fatal(err)
	}
	writeUniqueResources(t, w, 300, 0, 1000)
	w.Flush()
	rd, err := otelstef.NewMetricsReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	m := newDictMeter(rd)
	var peak, fell int64
	for range 300 {
		if err := rd.Read(pkg.ReadOptions{}); err != nil {
			t.Fatal(err)
		}
		held := m.measure()
		if held < peak && fell == 0 {
			fell = held
		}
		peak = max(peak, held)
	}
	if peak < 140*1000 {
		t.Fatalf("meter peaked at %d bytes, want at least the 140 KB of values the writer put in its dictionaries", peak)
	}
	if fell == 0 || fell > peak/10 {
		t.Fatalf("meter fell to %d bytes when the dictionaries restarted (peak %d), want a tenth or less", fell, peak)
	}
	t.Logf("dictionaries of ~146 unique 1 KB resources: %d bytes by the meter", peak)
}

// A writer that ignores the dictionary limit it was told grows the
// dictionaries by a resource per record. The stream's charge follows them
// up to MaxDictMemory, then what was read is acknowledged and stored and
// the stream rotates (UNAVAILABLE), its charge returned; the budget never
// holds more than the bound for it.
func TestHostileDictionariesRotateWithinBound(t *testing.T) {
	const bound = 1 << 20
	sink := &memSink{}
	p := ingest.New(ingest.Config{Sink: sink})
	r := New(p, Config{MaxDictMemory: bound})
	addr := serveH2C(t, r)
	pc := dial(t, addr)
	pc.sendFirst(t, "Metrics")
	pc.recv(t)
	w, err := otelstef.NewMetricsWriter(lenientSender{pc}, pkg.WriterOptions{MaxTotalDictSize: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	// 4 MB of unique resources, flushed a frame at a time; the server
	// ends the stream partway, so later writes may fail: that is fine.
	var acked uint64
	for f := range 16 {
		writeUniqueResources(t, w, 64, f*64, 4000)
		w.Flush()
		msg := pc.recv(t)
		if msg == nil {
			break
		}
		acked, _ = parseAck(t, msg)
		// Besides its reader and dictionaries, a waiting stream is
		// charged the buffer it keeps for its next request (idle): at
		// most twice the largest request, a step more; and its frame
		// buffers: the string columns the dictionaries keep (within
		// the bound with them), a frame's columns twice (the one read
		// and the next, charged as it starts), a step more.
		const frame = 300 << 10
		limit := StateCostPlain + bound + DictChargeStep + 2*int64(sink.largest()) + ingest.StateChargeStep +
			bound + 2*frame + ingest.StateChargeStep
		if held := p.StreamStateHeld(); held > limit {
			t.Fatalf("stream state %d bytes, above the bound %d", held, limit)
		}
	}
	st := pc.status()
	if !strings.HasPrefix(st, "14 ") || !strings.Contains(st, "rotated") {
		t.Fatalf("status %q, want UNAVAILABLE (rotation)", st)
	}
	if acked == 0 || uint64(sink.items) != acked {
		t.Fatalf("stored %d points, acknowledged %d: want every acknowledged point stored", sink.items, acked)
	}
	if acked*4000 > 3*bound {
		t.Fatalf("acknowledged %d records of 4 KB before rotating: the bound (%d) did not hold", acked, bound)
	}
	if held, spared := p.StreamStateHeld(), r.sparesHeld(); held != spared {
		t.Fatalf("stream state %d bytes after the stream ended, %d of them spares: want only spares", held, spared)
	}
	if got := r.dictRotations.Get(); got != 1 {
		t.Fatalf("otlplite_stef_dictionary_rotations_total %d, want 1", got)
	}
	if got := r.dictBytes.Load(); got != 0 {
		t.Fatalf("otlplite_stef_dictionary_bytes %d after the stream ended, want 0", got)
	}
	// An honest client afterwards is served as usual.
	honest := dial(t, addr)
	honest.sendFirst(t, "Metrics")
	honest.recv(t)
	hw, _ := otelstef.NewMetricsWriter(chunkSender{t, honest}, pkg.WriterOptions{})
	writePoints(t, hw, 3, 0)
	hw.Flush()
	if ack, _ := parseAck(t, honest.recv(t)); ack != 3 {
		t.Fatalf("honest stream: ack %d, want 3", ack)
	}
}
