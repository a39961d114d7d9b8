package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// countingSink counts what it stores; Write blocks while hold is set
// (entered is told each time one blocks).
type countingSink struct {
	mu            sync.Mutex
	writes, items int
	hold          chan struct{}
	entered       chan struct{}
}

func (s *countingSink) Write(_ context.Context, _ otlp.Signal, _ []byte, items int) error {
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		s.entered <- struct{}{}
		<-hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	s.items += items
	return nil
}

func (s *countingSink) Close() error { return nil }

func (s *countingSink) count() (writes, items int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes, s.items
}

// withBad is a request of the spans names, valid, and one span whose
// trace id is 3 bytes long: rejected, a partial success.
func withBad(names ...string) []byte {
	items := []pbtest.PB{pbtest.PB{}.Msg(1, pbtest.IDs(3, 1)).Msg(2, pbtest.IDs(8, 9)).Str(5, "bad").Fixed64(7, 1).Fixed64(8, 2)}
	for i, n := range names {
		items = append(items, namedSpan(n, byte(i+1)))
	}
	return pbtest.Request(pbtest.PB{}.Msg(1, pbtest.StrAttr("service.name", "s")), pbtest.PB{}.Str(1, "lib"), items)
}

func exportKeyed(p *Pipeline, ctx context.Context, key string, body []byte) (Result, *grpcwire.Status) {
	res, err := p.Export(ctx, Request{Transport: HTTP, Signal: otlp.Traces, Body: body, IdempotencyKey: key})
	if err != nil {
		return res, err.(*grpcwire.Status)
	}
	return res, nil
}

func counter(p *Pipeline, name string) uint64 {
	return p.Metrics().GetOrCreateCounter(name).Get()
}

// TestDedupLostAcknowledgement: a client that lost the answer resends the
// request with its key: it is stored once, and the resend gets the first
// answer, a partial success replayed with its count and message.
func TestDedupLostAcknowledgement(t *testing.T) {
	sink := &countingSink{}
	p := New(Config{Sink: sink, Logger: quietLog()})
	ctx := context.Background()
	for _, tc := range []struct {
		name, key string
		body      []byte
	}{
		{"full success", "k-1", spans("a", "b")},
		{"partial success", "k-2", withBad("a", "b", "c")},
	} {
		first, st := exportKeyed(p, ctx, tc.key, tc.body)
		if st != nil {
			t.Fatalf("%s: %v", tc.name, st)
		}
		w0, _ := sink.count()
		for range 3 {
			again, st := exportKeyed(p, ctx, tc.key, tc.body)
			if st != nil || again.Items != first.Items || again.Rejected != first.Rejected || again.Message != first.Message {
				t.Fatalf("%s: resend answered %+v %v, first %+v", tc.name, again, st, first)
			}
		}
		if w, _ := sink.count(); w != w0 {
			t.Fatalf("%s: the resends were stored (%d writes, want %d)", tc.name, w, w0)
		}
		t.Logf("%s: %+v", tc.name, first)
	}
	if _, items := sink.count(); items != 5 {
		t.Fatalf("%d spans stored, want 5", items)
	}
	if h := counter(p, "otlplite_dedup_hits_total"); h != 6 {
		t.Fatalf("otlplite_dedup_hits_total %d, want 6", h)
	}
	// Without a key, the same body is stored each time, as before.
	for range 2 {
		if _, st := exportKeyed(p, ctx, "", spans("a")); st != nil {
			t.Fatal(st)
		}
	}
	if _, items := sink.count(); items != 7 {
		t.Fatalf("%d spans stored, want 7: requests without a key are stored each time", items)
	}
}

// TestDedupKeyReusedWithAnotherBody: another body under a used key is
// refused as the IETF draft asks: not retryable, 422 over OTLP/HTTP,
// counted; the first answer stands.
func TestDedupKeyReusedWithAnotherBody(t *testing.T) {
	sink := &countingSink{}
	p := New(Config{Sink: sink, Logger: quietLog()})
	ctx := context.Background()
	if _, st := exportKeyed(p, ctx, "k", spans("a")); st != nil {
		t.Fatal(st)
	}
	_, st := exportKeyed(p, ctx, "k", spans("b"))
	if st == nil || st.Code != grpcwire.InvalidArgument || otlp.Retryable(st) || HTTPStatus(st) != http.StatusUnprocessableEntity {
		t.Fatalf("another body under the key: %v (HTTP %d), want INVALID_ARGUMENT, 422", st, HTTPStatus(st))
	}
	if reasonNames[reasonOf(0, st)] != "idempotency_key_reused" {
		t.Fatalf("refusal reason %s", reasonNames[reasonOf(0, st)])
	}
	if w, _ := sink.count(); w != 1 {
		t.Fatalf("%d writes, want 1", w)
	}
	if n := counter(p, "otlplite_dedup_mismatches_total"); n != 1 {
		t.Fatalf("otlplite_dedup_mismatches_total %d", n)
	}
	// The same key on another signal is another request.
	if _, err := p.Export(ctx, Request{Transport: HTTP, Signal: otlp.Logs, Body: []byte{}, IdempotencyKey: "k"}); err != nil {
		t.Fatalf("the key on another signal: %v", err)
	}
}

// TestDedupInFlight: a resend while the first request with its key is
// still being stored is refused ABORTED with a retry delay (HTTP 409),
// and once the first is answered the resend gets its answer.
func TestDedupInFlight(t *testing.T) {
	sink := &countingSink{hold: make(chan struct{}), entered: make(chan struct{})}
	p := New(Config{Sink: sink, Logger: quietLog()})
	ctx := context.Background()
	body := spans("a", "b")
	done := make(chan *grpcwire.Status)
	go func() {
		_, st := exportKeyed(p, ctx, "k", body)
		done <- st
	}()
	<-sink.entered // the first is in the sink
	_, st := exportKeyed(p, ctx, "k", body)
	if st == nil || st.Code != grpcwire.Aborted || !otlp.Retryable(st) || st.RetryDelay <= 0 || HTTPStatus(st) != http.StatusConflict {
		t.Fatalf("a resend in flight: %v, want ABORTED with a delay, 409", st)
	}
	sink.mu.Lock()
	close(sink.hold)
	sink.hold = nil
	sink.mu.Unlock()
	if st := <-done; st != nil {
		t.Fatal(st)
	}
	if res, st := exportKeyed(p, ctx, "k", body); st != nil || res.Items != 2 {
		t.Fatalf("the retry after the answer: %+v %v", res, st)
	}
	if w, _ := sink.count(); w != 1 {
		t.Fatalf("%d writes, want 1", w)
	}
	if n := counter(p, "otlplite_dedup_conflicts_total"); n != 1 {
		t.Fatalf("otlplite_dedup_conflicts_total %d", n)
	}
}

// TestDedupFailureForgotten: a request refused before it was stored (its
// deadline passed) leaves no key: its retry is stored.
func TestDedupFailureForgotten(t *testing.T) {
	sink := &countingSink{}
	p := New(Config{Sink: sink, Logger: quietLog()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, st := exportKeyed(p, ctx, "k", spans("a")); st == nil {
		t.Fatal("a cancelled request succeeded")
	}
	if _, st := exportKeyed(p, context.Background(), "k", spans("a")); st != nil {
		t.Fatal(st)
	}
	if w, _ := sink.count(); w != 1 {
		t.Fatalf("%d writes, want 1", w)
	}
}

// TestDedupFloodBounded: a flood of unique keys keeps the window at its
// bound in keys and bytes, forgetting the oldest first; one tenant's
// flood does not take another tenant's share.
func TestDedupFloodBounded(t *testing.T) {
	const bound = 100
	sink := &countingSink{}
	p := New(Config{Sink: sink, Logger: quietLog(), Dedup: DedupConfig{Keys: bound}, Tenants: &TenantsConfig{}})
	quiet := p.WithTenant(context.Background(), "quiet", true)
	loud := p.WithTenant(context.Background(), "loud", true)
	body := spans("a")
	for i := range 10 {
		if _, st := exportKeyed(p, quiet, fmt.Sprint("q-", i), body); st != nil {
			t.Fatal(st)
		}
	}
	long := strings.Repeat("x", otlp.MaxIdempotencyKeyLen-8)
	for i := range 100 * bound {
		if _, st := exportKeyed(p, loud, fmt.Sprintf("%s%08d", long, i), body); st != nil {
			t.Fatal(st)
		}
	}
	keys, bytes := p.dedup.size()
	if keys != bound || bytes > MaxDedupBytes(DedupConfig{Keys: bound}) {
		t.Fatalf("window holds %d keys, %d bytes; bound %d keys, %d bytes", keys, bytes, bound, MaxDedupBytes(DedupConfig{Keys: bound}))
	}
	w0, _ := sink.count()
	// The quiet tenant's keys are all there.
	for i := range 10 {
		if _, st := exportKeyed(p, quiet, fmt.Sprint("q-", i), body); st != nil {
			t.Fatal(st)
		}
	}
	// The loud tenant's newest are; its oldest are gone, and stored again.
	for _, i := range []int{100*bound - 1, 100*bound - (bound - 10)} {
		if _, st := exportKeyed(p, loud, fmt.Sprintf("%s%08d", long, i), body); st != nil {
			t.Fatal(st)
		}
	}
	if w, _ := sink.count(); w != w0 {
		t.Fatalf("%d keys in the window were stored again", w-w0)
	}
	if _, st := exportKeyed(p, loud, fmt.Sprintf("%s%08d", long, 0), body); st != nil {
		t.Fatal(st)
	}
	if w, _ := sink.count(); w != w0+1 {
		t.Fatal("the oldest key was still in the window")
	}
	if n := p.Metrics().GetOrCreateCounter(`otlplite_dedup_evicted_total{reason="full"}`).Get(); n < 100*bound-bound {
		t.Fatalf("evicted %d", n)
	}
	t.Logf("window: %d keys, %d bytes (bound %d)", keys, bytes, MaxDedupBytes(DedupConfig{Keys: bound}))
}

// TestDedupAge: a key older than the window is forgotten, and its resend
// stored again, as documented: the window on its own in a synctest
// bubble, then a pipeline on a clock of the test's.
func TestDedupAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newDedupWindow(DedupConfig{MaxAge: time.Minute}, metrics.NewSet())
		e, o := w.begin("t", dedupKey{sig: otlp.Traces, key: "k"}, 1)
		w.finish(e, &Result{Items: 1}, true)
		time.Sleep(59 * time.Second)
		if _, o = w.begin("t", dedupKey{sig: otlp.Traces, key: "k"}, 1); o != dedupDuplicate {
			t.Fatalf("a key within the window: %v", o)
		}
		time.Sleep(2 * time.Second)
		if _, o = w.begin("t", dedupKey{sig: otlp.Traces, key: "k"}, 1); o != dedupNew {
			t.Fatalf("a key past the window: %v", o)
		}
		if keys, _ := w.size(); keys != 1 {
			t.Fatalf("%d keys", keys)
		}
		if n := w.expired.Get(); n != 1 {
			t.Fatalf("%d expired", n)
		}
	})
	now := time.Unix(1e9, 0)
	sink := &countingSink{}
	p := New(Config{Sink: sink, Logger: quietLog(), Dedup: DedupConfig{MaxAge: time.Minute}, Clock: func() time.Time { return now }})
	ctx := context.Background()
	body := spans("a")
	exportKeyed(p, ctx, "k", body)
	now = now.Add(59 * time.Second)
	exportKeyed(p, ctx, "k", body)
	if w, _ := sink.count(); w != 1 {
		t.Fatalf("a key within the window: %d writes", w)
	}
	now = now.Add(2 * time.Second)
	exportKeyed(p, ctx, "k", body)
	if w, _ := sink.count(); w != 2 {
		t.Fatalf("a key past the window: %d writes, want 2", w)
	}
}

// TestDedupRestart: the disk log stores the key with the record; a
// pipeline opened on the log again (a restart) rebuilds the window from
// it, so a resend after the restart is answered as the first time (the
// same partial success) and not stored again.
func TestDedupRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	body := withBad("a", "b")
	open := func() (*disk.Store, *Pipeline) {
		st, err := disk.Open(dir, disk.Options{Sync: disk.SyncNone})
		if err != nil {
			t.Fatal(err)
		}
		return st, New(Config{Sink: st, Logger: quietLog()})
	}
	store, p := open()
	first, st := exportKeyed(p, ctx, "restart-key", body)
	if st != nil || first.Rejected != 1 {
		t.Fatalf("%+v %v", first, st)
	}
	store.Close()
	store, p = open()
	defer store.Close()
	again, st := exportKeyed(p, ctx, "restart-key", body)
	if st != nil || again != (Result{Items: first.Items, Rejected: first.Rejected, Message: first.Message}) {
		t.Fatalf("after the restart: %+v %v, first %+v", again, st, first)
	}
	if _, st := exportKeyed(p, ctx, "restart-key", spans("other")); st == nil || st.Code != grpcwire.InvalidArgument {
		t.Fatalf("another body after the restart: %v", st)
	}
	n := 0
	if err := disk.Scan(dir, otlp.Traces, func(disk.Record) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d records, want 1", n)
	}
}

// TestDedupEntryCost measures what a key costs the heap, to hold
// dedupEntryCost to it.
func TestDedupEntryCost(t *testing.T) {
	const n = 20000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w := newDedupWindow(DedupConfig{Keys: n}, metricsSet())
	for i := range n {
		key := fmt.Sprintf("%036d", i) // a UUID's length
		e, _ := w.begin(otlp.DefaultTenant, dedupKey{sig: otlp.Traces, key: key}, uint64(i))
		w.finish(e, &Result{Items: 1}, true)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	_, charged := w.size()
	t.Logf("%d bytes of heap per key of 36 bytes; charged %d", per, charged/n)
	if per > charged/n {
		t.Fatalf("a key costs %d bytes, charged %d: raise dedupEntryCost", per, charged/n)
	}
	runtime.KeepAlive(w)
}

var _ storage.KeyedSink = (*disk.Store)(nil)

func metricsSet() *metrics.Set { return metrics.NewSet() }

// TestDedupRequestLog: the request log line of a duplicate says so.
func TestDedupRequestLog(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p := New(Config{Sink: &countingSink{}, Logger: log})
	ctx := context.Background()
	for range 2 {
		tk := p.Take(ctx)
		p.StartLog(ctx, tk, "peer", HTTP, otlp.Traces)
		if _, err := p.Export(ctx, Request{Transport: HTTP, Signal: otlp.Traces, Body: spans("a"), Ticket: tk, IdempotencyKey: "k"}); err != nil {
			t.Fatal(err)
		}
		p.Done(tk)
	}
	mu.Lock()
	defer mu.Unlock()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "duplicate") || !strings.Contains(lines[1], "duplicate=true") {
		t.Fatalf("request log:\n%s", buf.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// TestDedupFloodHeap: a flood of unique keys of the longest length, with
// the longest messages, holds the heap within MaxDedupBytes however long
// it lasts.
func TestDedupFloodHeap(t *testing.T) {
	const bound = 10000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w := newDedupWindow(DedupConfig{Keys: bound}, metrics.NewSet())
	prefix := strings.Repeat("f", otlp.MaxIdempotencyKeyLen-8)
	msg := strings.Repeat("m", storage.MaxStoredKeyMessage+100)
	for i := range 5 * bound {
		e, o := w.begin("flood", dedupKey{sig: otlp.Traces, key: fmt.Sprintf("%s%08d", prefix, i)}, uint64(i))
		if o != dedupNew {
			t.Fatalf("key %d: %v", i, o)
		}
		// A fresh copy, as a request's message is its own.
		w.finish(e, &Result{Items: 2, Rejected: 1, Message: strings.Clone(msg)}, true)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	keys, charged := w.size()
	if keys != bound || heap > MaxDedupBytes(DedupConfig{Keys: bound}) || charged > MaxDedupBytes(DedupConfig{Keys: bound}) {
		t.Fatalf("%d keys, %d bytes of heap, %d charged; bound %d keys, %d bytes", keys, heap, charged, bound, MaxDedupBytes(DedupConfig{Keys: bound}))
	}
	t.Logf("%d keys of %d bytes: %d bytes of heap (%d a key), %d charged, bound %d", keys, otlp.MaxIdempotencyKeyLen, heap, heap/bound, charged, MaxDedupBytes(DedupConfig{Keys: bound}))
	runtime.KeepAlive(w)
}
