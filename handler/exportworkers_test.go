package handler

import (
	"bytes"
	"context"
	"log"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// heldSink blocks every Write until release is closed, and reports each
// Write entered on entered.
type heldSink struct {
	memSink
	entered chan struct{}
	release chan struct{}
}

func (s *heldSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	s.entered <- struct{}{}
	<-s.release
	return s.memSink.Write(ctx, sig, data, items)
}

// TestExportWorkersNeverQueue: unary exports in flight beyond the export
// workers do not wait for one (each reaches the sink while the workers are
// all held there), the workers stay within their bound, and every request
// is stored and answered.
func TestExportWorkersNeverQueue(t *testing.T) {
	n := 3*int(maxExportWorkers()) + 2
	sink := &heldSink{entered: make(chan struct{}, n), release: make(chan struct{})}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	c := startHandler(t, h)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID))
			errs <- err
		})
	}
	for range n {
		<-sink.entered // every request is in the sink at once
	}
	if live, limit := h.exports.live.Load(), h.exports.max; live > limit || live == 0 {
		t.Fatalf("%d export workers with %d requests in the sink, want 1 to %d", live, n, limit)
	}
	close(sink.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := len(sink.all()); got != n {
		t.Fatalf("%d requests stored, want %d", got, n)
	}
}

// panicSink calls do on its first Write, then stores as memSink does.
type panicSink struct {
	memSink
	once sync.Once
	do   func()
}

func (s *panicSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	s.once.Do(s.do)
	return s.memSink.Write(ctx, sig, data, items)
}

// signalWriter is a log destination that reports each write on wrote.
type signalWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestExportWorkerPanic: a panic in Export on an export worker reaches
// net/http as one on the request's own goroutine would: it logs it, with
// the value and the worker's stack, and resets that stream only; the
// request's admission charge is returned, the worker serves on within
// its bound, and the next request is stored.
func TestExportWorkerPanic(t *testing.T) {
	sink := &panicSink{do: func() { panic("sink exploded") }}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &signalWriter{wrote: make(chan struct{}, 1)}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols), ErrorLog: log.New(logs, "", 0)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c := grpcwire.NewClient(ln.Addr().String(), nil)
	if _, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID)); err == nil {
		t.Fatal("the request whose Export panicked was answered OK")
	}
	<-logs.wrote // net/http logs after it reset the stream
	if l := logs.String(); !strings.Contains(l, "sink exploded") || !strings.Contains(l, "on an export worker") || !strings.Contains(l, "panicSink") {
		t.Fatalf("panic log %q: want the value and the worker's stack", l)
	}
	if _, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID)); err != nil {
		t.Fatalf("the request after a panic: %v", err)
	}
	if got := len(sink.all()); got != 1 {
		t.Fatalf("%d requests stored, want 1", got)
	}
	if inFlight, _ := h.p.AdmissionState(); inFlight != 0 {
		t.Fatalf("%d bytes still charged after both requests were answered", inFlight)
	}
	if live := h.exports.live.Load(); live < 0 || live > h.exports.max {
		t.Fatalf("%d export workers, want 0 to %d", live, h.exports.max)
	}
}

// exportDirect runs one trace export of a good request through ws, on a
// goroutine of its own, and reports how that goroutine ended: returned
// (with err), panicked (with the value), or exited (runtime.Goexit).
func exportDirect(h *Handler) (err error, panicked any, exited bool) {
	ws := h.exports
	done := make(chan struct{})
	go func() {
		normal := false
		defer func() {
			if !normal {
				panicked = recover()
				exited = panicked == nil
			}
			close(done)
		}()
		ctx := context.Background()
		tk := h.getTicket(ctx)
		defer h.putTicket(tk)
		tk.Msg = append(tk.Msg[:0], traceRequest(goodID)...)
		_, err = ws.export(h.p, ctx, ingest.Request{Transport: ingest.GRPC, Signal: otlp.Traces, Body: tk.Msg, Ticket: tk})
		normal = true
	}()
	<-done
	return err, panicked, exited
}

// TestExportWorkerAbortAndGoexit: what Export does to its goroutine other
// than return reaches the caller unchanged: net/http's quiet
// http.ErrAbortHandler as is (not wrapped, which net/http would log with
// a stack), and a runtime.Goexit as a Goexit (not a return with no error,
// which answered OK a request that was never stored).
func TestExportWorkerAbortAndGoexit(t *testing.T) {
	t.Run("ErrAbortHandler", func(t *testing.T) {
		sink := &panicSink{do: func() { panic(http.ErrAbortHandler) }}
		h := New(Config{Sink: sink, Logger: quietLogger()})
		if _, p, _ := exportDirect(h); p != http.ErrAbortHandler {
			t.Fatalf("recovered %v, want http.ErrAbortHandler", p)
		}
	})
	t.Run("Goexit", func(t *testing.T) {
		sink := &panicSink{do: runtime.Goexit}
		h := New(Config{Sink: sink, Logger: quietLogger()})
		err, p, exited := exportDirect(h)
		if !exited {
			t.Fatalf("Export's Goexit reached the caller as err %v, panic %v: want a Goexit", err, p)
		}
		if len(sink.all()) != 0 {
			t.Fatal("stored")
		}
		if inFlight, _ := h.p.AdmissionState(); inFlight != 0 {
			t.Fatalf("%d bytes still charged", inFlight)
		}
		if err, p, exited := exportDirect(h); err != nil || p != nil || exited {
			t.Fatalf("the next export: err %v, panic %v, exited %v", err, p, exited)
		}
		if len(sink.all()) != 1 {
			t.Fatal("the next export was not stored")
		}
	})
}

// TestExportWorkersIdleExit: export workers outlive their jobs by
// exportWorkerIdle and no more, so nothing is left running a second after
// the load (a Service's Shutdown does not wait for them: they hold no job
// once the handlers have returned). The bubble itself fails the test if
// a worker never exits.
func TestExportWorkersIdleExit(t *testing.T) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	synctest.Test(t, func(t *testing.T) {
		h.exports = newExportWorkers() // its channel in the bubble
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if err, p, exited := exportDirect(h); err != nil || p != nil || exited {
					t.Errorf("export: err %v, panic %v, exited %v", err, p, exited)
				}
			})
		}
		wg.Wait()
		if h.exports.live.Load() == 0 {
			t.Fatal("no export worker served the exports")
		}
		time.Sleep(exportWorkerIdle - time.Millisecond)
		synctest.Wait()
		if h.exports.live.Load() == 0 {
			t.Fatal("the export workers exited before exportWorkerIdle")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := h.exports.live.Load(); n != 0 {
			t.Fatalf("%d export workers still running %v after the last job", n, exportWorkerIdle)
		}
	})
	if len(sink.all()) != 4 {
		t.Fatalf("%d exports stored, want 4", len(sink.all()))
	}
}

// ctxSink blocks every Write until its context is done, as a sink that
// waits for room does, and reports each Write entered on entered.
type ctxSink struct {
	memSink
	entered chan struct{}
}

func (s *ctxSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	s.entered <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// TestExportWorkerCancelled: a request whose context ends while its
// Export runs on a worker (the client resets the stream, or its
// grpc-timeout passes) is answered by its handler, which returns only
// after the worker let go of it: its charge is returned, nothing is
// stored, and the worker is free for the next request.
func TestExportWorkerCancelled(t *testing.T) {
	sink := &ctxSink{entered: make(chan struct{}, 1)}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	returned := make(chan struct{}, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		returned <- struct{}{}
	}), Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c := grpcwire.NewClient(ln.Addr().String(), nil)
	for _, how := range []string{"reset", "grpc-timeout"} {
		ctx, cancel := context.WithCancel(context.Background())
		if how == "grpc-timeout" {
			ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := c.Invoke(ctx, traceExport, traceRequest(goodID))
			errc <- err
		}()
		<-sink.entered
		if live := h.exports.live.Load(); live < 1 || live > h.exports.max {
			t.Fatalf("%s: %d export workers, want 1 to %d, one running the request", how, live, h.exports.max)
		}
		if how == "reset" {
			cancel()
		}
		if err := <-errc; err == nil {
			t.Fatalf("%s: answered OK", how)
		}
		<-returned
		cancel()
		if inFlight, _ := h.p.AdmissionState(); inFlight != 0 {
			t.Fatalf("%s: %d bytes still charged after the handler returned", how, inFlight)
		}
	}
	if len(sink.all()) != 0 {
		t.Fatal("a cancelled request was stored")
	}
}
