package handler

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
)

// streamStateNotSpare is the stream state charged beyond the spares the
// ended streams left (streamSpares): the open streams' own.
func (h *Handler) streamStateNotSpare() int64 {
	_, spared := h.spares.held()
	return h.p.StreamStateHeld() - spared
}

// waitSpares waits until the ended streams' decoders are n spares and no
// stream holds state of its own: a stream gives its charge back, then its
// decoders to the spares (streamCodec.close), after its client has its
// answer.
func waitSpares(t *testing.T, h *Handler, n int) {
	t.Helper()
	waitFor(t, func() bool {
		k, _ := h.spares.held()
		return k == n && h.streamStateNotSpare() == 0
	})
}

// oneSpare is what one ended stream with zstd and columns leaves.
var oneSpare = compression.StreamDecoderCost(DefaultStreamCompressionWindow) + otlpcolumns.DecoderCost

// columnsStreams opens n zstd and columns trace streams at once (each holds
// its decoders), sends a request on each, and ends them; it returns the
// requests acknowledged.
func columnsStreams(t *testing.T, c *grpcwire.Client, n int) int {
	t.Helper()
	var streams []*testStream
	for range n {
		s := openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, "zstd; columns")
		if got := s.resp.Header.Get(otlp.StreamCompressionHeader); !otlp.AcceptedStreamColumns(got) {
			t.Fatalf("answer %q, want zstd and columns", got)
		}
		streams = append(streams, s)
	}
	acked := 0
	for i, s := range streams {
		enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
		s.sendColumns(otlpcolumns.NewEncoder(otlpcolumns.Traces), enc, uint64(i+1), traceRequest(goodID))
		s.pw.Close()
		acks, st := s.finish()
		if st.Code != grpcwire.OK {
			t.Fatalf("stream %d: %v", i, st)
		}
		acked += len(acks)
		enc.Close()
	}
	return acked
}

// TestStreamSparesReused: an ended stream's decoders, reset, are kept for
// the next stream (charged while they wait), which takes them, decodes
// its own requests with them and stores them whole.
func TestStreamSparesReused(t *testing.T) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	c := startHandler(t, h)
	if acked := columnsStreams(t, c, 1); acked != 1 {
		t.Fatalf("%d acknowledged", acked)
	}
	waitSpares(t, h, 2)
	if n, cost := h.spares.held(); n != 2 || cost != oneSpare || h.p.StreamStateHeld() != cost {
		t.Fatalf("%d spares charged %d, stream state %d: want the stream's two decoders, %d", n, cost, h.p.StreamStateHeld(), oneSpare)
	}
	for range 3 {
		if acked := columnsStreams(t, c, 1); acked != 1 {
			t.Fatalf("%d acknowledged", acked)
		}
		waitSpares(t, h, 2) // the next stream finds them
	}
	for _, kind := range []string{"zstd", "columns"} {
		if n := counterValue(h.Metrics(), `otlplite_stream_decoders_reused_total{kind="`+kind+`"}`); n != 3 {
			t.Fatalf("%s decoders reused %d times, want 3", kind, n)
		}
	}
	if n := len(sink.all()); n != 4 {
		t.Fatalf("%d stored, want 4", n)
	}
	for _, r := range sink.all() {
		if string(r.data) != string(traceRequest(goodID)) {
			t.Fatal("stored other bytes than the plain request")
		}
	}
}

// TestStreamSparesBounded: a client that opens many compressed streams at
// once, or opens and ends them in a loop, leaves at most maxStreamSpares
// decoders of each kind, all charged; with the budget half full of
// spares, honest streams and requests still find room (the spares go
// first), and every request acknowledged is stored.
func TestStreamSparesBounded(t *testing.T) {
	// Stream state may take half the budget: maxStreamSpares+2 streams
	// at once.
	limit := 2 * (maxStreamSpares + 2) * oneSpare
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger(), Admission: AdmissionConfig{RequestLimit: limit, MaxWait: time.Millisecond}})
	c := startHandler(t, h)
	acked := columnsStreams(t, c, maxStreamSpares+2)
	waitSpares(t, h, 2*maxStreamSpares)
	n, cost := h.spares.held()
	t.Logf("%d streams ended: %d decoders kept, charged %d", maxStreamSpares+2, n, cost)
	if n != 2*maxStreamSpares || cost != maxStreamSpares*oneSpare {
		t.Fatalf("%d decoders kept, charged %d: want %d, %d", n, cost, 2*maxStreamSpares, maxStreamSpares*oneSpare)
	}
	// A loop of streams opened and ended: never more kept.
	for range 10 {
		acked += columnsStreams(t, c, 1)
		waitFor(t, func() bool { return h.streamStateNotSpare() == 0 })
		if n, c := h.spares.held(); n > 2*maxStreamSpares || c > maxStreamSpares*oneSpare || h.p.StreamStateHeld() != c {
			t.Fatalf("%d decoders kept, charged %d, stream state %d", n, c, h.p.StreamStateHeld())
		}
	}
	// Three streams at once beside the spares: none declined.
	acked += columnsStreams(t, c, 3)
	if n := counterValue(h.Metrics(), "otlplite_stream_compression_declined_total"); n != 0 {
		t.Fatalf("%d offers declined: the spares took an honest stream's room", n)
	}
	if n := len(sink.all()); n != acked {
		t.Fatalf("%d stored, %d acknowledged", n, acked)
	}
	// A request that fits only without the spares is admitted at once.
	waitFor(t, func() bool { return h.streamStateNotSpare() == 0 })
	_, kept := h.spares.held()
	if kept == 0 {
		t.Fatal("no spares kept")
	}
	tk := h.p.Take(context.Background())
	defer h.p.Done(tk)
	need := limit - kept + oneSpare
	if err := tk.Charge(context.Background(), int(need)); err != nil {
		t.Fatalf("a request of %d bytes waited or was refused while spares held %d of the %d budget: %v", need, kept, limit, err)
	}
	if n, c := h.spares.held(); n != 0 || c != 0 {
		t.Fatalf("%d spares still charged %d after a request needed their room", n, c)
	}
}

// TestStreamSpareForgetsItsStream: a spare zstd decoder carries nothing of
// the stream it decoded to the next: a client whose first message is a
// zstd frame header and then a block that refers to another client's
// stream (that stream's second message) is refused INVALID_ARGUMENT
// (cannot decompress), nothing of it stored, though the decoder it got
// decoded that stream.
func TestStreamSpareForgetsItsStream(t *testing.T) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	c := startHandler(t, h)
	req := traceRequest(goodID, goodID, goodID)
	enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
	first, _ := enc.AppendMessage(nil, envelope(1, req))
	second, _ := enc.AppendMessage(nil, envelope(2, req))

	a := openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, "zstd")
	a.sendRaw(first)
	a.pw.Close()
	if acks, st := a.finish(); st.Code != grpcwire.OK || len(acks) != 1 {
		t.Fatalf("stream a: %v, %d acks", st, len(acks))
	}
	waitSpares(t, h, 1)
	if n, _ := h.spares.zstd.Held(); n != 1 {
		t.Fatalf("%d zstd decoders kept after stream a", n)
	}

	// The frame header of a's first message, then a's second message's
	// block, under a's second message's length.
	_, k := binary.Uvarint(first[1:])
	z := first[1+k:]
	hdr := 6 + []int{0, 1, 2, 4}[z[4]&3] // magic, descriptor, window; no content size
	if z[4]&0xe0 != 0 {
		t.Fatalf("frame descriptor %#x: a content size or a single segment", z[4])
	}
	n2, k2 := binary.Uvarint(second[1:])
	forged := binary.AppendUvarint([]byte{0}, n2)
	forged = append(append(forged, z[:hdr]...), second[1+k2:]...)

	b := openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, "zstd")
	b.sendRaw(forged)
	b.pw.Close()
	acks, st := b.finish()
	if st.Code != grpcwire.InvalidArgument || len(acks) != 0 {
		t.Fatalf("stream b: %v, %d acks: decoded from stream a's history", st, len(acks))
	}
	t.Logf("stream b: %v", st)
	if n := counterValue(h.Metrics(), `otlplite_stream_decoders_reused_total{kind="zstd"}`); n != 1 {
		t.Fatalf("stream b did not take a's decoder (%d reused)", n)
	}
	if n := len(sink.all()); n != 1 {
		t.Fatalf("%d stored, stream a's one alone expected", n)
	}
}
