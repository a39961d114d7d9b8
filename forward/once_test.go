package forward

import (
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// TestForwardOnce is replay's mode of the engine: Options.Once reads to
// the end of the log, finishes every record and stops (Done), a
// destination without a cursor commits nothing (a second run sends
// everything again), Stats and Observe account for each record, and a
// run that refuses nothing writes no dead-letter store (LazyDeadLetters).
func TestForwardOnce(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	sink, addr := destination(t, nil)
	store(t, st, 0, 10)
	for run := 1; run <= 2; run++ {
		d := mustParse(t, "dst=grpc://"+addr+"?signals=traces")
		d.NoCursor = true
		var delivered atomic.Int64
		// Without keys: the destination's window would store the second
		// run's records once (TestForwardSendsKeys); here every send counts.
		f, err := New(Options{DataDir: dir, Logger: quiet(), Once: true, LazyDeadLetters: true, NoIdempotencyKeys: true, Observe: func(e Event) {
			if e.Kind == Delivered && e.Items == 1 && e.Record != "" {
				delivered.Add(1)
			}
		}}, []Destination{d})
		if err != nil {
			t.Fatal(err)
		}
		<-f.Done()
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		s := f.Stats()
		if len(s) != 1 || s[0].Sent != 10 || s[0].Items != 10 || s[0].Unfinished != 0 || s[0].Err != nil || delivered.Load() != 10 {
			t.Fatalf("run %d: stats %+v, %d delivered events; want 10 records sent, none left", run, s, delivered.Load())
		}
		if _, total := sink.distinct(); total != 10*run {
			t.Fatalf("run %d: the destination got %d records, want %d (no cursor: every run starts over)", run, total, 10*run)
		}
	}
	if _, err := os.Stat(DeadLetterDir(dir, "dst")); !os.IsNotExist(err) {
		t.Fatalf("a run that dead-lettered nothing opened a dead-letter store (%v)", err)
	}
}

// TestForwardStopOnRefusal: with Options.StopOnRefusal a destination that
// refuses the client (401) stops the signal at the refused record, which
// stays unfinished (Stats.Err is a *RefusedError; nothing skipped, nothing
// dead-lettered), and the cursor stays before it: a later run against the
// destination turned honest delivers every record.
func TestForwardStopOnRefusal(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	var refuse atomic.Bool
	refuse.Store(true)
	sink, addr := destination(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if refuse.Load() {
				http.Error(w, "who are you", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	store(t, st, 0, 5)
	d := mustParse(t, "dst=http://"+addr+"?signals=traces&inflight=1")
	var mu sync.Mutex
	var kinds []EventKind
	f, err := New(Options{DataDir: dir, Store: st, Logger: quiet(), Once: true, StopOnRefusal: true, Observe: func(e Event) {
		mu.Lock()
		kinds = append(kinds, e.Kind)
		mu.Unlock()
	}}, []Destination{d})
	if err != nil {
		t.Fatal(err)
	}
	<-f.Done()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	s := f.Stats()[0]
	re, ok := s.Err.(*RefusedError)
	if !ok || otlpclient.Classify(re.Err) != otlpclient.RefusedClient || s.Unfinished != 1 || s.Sent != 0 || s.Failed != 0 || s.DeadLettered != 0 {
		t.Fatalf("stats %+v: want a RefusedError and the refused record unfinished, nothing sent or dead-lettered", s)
	}
	mu.Lock()
	if len(kinds) != 1 || kinds[0] != RefusedClient {
		t.Fatalf("events %v, want one RefusedClient", kinds)
	}
	mu.Unlock()
	refuse.Store(false)
	f, err = New(Options{DataDir: dir, Store: st, Logger: quiet(), Once: true, StopOnRefusal: true}, []Destination{d})
	if err != nil {
		t.Fatal(err)
	}
	<-f.Done()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if n, total := sink.distinct(); n != 5 || total != 5 {
		t.Fatalf("the destination got %d distinct records (%d in all), want 5 once", n, total)
	}
}
