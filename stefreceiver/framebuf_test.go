package stefreceiver

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/storage"
)

// countSink counts what it stores and keeps none of it.
type countSink struct {
	mu    sync.Mutex
	items int
}

func (s *countSink) Write(_ context.Context, _ storage.Signal, _ []byte, items int) error {
	s.mu.Lock()
	s.items += items
	s.mu.Unlock()
	return nil
}

func (s *countSink) Close() error { return nil }

func (s *countSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.items
}

// countingWire counts the bytes of the chunks a writer sends.
type countingWire struct {
	chunkSender
	n *int
}

func (c countingWire) WriteChunk(header, content []byte) error {
	*c.n += len(header) + len(content)
	return c.chunkSender.WriteChunk(header, content)
}

// bigFramePoints is the points of one frame in TestFrameBuffersCharged:
// about 8 MB of STEF columns (12 bytes a point), a few KB compressed.
const bigFramePoints = 700_000

// writeBigFrame writes one frame of n points whose values repeat with a
// short period: the columns are as large as their points make them (12
// bytes a point), and zstd makes them small on the wire.
func writeBigFrame(t *testing.T, w *otelstef.MetricsWriter, n int) {
	var vals [16]int64
	for i := range vals {
		vals[i] = rand.Int64()
	}
	for i := range n {
		w.Record.Point().SetTimestamp(uint64(2 + i%16))
		w.Record.Point().Value().SetInt64(vals[i%16])
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// A stream keeps the STEF library's frame buffers (its column buffers, as
// large as the largest frame's columns) for its life: the few streams
// here each send one frame of about 8 MB of columns that zstd makes a
// few KB on the wire, and then wait for their clients. What they hold
// while they wait is what the budget was charged (the zstd decoder, the
// request buffer kept, and the library's buffers), within a MiB a stream;
// every point is stored and acknowledged.
func TestFrameBuffersCharged(t *testing.T) {
	sink := &countSink{}
	addr, pl, r := serveSinkR(t, sink, ingest.AdmissionConfig{})
	idle := make(chan struct{}, 8)
	r.waiting = func(s *stream) {
		if s.acked > 1 {
			idle <- struct{}{}
		}
	}
	heap := heapAfterGC
	const streams = 3
	before := heap()
	in0, _ := pl.AdmissionState()
	peers := make([]*peer, streams)
	wire := make([]int, streams)
	for i := range peers {
		// A first point: the header read, the decoder made.
		p, w := openBigCounted(t, addr, &wire[i])
		peers[i] = p
		writeBigFrame(t, w, bigFramePoints)
		for acked := uint64(0); acked < bigFramePoints+1; {
			ack, bad := parseAck(t, p.recv(t))
			if len(bad) != 0 {
				t.Fatalf("bad %v", bad)
			}
			acked = ack
		}
		<-idle
		// The writer (its encoder, its own columns) is the client's,
		// not measured.
	}
	in1, _ := pl.AdmissionState()
	held, charged := heap()-before, in1-in0
	t.Logf("%d streams, each sent one frame in %d bytes on the wire: they hold %d bytes a stream, charged %d a stream",
		streams, wire[0], held/streams, charged/streams)
	if held-charged > streams<<20 {
		t.Errorf("the streams hold %d bytes a stream, %d more than they are charged", held/streams, (held-charged)/streams)
	}
	for _, p := range peers {
		p.w.Close()
		if st := p.status(); st != "0 " {
			t.Fatalf("status %q", st)
		}
	}
	if n := sink.count(); n != streams*(bigFramePoints+1) {
		t.Fatalf("stored %d points, acknowledged %d", n, streams*(bigFramePoints+1))
	}
}

// The frame meter finds the column buffers and the string decoders of
// both readers the library has, and sees a frame's columns once it is
// read: if a newer library moves them, this fails rather than the charge
// going quiet.
func TestFrameMeterKnowsTheReaders(t *testing.T) {
	var mb, sb bufferChunks
	mw, err := otelstef.NewMetricsWriter(&mb, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writePoints(t, mw, 1000, 0)
	mw.Flush()
	sw, err := otelstef.NewSpansWriter(&sb, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		sw.Record.Span().SetName("GET /" + strconv.Itoa(i))
		if err := sw.Write(); err != nil {
			t.Fatal(err)
		}
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
	for name, rd := range map[string]interface {
		Read(pkg.ReadOptions) error
	}{"metrics": mr, "spans": sr} {
		m := newFrameMeter(rd)
		if m == nil {
			t.Fatalf("%s reader: no frame buffers found: the library's layout changed (framebufs.go)", name)
		}
		if len(m.cols) < 20 || len(m.strs) < 5 {
			t.Fatalf("%s reader: %d columns and %d string decoders found, want dozens", name, len(m.cols), len(m.strs))
		}
		t.Logf("%s reader: %d column buffers, %d string decoders", name, len(m.cols), len(m.strs))
		if n := m.resident(); n != 0 {
			t.Fatalf("%s reader: %d bytes before a frame is read", name, n)
		}
		if err := rd.Read(pkg.ReadOptions{}); err != nil {
			t.Fatal(err)
		}
		if m.resident() < 1000 || m.strings() == 0 {
			t.Fatalf("%s reader: %d bytes held, %d of strings, for a frame of 1000 records", name, m.resident(), m.strings())
		}
	}
	if newFrameMeter(&struct{ base int }{}) != nil || newFrameMeter(nil) != nil {
		t.Fatal("a value that is not a reader has a meter")
	}
}

// openBig opens a zstd stream whose writer may make frames up to the
// library's limit, and has its first point acknowledged.
func openBig(t *testing.T, addr string) (*peer, *otelstef.MetricsWriter) {
	t.Helper()
	return openBigCounted(t, addr, nil)
}

// openBigCounted is openBig, counting the bytes the writer sends in
// *wire when wire is not nil.
func openBigCounted(t *testing.T, addr string, wire *int) (*peer, *otelstef.MetricsWriter) {
	t.Helper()
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	var sender pkg.ChunkWriter = chunkSender{t, p}
	if wire != nil {
		sender = countingWire{chunkSender{t, p}, wire}
	}
	w, err := otelstef.NewMetricsWriter(sender, pkg.WriterOptions{
		Compression:                  pkg.CompressionZstd,
		MaxUncompressedFrameByteSize: pkg.FrameSizeLimit - 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	writePoints(t, w, 1, 0)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if ack, _ := parseAck(t, p.recv(t)); ack != 1 {
		t.Fatalf("ack %d, want 1", ack)
	}
	return p, w
}

// A frame larger than MaxFrameBytes uncompressed (2.4 MB of columns, a
// few KB of zstd) is refused RESOURCE_EXHAUSTED before the reader reads
// it; what was acknowledged before it is stored, nothing of it, and the
// refusal is counted.
func TestFrameTooLargeRefused(t *testing.T) {
	sink := &countSink{}
	pl := ingest.New(ingest.Config{Sink: sink})
	r := New(pl, Config{MaxFrameBytes: 1 << 20})
	addr := serveH2C(t, r)
	p, w := openBig(t, addr)
	writeBigFrame(t, w, 200_000)
	if msg := p.recv(t); msg != nil {
		ack, _ := parseAck(t, msg)
		t.Fatalf("the frame was read and acknowledged (%d)", ack)
	}
	if st := p.status(); !strings.HasPrefix(st, "8 ") || !strings.Contains(st, "larger than 1048576") {
		t.Fatalf("status %q, want RESOURCE_EXHAUSTED naming the bound", st)
	}
	if got := r.refusedFrame.Get(); got != 1 {
		t.Fatalf(`otlplite_stef_refusals_total{reason="frame_too_large"} %d, want 1`, got)
	}
	if n := sink.count(); n != 1 {
		t.Fatalf("stored %d points, acknowledged 1", n)
	}
	if held, spared := pl.StreamStateHeld(), r.sparesHeld(); held != spared {
		t.Fatalf("stream state %d bytes after the stream ended, %d of them spares", held, spared)
	}
}

// A frame whose buffers do not fit in the budget beside the stream's
// state is refused before the reader reads it (no_room_for_state): the
// stream ends, what was acknowledged before it stored, nothing of it, and
// its charges returned; an honest stream is served afterwards.
func TestFrameWithoutRoomEnds(t *testing.T) {
	sink := &countSink{}
	// State may take half the budget: a zstd stream's state and a few
	// steps, not an 8 MB frame's buffers.
	pl := ingest.New(ingest.Config{Sink: sink, Admission: ingest.AdmissionConfig{RequestLimit: 2 * (StateCostZstd + 4*ingest.StateChargeStep)}})
	r := New(pl, Config{})
	addr := serveH2C(t, r)
	p, w := openBig(t, addr)
	writeBigFrame(t, w, bigFramePoints)
	if msg := p.recv(t); msg != nil {
		ack, _ := parseAck(t, msg)
		t.Fatalf("the frame was read and acknowledged (%d) without room for its buffers", ack)
	}
	st := p.status()
	if !strings.Contains(st, "no room for a STEF frame's buffers") {
		t.Fatalf("status %q, want no room for the frame", st)
	}
	if got := r.refusedState.Get(); got != 1 {
		t.Fatalf(`otlplite_stef_refusals_total{reason="no_room_for_state"} %d, want 1`, got)
	}
	if n := sink.count(); n != 1 {
		t.Fatalf("stored %d points, acknowledged 1", n)
	}
	if held, spared := pl.StreamStateHeld(), r.sparesHeld(); held != spared {
		t.Fatalf("stream state %d bytes after the stream ended, %d of them spares", held, spared)
	}
	honest := dial(t, addr)
	honest.sendFirst(t, "Metrics")
	honest.recv(t)
	hw, _ := otelstef.NewMetricsWriter(chunkSender{t, honest}, pkg.WriterOptions{Compression: pkg.CompressionZstd})
	writePoints(t, hw, 3, 0)
	hw.Flush()
	if ack, _ := parseAck(t, honest.recv(t)); ack != 3 {
		t.Fatalf("honest stream: ack %d, want 3", ack)
	}
}

// The strings a frame adds to the dictionaries point into that frame's
// string columns (the library decodes them in place), so a dictionary
// entry of a few bytes keeps its frame's string column: frames whose
// string column is large (a value alternating between two one-letter
// strings, which are written in the column and not kept in the
// dictionary, 2 bytes a point) and each adding one string keep every one
// of those columns while the dictionaries live. The stream, waiting after them, is
// charged what it holds, within a MiB; every point is stored.
func TestDictionaryKeptColumnsCharged(t *testing.T) {
	sink := &countSink{}
	addr, pl, r := serveSinkR(t, sink, ingest.AdmissionConfig{})
	idle := make(chan struct{}, 8)
	r.waiting = func(s *stream) {
		if s.acked > 1 {
			idle <- struct{}{}
		}
	}
	heap := heapAfterGC
	before := heap()
	in0, _ := pl.AdmissionState()
	p, w := openBig(t, addr)
	const frames, perFrame = 8, 250_000
	points := 1
	for f := range frames {
		w.Record.Attributes().EnsureLen(1)
		w.Record.Attributes().SetKey(0, "v")
		for i := range perFrame {
			v := "a"
			switch {
			case i == 0:
				v = "new-" + strconv.Itoa(f)
			case i%2 == 1:
				v = "b"
			}
			w.Record.Attributes().Value(0).SetString(v)
			w.Record.Point().SetTimestamp(uint64(2 + i))
			if err := w.Write(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		points += perFrame
		for acked := uint64(0); acked < uint64(points); {
			ack, bad := parseAck(t, p.recv(t))
			if len(bad) != 0 {
				t.Fatalf("bad %v", bad)
			}
			acked = ack
		}
		<-idle
	}
	w = nil
	in1, _ := pl.AdmissionState()
	held, charged := heap()-before, in1-in0
	t.Logf("%d frames of %d points, each adding a string: the stream holds %d bytes, charged %d", frames, perFrame, held, charged)
	if held-charged > 1<<20 {
		t.Errorf("the stream holds %d bytes, %d more than it is charged", held, held-charged)
	}
	p.w.Close()
	if st := p.status(); st != "0 " {
		t.Fatalf("status %q", st)
	}
	if n := sink.count(); n != points {
		t.Fatalf("stored %d points, acknowledged %d", n, points)
	}
}

// An honest stream of 8,192-point frames (as the Collector's exporter
// sends a batch), each frame adding a metric name to the dictionaries:
// the string columns those keep are charged, and the stream is neither
// rotated nor refused for them; every point is stored and acknowledged.
func TestHonestLargeFramesKeepTheirStream(t *testing.T) {
	sink := &countSink{}
	addr, pl, r := serveSinkR(t, sink, ingest.AdmissionConfig{})
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	wire := 0
	w, err := otelstef.NewMetricsWriter(countingWire{chunkSender{t, p}, &wire}, pkg.WriterOptions{Compression: pkg.CompressionZstd})
	if err != nil {
		t.Fatal(err)
	}
	const frames, perFrame = 32, 8192
	for f := range frames {
		for i := range perFrame {
			rec := &w.Record
			rec.Resource().Attributes().EnsureLen(1)
			rec.Resource().Attributes().SetKey(0, "service.name")
			rec.Resource().Attributes().Value(0).SetString("checkout")
			rec.Metric().SetName("requests." + strconv.Itoa(f*4+i%4))
			rec.Metric().SetType(otelstef.MetricTypeSum)
			rec.Attributes().EnsureLen(1)
			rec.Attributes().SetKey(0, "route")
			rec.Attributes().Value(0).SetString("/api/" + strconv.Itoa(i%64))
			rec.Point().SetTimestamp(uint64(1700000000000000000 + f*perFrame + i))
			rec.Point().Value().SetInt64(int64(i))
			if err := w.Write(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		for acked := uint64(0); acked < uint64((f+1)*perFrame); {
			ack, bad := parseAck(t, p.recv(t))
			if len(bad) != 0 {
				t.Fatalf("bad %v", bad)
			}
			acked = ack
		}
	}
	t.Logf("%d frames of %d points, %d bytes on the wire: stream state charged %d", frames, perFrame, wire, pl.StreamStateHeld())
	p.w.Close()
	if st := p.status(); st != "0 " {
		t.Fatalf("status %q", st)
	}
	if got := r.dictRotations.Get() + r.rotations.Get() + r.refusedState.Get() + r.refusedFrame.Get(); got != 0 {
		t.Fatalf("%d rotations or refusals", got)
	}
	if n := sink.count(); n != frames*perFrame {
		t.Fatalf("stored %d points, acknowledged %d", n, frames*perFrame)
	}
}
