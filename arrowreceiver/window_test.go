//go:build otelarrow

package arrowreceiver

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"

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

// An OTel-Arrow stream storing a batch reads nothing meanwhile: what its
// client sends, up to the stream's window, waits unread in net/http's
// flow-control buffers. That window is charged to the admission's waiting
// budget for the wait (Pipeline.ParkWindow), as an export stream's is; a
// batch whose stream's window does not fit is answered UNAVAILABLE at once
// (retryable, nothing stored) and the stream reads on. Streams each
// holding a full window over a small batch, against a stuck sink: no more
// wait than the waiting budget holds windows (before: all of them, their
// windows charged nowhere). Once the sink takes requests again, every
// batch answered OK is stored, the windows are returned, and the refused
// streams' batches sent again are stored.
func TestStreamWaitChargesItsWindow(t *testing.T) {
	const window = 64 << 10
	const fit = 3
	sink := &gateSink{open: make(chan struct{}), entered: make(chan struct{}, 16)}
	pl := ingest.New(ingest.Config{Sink: sink, Admission: ingest.AdmissionConfig{
		StreamWindow: window, WaitingLimit: fit*window + window/2}})
	r := New(pl, Config{})
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
	var release sync.Once
	open := func() { release.Do(func() { close(sink.open) }) }
	t.Cleanup(open) // a failed test leaves no handler stuck

	type answer struct {
		st  *arrowpb.BatchStatus
		err error
	}
	var waited []arrowStream
	var answers []chan answer
	var refused []arrowStream
	var prods []*arrow_record.Producer
	var refusedAnswers []chan answer
	var wg sync.WaitGroup
	for i := range 2 * fit {
		s := open2(t, ln.Addr().String())
		prod := arrow_record.NewProducer()
		defer prod.Close()
		bar, _ := produce(t, prod, "logs", 0)
		if err := s.Send(bar); err != nil {
			t.Fatal(err)
		}
		got := make(chan answer, 4)
		go func() {
			for {
				st, err := s.Recv()
				got <- answer{st, err}
				if err != nil {
					return
				}
			}
		}()
		select {
		case <-sink.entered:
			if i >= fit {
				_, waiting := pl.AdmissionState()
				t.Fatalf("stream %d waits for the sink with its window unread, %d did already; %d bytes charged to the waiting budget", i+1, i, waiting)
			}
			// Its client fills the window it leaves unread.
			fill, _ := produce(t, prod, "logs", 40)
			wg.Go(func() { s.Send(fill) })
			waited = append(waited, s)
			answers = append(answers, got)
		case a := <-got:
			if i < fit {
				t.Fatalf("stream %d answered (%v, %v) with room for its window", i+1, a.st, a.err)
			}
			if a.err != nil || a.st.StatusCode != arrowpb.StatusCode_UNAVAILABLE || !strings.Contains(a.st.StatusMessage, "unread window") {
				t.Fatalf("stream %d: %v, %v; want the batch answered UNAVAILABLE (no room for its unread window)", i+1, a.st, a.err)
			}
			refused = append(refused, s)
			prods = append(prods, prod)
			refusedAnswers = append(refusedAnswers, got)
		}
	}
	if _, waiting := pl.AdmissionState(); waiting != fit*window {
		t.Fatalf("%d bytes charged to the waiting budget, want %d streams' windows of %d", waiting, fit, window)
	}
	open()
	wg.Wait()
	for i, s := range waited {
		for range 2 {
			if a := <-answers[i]; a.err != nil || a.st.StatusCode != arrowpb.StatusCode_OK {
				t.Fatalf("stream %d that waited: %v, %v", i+1, a.st, a.err)
			}
		}
		s.CloseSend()
	}
	if _, waiting := pl.AdmissionState(); waiting != 0 {
		t.Fatalf("%d bytes still charged to the waiting budget", waiting)
	}
	// The refused streams read on: their batches sent again are stored.
	for i, s := range refused {
		bar, _ := produce(t, prods[i], "logs", 1)
		if err := s.Send(bar); err != nil {
			t.Fatal(err)
		}
		if a := <-refusedAnswers[i]; a.err != nil || a.st.StatusCode != arrowpb.StatusCode_OK {
			t.Fatalf("refused stream %d, its next batch: %v, %v", i+1, a.st, a.err)
		}
	}
	if got, want := len(sink.all()), 2*fit+fit; got != want {
		t.Fatalf("%d batches stored, %d answered OK", got, want)
	}
}

// open2 opens a logs stream on a connection of its own.
func open2(t *testing.T, addr string) arrowStream {
	return open(t, dial(t, addr), "logs")
}
