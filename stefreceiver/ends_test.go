package stefreceiver

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
)

// serveCounted is serveSinkR whose handler calls are counted: ended.Wait
// returns once every stream's handler has returned (its charges given
// back, its spares put).
func serveCounted(t *testing.T, adm ingest.AdmissionConfig) (addr string, pl *ingest.Pipeline, r *Receiver, ended *sync.WaitGroup) {
	t.Helper()
	pl = ingest.New(ingest.Config{Sink: &memSink{}, Admission: adm})
	r = New(pl, Config{})
	ended = new(sync.WaitGroup)
	addr = serveH2C(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ended.Add(1)
		defer ended.Done()
		r.ServeHTTP(w, req)
	}))
	return addr, pl, r, ended
}

// bigFrame sends one frame of records points each with a 4 KiB attribute
// (about 4 KiB of OTLP each) and waits for its acknowledgement: the
// stream then waits for its client, its request buffer kept, charged.
func bigFrame(t *testing.T, p *peer, c pkg.Compression, records int) {
	t.Helper()
	w, err := otelstef.NewMetricsWriter(chunkSender{t, p}, pkg.WriterOptions{Compression: c})
	if err != nil {
		t.Fatal(err)
	}
	w.Record.Attributes().EnsureLen(1)
	w.Record.Attributes().SetKey(0, "payload")
	w.Record.Attributes().Value(0).SetString(strings.Repeat("y", 4<<10))
	for i := range records {
		w.Record.Metric().SetName("requests")
		w.Record.Point().SetTimestamp(uint64(1 + i))
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if ack, bad := parseAck(t, p.recv(t)); ack != uint64(records) || len(bad) != 0 {
		t.Fatalf("ack %d bad %v", ack, bad)
	}
}

// abort ends a stream as a client that goes away does: the HTTP/2 stream
// is reset, nothing half-closed.
func (p *peer) abort() {
	p.w.CloseWithError(errors.New("client gone"))
	p.resp.Body.Close()
}

// Every charge a stream takes is given back however it ends: streams
// waiting for their client with their request buffer charged (zstd and
// not), one waiting for the rest of a frame with a request under way
// charged, ended by their clients going away, by a half-close, or
// rotated by Shutdown as they wait; what stays charged is the spares',
// and after Shutdown nothing.
func TestChargesReturnedOnEveryEnd(t *testing.T) {
	addr, pl, r, ended := serveCounted(t, ingest.AdmissionConfig{})
	waits := waitsMidFrame(r, pl)
	open := func() *peer {
		p := dial(t, addr)
		p.sendFirst(t, "Metrics")
		p.recv(t)
		return p
	}
	// Phase 1: clients go away.
	a := open()
	bigFrame(t, a, pkg.CompressionZstd, 200)
	b := open()
	bigFrame(t, b, pkg.CompressionNone, 200)
	c := open()
	if _, err := c.w.Write(cutFrame(t, 200, pkg.CompressionNone)); err != nil {
		t.Fatal(err)
	}
	<-waits // c waits with the first frame's request under way
	t.Logf("3 streams waiting: stream state %d charged", pl.StreamStateHeld())
	a.abort()
	b.abort()
	c.abort()
	ended.Wait()
	if held, spared := pl.StreamStateHeld(), r.sparesHeld(); held != spared {
		t.Fatalf("clients gone: %d bytes of stream state charged, %d of them spares", held, spared)
	}

	// Phase 2: Shutdown as streams wait, then their clients end them.
	d := open()
	bigFrame(t, d, pkg.CompressionZstd, 200)
	e := open()
	bigFrame(t, e, pkg.CompressionNone, 200)
	r.Shutdown()
	d.w.Close()
	d.status()
	e.abort()
	ended.Wait()
	if held := pl.StreamStateHeld(); held != 0 {
		t.Fatalf("after Shutdown and the streams' end: %d bytes of stream state charged (spares %d)", held, r.sparesHeld())
	}
}
