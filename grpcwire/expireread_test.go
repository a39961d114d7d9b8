package grpcwire

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// handlerWriter is a ResponseWriter that, like net/http's HTTP/2 one,
// must not be told a read deadline once its handler has returned:
// net/http's panics there (a nil pointer in SetReadDeadline, on the
// goroutine that calls it, which kills the process when that is not the
// handler's). returned is a plain field on purpose: the race detector
// reports a SetReadDeadline that is not ordered before the handler's
// return, whichever runs first.
type handlerWriter struct {
	http.ResponseWriter
	returned bool
	late     atomic.Int32
}

func (w *handlerWriter) SetReadDeadline(time.Time) error {
	if w.returned {
		w.late.Add(1)
	}
	return nil
}

// TestWatchedReadUnaryDeadlineNotAfterReturn: with WatchReadTimeout, a
// call whose deadline passes as its request is read expires the read
// from context.AfterFunc's goroutine. That goroutine must be done with
// the stream by the time ReadUnary returns: the handler then answers and
// returns, and net/http panics on a read deadline set on a finished
// response (the deadline here has passed before the read even starts, so
// the goroutine always runs, concurrently with the read).
func TestWatchedReadUnaryDeadlineNotAfterReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for range 50 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			time.Sleep(2 * time.Millisecond) // past the deadline (the bubble's clock)
			r := httptest.NewRequestWithContext(ctx, "POST", "/x.Y/Z", bytes.NewReader(frame(0, []byte{8, 1})))
			r.Header.Set("Content-Type", "application/grpc")
			w := &handlerWriter{ResponseWriter: httptest.NewRecorder()}
			call, st := StartCall(w, r, Limits{})
			if st != nil {
				t.Fatal(st)
			}
			call.WatchReadTimeout()
			call.ReadUnary(nil, nil)
			call.Close()
			w.returned = true // the handler answers and returns
			synctest.Wait()
			cancel()
			if n := w.late.Load(); n > 0 {
				t.Fatalf("the read deadline was set %d times after ReadUnary returned", n)
			}
		}
	})
}
