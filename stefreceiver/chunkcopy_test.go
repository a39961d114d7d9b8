package stefreceiver

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/storage"
)

// A chunk that came in one gRPC message (as the library's client sends
// every frame) is read where the message is, not copied: the chunk's
// ticket charges the message's bytes, and a copy of them was held
// uncharged for as long as the chunk was current, here while a request
// decoded from it waits for a stuck sink. What the stream holds while it
// waits is what it is charged: the chunk once, and the request.
func TestChunkInOneMessageNotCopied(t *testing.T) {
	sink := &largeSink{release: make(chan struct{}), stuck: make(chan struct{})}
	pl := ingest.New(ingest.Config{Sink: sink})
	addr := serveH2C(t, New(pl, Config{}))
	heap := heapAfterGC
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	var buf chunkBuffer
	w, err := otelstef.NewMetricsWriter(&buf, pkg.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The header and a small frame first: the stream's state is
	// lowered to the plain reader's as the header is read.
	writePoints(t, w, 1, 0)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.w.Write(buf.msgs); err != nil {
		t.Fatal(err)
	}
	buf.msgs = nil
	if ack, _ := parseAck(t, p.recv(t)); ack != 1 {
		t.Fatalf("ack %d, want 1", ack)
	}
	// A frame of points whose values do not repeat: about 4.8 MB of
	// STEF, nothing in the dictionaries, large beside net/http's own
	// buffers (a MB at times, as they come and go).
	const points = 400_000
	for i := range points {
		w.Record.Point().SetTimestamp(uint64(2 + i))
		w.Record.Point().Value().SetInt64(rand.Int64())
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	msgs := buf.msgs
	buf.msgs = nil
	before := heap()
	in0, _ := pl.AdmissionState()
	sent := int64(len(msgs))
	wrote := make(chan error, 1)
	go func(b []byte) { _, err := p.w.Write(b); wrote <- err }(msgs)
	msgs = nil
	<-sink.stuck
	// The chunk was read whole before it was decoded: the client's
	// write returned, and holds its bytes no more.
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	in1, _ := pl.AdmissionState()
	held, charged := heap()-before, in1-in0
	t.Logf("a chunk of %d bytes in one message: the stream holds %d bytes while a request of it waits, charged %d", sent, held, charged)
	if held-charged > sent/2 {
		t.Errorf("the stream holds %d bytes, %d more than it is charged (its chunk is %d bytes)", held, held-charged, sent)
	}
	close(sink.release)
	for acked := uint64(0); acked < points+1; {
		ack, bad := parseAck(t, p.recv(t))
		if len(bad) != 0 {
			t.Fatalf("bad %v", bad)
		}
		acked = ack
	}
	p.w.Close()
	if st := p.status(); st != "0 " {
		t.Fatalf("status %q", st)
	}
	if sink.items != points+1 {
		t.Fatalf("stored %d points, acknowledged %d", sink.items, points+1)
	}
}

// largeSink holds the writes of more than 64 KiB until release is closed,
// closing stuck as the first starts to wait.
type largeSink struct {
	memSink
	release, stuck chan struct{}
	once           sync.Once
}

func (s *largeSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	if len(data) > 64<<10 {
		s.once.Do(func() { close(s.stuck) })
		<-s.release
	}
	return s.memSink.Write(ctx, sig, data, items)
}
