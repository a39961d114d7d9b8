package stefreceiver

import (
	"bytes"
	"strings"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
)

// cutFrame returns the messages of an uncompressed STEF stream: a frame
// of records points, each with an attribute of 4 KiB (the same one: a few
// bytes of STEF each, 4 KiB of OTLP), in a chunk, and a second frame of
// two points less its last byte in another: a client that cut the second
// frame across chunks and sends the rest later, or never. Sent together,
// the first frame's records are decoded and, the next chunk being there,
// kept in the request being built (coalesced) while the stream waits for
// the rest of the second frame.
func cutFrame(t *testing.T, records int, c pkg.Compression) []byte {
	t.Helper()
	var out chunkList
	w, err := otelstef.NewMetricsWriter(&out, pkg.WriterOptions{Compression: c})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 4<<10)
	w.Record.Attributes().EnsureLen(1)
	w.Record.Attributes().SetKey(0, "payload")
	w.Record.Attributes().Value(0).SetString(big)
	for i := range records + 2 {
		w.Record.Metric().SetName("requests")
		w.Record.Point().SetTimestamp(uint64(1 + i))
		w.Record.Point().Value().SetInt64(int64(i))
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
		if i == records-1 || i == records+1 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The writer's chunks: the headers, the first frame, the second.
	if len(out) < 3 {
		t.Fatalf("%d chunks written, want the headers and two frames", len(out))
	}
	var msgs chunkBuffer
	last := out[len(out)-1]
	msgs.WriteChunk(bytes.Join(out[:len(out)-1], nil), nil)
	msgs.WriteChunk(last[:len(last)-1], nil)
	return msgs.msgs
}

// chunkList keeps each chunk a STEF writer writes.
type chunkList [][]byte

func (c *chunkList) WriteChunk(header, content []byte) error {
	if len(header)+len(content) > 0 {
		*c = append(*c, append(append([]byte(nil), header...), content...))
	}
	return nil
}

// midFrameWait is what a stream held and what was charged as it waited
// for its client with a request under way.
type midFrameWait struct {
	len, cap int
	charged  int64
}

// waitsMidFrame makes r's streams report their waits with a request under
// way.
func waitsMidFrame(r *Receiver, pl *ingest.Pipeline) <-chan midFrameWait {
	waits := make(chan midFrameWait, 1)
	r.waiting = func(s *stream) {
		if s.b == nil {
			return
		}
		if buf := s.b.buf(); len(*buf) > 0 {
			select {
			case waits <- midFrameWait{len(*buf), cap(*buf), pl.StreamStateHeld()}:
			default:
			}
		}
	}
	return waits
}

// A stream that waits for the rest of a frame holds the request the
// frames before it were decoded into (coalesced), up to MaxRequestBytes
// (4 MiB), from a few KB of STEF: the records repeat a large attribute. Not acknowledged, it
// cannot be let go; it is charged to the budget while the stream waits.
// (It was not: an uncompressed stream charged StateCostPlain, 64 KiB, and
// its dictionaries, and held megabytes for as long as its client liked,
// on as many streams as 64 KiB charges fit.)
func TestStreamWaitingMidFrameChargesItsRequest(t *testing.T) {
	sink := &memSink{}
	addr, pl, r := serveSinkR(t, sink, ingest.AdmissionConfig{})
	waits := waitsMidFrame(r, pl)
	data := cutFrame(t, 700, pkg.CompressionNone)
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	if _, err := p.w.Write(data); err != nil {
		t.Fatal(err)
	}
	w := <-waits
	t.Logf("%d bytes of STEF sent; the stream waits with a request of %d bytes (buffer %d), stream state charged %d", len(data), w.len, w.cap, w.charged)
	if w.charged < StateCostPlain+int64(w.cap) {
		t.Errorf("a stream waiting for the rest of its frame holds a request buffer of %d bytes, and the stream state charged is %d: not covered", w.cap, w.charged)
	}
	p.w.Close()
	p.status()
	if held, spared := pl.StreamStateHeld(), r.sparesHeld(); held != spared {
		t.Errorf("%d bytes of stream state charged after the stream ended, %d of them spares", held, spared)
	}
}

// With no room in the budget for the request a stream would hold while it
// waits for the rest of a frame, the frames before it are stored and
// acknowledged (as when the next frame cannot be read) and the stream
// ends, UNAVAILABLE (retryable): the client sends the cut frame again on
// its next stream, which, sending whole frames, is served, and its
// records stored. No stream state stays charged.
func TestStreamWaitingMidFrameWithoutRoomEnds(t *testing.T) {
	// The state half holds a zstd stream's StateCostZstd and its
	// dictionaries' step, and less than the 600 KB request beside them.
	limit := int64(2 * (StateCostZstd + 2*ingest.StateChargeStep))
	sink := &memSink{}
	addr, pl, r := serveSinkR(t, sink, ingest.AdmissionConfig{RequestLimit: limit})
	waits := waitsMidFrame(r, pl)
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	if _, err := p.w.Write(cutFrame(t, 150, pkg.CompressionZstd)); err != nil {
		t.Fatal(err)
	}
	type end struct {
		ack uint64
		st  string
	}
	ended := make(chan end, 1)
	go func() {
		var e end
		if msg := p.recv(t); msg != nil {
			e.ack, _ = parseAck(t, msg)
		}
		e.st = p.status()
		ended <- e
	}()
	select {
	case w := <-waits:
		t.Fatalf("the stream waits with a request of %d bytes (buffer %d), %d charged", w.len, w.cap, w.charged)
	case e := <-ended:
		if e.ack != 150 || !strings.HasPrefix(e.st, "14 ") {
			t.Fatalf("ack %d, status %q: want the first frame's 150 records acknowledged, then UNAVAILABLE", e.ack, e.st)
		}
	}
	sink.mu.Lock()
	stored := sink.items
	sink.mu.Unlock()
	if stored != 150 {
		t.Fatalf("%d points stored, 150 acknowledged", stored)
	}
	if got := r.refusedState.Get(); got != 1 {
		t.Fatalf("no_room_for_state refusals %d, want 1", got)
	}

	// The client's next stream, whole frames: served.
	p = dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	var rest bufferChunks
	wr, err := otelstef.NewMetricsWriter(&rest, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writePoints(t, wr, 10, 0)
	if err := wr.Flush(); err != nil {
		t.Fatal(err)
	}
	p.sendChunk(t, rest.Bytes())
	if ack, bad := parseAck(t, p.recv(t)); ack != 10 || len(bad) != 0 {
		t.Fatalf("ack %d bad %v", ack, bad)
	}
	p.w.Close()
	if st := p.status(); st != "0 " {
		t.Fatalf("status %q", st)
	}
	sink.mu.Lock()
	stored = sink.items
	sink.mu.Unlock()
	if stored != 160 {
		t.Fatalf("%d points stored, 160 acknowledged", stored)
	}
	if held, spared := pl.StreamStateHeld(), r.sparesHeld(); held != spared {
		t.Errorf("%d bytes of stream state charged after the streams ended, %d of them spares", held, spared)
	}
}
