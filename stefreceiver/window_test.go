package stefreceiver

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/storage"
)

// gateSink holds every write until open is closed, telling entered of
// each as it starts to wait.
type gateSink struct {
	memSink
	open    chan struct{}
	entered chan struct{}
}

func (s *gateSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	select {
	case <-s.open:
	default:
		s.entered <- struct{}{}
		<-s.open
	}
	return s.memSink.Write(ctx, sig, data, items)
}

// serveWindow serves r on h2c with a stream window of window bytes.
func serveWindow(t *testing.T, r http.Handler, window int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: r, Protocols: &protos,
		HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: window}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// A STEF stream handing a request on (waiting for admission, or for the
// sink) reads nothing meanwhile: what its client sends, up to the stream's
// window, waits unread in net/http's flow-control buffers. That window is
// charged to the admission's waiting budget for the wait
// (Pipeline.ParkWindow), as an export stream's is; a stream whose window
// does not fit ends at once, UNAVAILABLE, its frames not acknowledged (the
// client sends them again). Streams each holding a full window over a
// frame of one record, against a stuck sink: no more wait than the waiting
// budget holds windows (before: all of them, their windows charged
// nowhere). Once the sink takes requests again, every record of the
// streams that waited is stored and acknowledged, their windows are
// returned, and an honest stream is served as usual.
func TestStreamWaitChargesItsWindow(t *testing.T) {
	const window = 64 << 10
	const fit = 3
	sink := &gateSink{open: make(chan struct{}), entered: make(chan struct{}, 16)}
	pl := ingest.New(ingest.Config{Sink: sink, Admission: ingest.AdmissionConfig{
		StreamWindow: window, WaitingLimit: fit*window + window/2}})
	r := New(pl, Config{})
	addr := serveWindow(t, r, window)
	var release sync.Once
	open := func() { release.Do(func() { close(sink.open) }) }
	t.Cleanup(open) // a failed test leaves no handler stuck

	// frames returns a stream's header and a frame of one record, and a
	// frame that fills the rest of a window.
	frames := func() (first, fill []byte) {
		var buf chunkBuffer
		w, err := otelstef.NewMetricsWriter(&buf, pkg.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		writePoints(t, w, 1, 0)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		first = buf.msgs
		buf.msgs = nil
		pad := make([]byte, window-4<<10)
		for i := range pad {
			pad[i] = 'a' + byte(rand.IntN(26))
		}
		w.Record.Attributes().Value(0).SetString(string(pad))
		w.Record.Point().SetTimestamp(9)
		if err := w.Write(); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return first, buf.msgs
	}
	type ended struct {
		acked uint64
		st    string
	}
	var waited []*peer
	var ends []chan ended
	var wg sync.WaitGroup
	for i := range 2 * fit {
		p := dial(t, addr)
		p.sendFirst(t, "Metrics")
		p.recv(t)
		first, fill := frames()
		if _, err := p.w.Write(first); err != nil {
			t.Fatal(err)
		}
		end := make(chan ended, 1)
		go func() {
			var e ended
			for msg := p.recv(t); msg != nil; msg = p.recv(t) {
				e.acked, _ = parseAck(t, msg)
			}
			e.st = p.status()
			end <- e
		}()
		select {
		case <-sink.entered:
			if i >= fit {
				_, waiting := pl.AdmissionState()
				t.Fatalf("stream %d waits for the sink with its window unread, %d did already; %d bytes charged to the waiting budget", i+1, i, waiting)
			}
			// Its client fills the window it leaves unread.
			wg.Go(func() { p.w.Write(fill) })
			waited = append(waited, p)
			ends = append(ends, end)
		case e := <-end:
			if i < fit {
				t.Fatalf("stream %d ended (ack %d, status %q) with room for its window", i+1, e.acked, e.st)
			}
			if e.acked != 0 || !strings.HasPrefix(e.st, "14 ") || !strings.Contains(e.st, "unread window") {
				t.Fatalf("stream %d: ack %d, status %q; want nothing acknowledged, UNAVAILABLE (no room for its unread window)", i+1, e.acked, e.st)
			}
		}
	}
	if _, waiting := pl.AdmissionState(); waiting != fit*window {
		t.Fatalf("%d bytes charged to the waiting budget, want %d streams' windows of %d", waiting, fit, window)
	}
	open()
	wg.Wait()
	for i, p := range waited {
		p.w.Close()
		if e := <-ends[i]; e.acked != 2 || e.st != "0 " {
			t.Fatalf("stream %d that waited: ack %d status %q, want both records acknowledged and OK", i+1, e.acked, e.st)
		}
	}
	sink.mu.Lock()
	stored := sink.items
	sink.mu.Unlock()
	if stored != 2*fit {
		t.Fatalf("%d points stored, %d acknowledged", stored, 2*fit)
	}
	if _, waiting := pl.AdmissionState(); waiting != 0 {
		t.Fatalf("%d bytes still charged to the waiting budget", waiting)
	}
	// An honest stream afterwards.
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	w, _ := otelstef.NewMetricsWriter(chunkSender{t, p}, pkg.WriterOptions{})
	writePoints(t, w, 3, 0)
	w.Flush()
	if ack, bad := parseAck(t, p.recv(t)); ack != 3 || len(bad) != 0 {
		t.Fatalf("honest stream: ack %d bad %v", ack, bad)
	}
	p.w.Close()
	if st := p.status(); st != "0 " {
		t.Fatalf("honest stream: status %q", st)
	}
	if held, spared := pl.StreamStateHeld(), r.sparesHeld(); held != spared {
		t.Errorf("%d bytes of stream state charged after the streams ended, %d of them spares", held, spared)
	}
}
