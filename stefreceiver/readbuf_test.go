package stefreceiver

import (
	"math/rand/v2"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
)

// readBuffers returns what a stream's gRPC read buffers (the last
// message, its compressed bytes, the chunk's) hold beyond maxIdleBuffer
// each: what a waiting stream keeps only charged.
func (s *stream) readBuffers() int64 {
	var n int64
	for _, b := range [][]byte{s.msg, s.scratch, s.own} {
		if cap(b) > maxIdleBuffer {
			n += int64(cap(b))
		}
	}
	return n
}

// A stream that read a large chunk (one message of 512 KiB, a frame of
// records with attributes that do not repeat, as honest as any) and waits
// for its client keeps the buffers it read it in only charged: the gRPC
// message it came in (up to MaxChunkBytes, 8 MiB, twice with grpc
// compression) was kept uncharged, after the chunk's charge was given
// back, for as long as the client liked to stay quiet, on as many streams
// as StateCostPlain charges fit (1,024 at the default budget: gigabytes).
// Every record is stored and acknowledged, and the next frame is read as
// usual.
func TestWaitingStreamChargesItsReadBuffers(t *testing.T) {
	sink := &memSink{}
	addr, pl, r := serveSinkR(t, sink, ingest.AdmissionConfig{})
	type wait struct{ read, charged int64 }
	waits := make(chan wait, 4)
	r.waiting = func(s *stream) {
		if s.acked == 0 {
			return // the header, not yet the large frame
		}
		select {
		case waits <- wait{s.readBuffers(), s.bufCharge.Held()}:
		default:
		}
	}
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	w, err := otelstef.NewMetricsWriter(chunkSender{t, p}, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 512<<10)
	for i := range big {
		big[i] = 'a' + byte(rand.IntN(26))
	}
	w.Record.Attributes().EnsureLen(1)
	w.Record.Attributes().SetKey(0, "payload")
	w.Record.Attributes().Value(0).SetString(string(big))
	w.Record.Metric().SetName("requests")
	w.Record.Point().SetTimestamp(1)
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if ack, bad := parseAck(t, p.recv(t)); ack != 1 || len(bad) != 0 {
		t.Fatalf("ack %d bad %v", ack, bad)
	}
	got := <-waits
	t.Logf("a stream waiting after a chunk of %d KiB keeps %d bytes of read buffers over %d, %d bytes of buffers charged", len(big)>>10, got.read, maxIdleBuffer, got.charged)
	if got.read > got.charged {
		t.Errorf("a waiting stream keeps %d bytes of read buffers, %d charged", got.read, got.charged)
	}
	writePoints(t, w, 3, 0)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if ack, bad := parseAck(t, p.recv(t)); ack != 4 || len(bad) != 0 {
		t.Fatalf("ack %d bad %v, want 4", ack, bad)
	}
	p.w.Close()
	if st := p.status(); st != "0 " {
		t.Fatalf("status %q", st)
	}
	if sink.items != 4 {
		t.Fatalf("stored %d points, acknowledged 4", sink.items)
	}
	if held, spared := pl.StreamStateHeld(), r.sparesHeld(); held != spared {
		t.Errorf("%d bytes of stream state charged after the stream ended, %d of them spares", held, spared)
	}
}
