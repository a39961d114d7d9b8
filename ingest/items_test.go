package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpdecode/visittest"
	"github.com/otlp-lite/otlp-lite/otlpview"
	"github.com/otlp-lite/otlp-lite/storage"
)

// spanEngine is a test storage.ItemSink: it keeps the names of the spans
// it commits, rejects the spans named reject, and counts what the
// pipeline did with its batches. alias makes it keep the views' strings
// instead of copies, which the lifetime rule forbids.
type spanEngine struct {
	reject    string
	alias     bool
	beginErr  error
	commitErr error

	mu                              sync.Mutex
	stored                          []string
	begun, visited, commits, discds int
	batches                         sync.Pool
}

type spanBatch struct {
	e     *spanEngine
	names []string
	v     otlpdecode.Visitor
	done  bool
}

func (e *spanEngine) BeginItems(_ context.Context, sig storage.Signal) (storage.ItemBatch, error) {
	if e.beginErr != nil {
		return nil, e.beginErr
	}
	if sig != storage.Traces {
		return nil, storage.NotStored(fmt.Errorf("%w: spans only", storage.ErrRejected))
	}
	e.mu.Lock()
	e.begun++
	e.mu.Unlock()
	b, _ := e.batches.Get().(*spanBatch)
	if b == nil {
		b = &spanBatch{e: e}
		b.v.Span = b.span // made once per pooled batch
	}
	b.names, b.done = b.names[:0], false
	return b, nil
}

func (b *spanBatch) span(_ *otlpview.Resource, _ *otlpview.Scope, sp *otlpview.Span) error {
	b.e.mu.Lock()
	b.e.visited++
	b.e.mu.Unlock()
	if b.e.reject != "" && sp.Name == b.e.reject {
		return fmt.Errorf("this engine does not store spans named %q", sp.Name)
	}
	name := sp.Name
	if !b.e.alias {
		name = strings.Clone(name)
	}
	b.names = append(b.names, name)
	return nil
}

func (b *spanBatch) Visitor() *otlpdecode.Visitor { return &b.v }

func (b *spanBatch) Commit(context.Context) error {
	b.finish()
	b.e.mu.Lock()
	defer b.e.mu.Unlock()
	b.e.commits++
	if b.e.commitErr != nil {
		return b.e.commitErr
	}
	b.e.stored = append(b.e.stored, b.names...)
	return nil
}

func (b *spanBatch) Discard() {
	b.finish()
	b.e.mu.Lock()
	b.e.discds++
	b.e.mu.Unlock()
}

// finish holds the pipeline to "exactly one of Commit or Discard, once".
func (b *spanBatch) finish() {
	if b.done {
		panic("batch finished twice")
	}
	b.done = true
	b.e.batches.Put(b)
}

func (e *spanEngine) Close() error { return nil }

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func (e *spanEngine) counts() (begun, visited, commits, discards int, stored []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.begun, e.visited, e.commits, e.discds, append([]string(nil), e.stored...)
}

// namedSpan is a valid span named name; spans builds a request of them.
func namedSpan(name string, n byte) pbtest.PB {
	return pbtest.PB{}.Msg(1, pbtest.IDs(16, 1)).Msg(2, pbtest.IDs(8, n)).Str(5, name).Fixed64(7, 1).Fixed64(8, 2)
}

func spans(names ...string) []byte {
	var items []pbtest.PB
	for i, n := range names {
		items = append(items, namedSpan(n, byte(i+1)))
	}
	return pbtest.Request(pbtest.PB{}.Msg(1, pbtest.StrAttr("service.name", "s")), pbtest.PB{}.Str(1, "lib"), items)
}

func exportSpans(p *Pipeline, ctx context.Context, body []byte) (Result, *grpcwire.Status) {
	res, err := p.Export(ctx, Request{Transport: Kafka, Signal: otlp.Traces, Body: body})
	if err != nil {
		return res, err.(*grpcwire.Status)
	}
	return res, nil
}

// TestItemSinkPartialSuccess: an item the engine's visitor rejects is the
// request's partial success, with the engine's reason; the rest is
// committed in one batch.
func TestItemSinkPartialSuccess(t *testing.T) {
	e := &spanEngine{reject: "bad"}
	p := New(Config{Items: e, Logger: quietLog()})
	res, st := exportSpans(p, context.Background(), spans("a", "bad", "b"))
	if st != nil || res.Items != 3 || res.Rejected != 1 ||
		!strings.Contains(res.Message, `does not store spans named "bad"`) || !strings.Contains(res.Message, "spans[1]") {
		t.Fatalf("result %+v, %v", res, st)
	}
	begun, visited, commits, discards, stored := e.counts()
	if begun != 1 || visited != 3 || commits != 1 || discards != 0 || strings.Join(stored, ",") != "a,b" {
		t.Fatalf("begun %d visited %d commits %d discards %d stored %q", begun, visited, commits, discards, stored)
	}
}

// TestItemSinkDiscard: every request that is not to be stored after
// BeginItems is discarded, once, never committed: malformed after some of
// its items were visited, all rejected, empty, its context ended; a
// refusal of BeginItems or Commit reaches the client as Sink.Write's would.
func TestItemSinkDiscard(t *testing.T) {
	// A valid resource with two spans, then a resource_spans field whose
	// length runs past the end: the walk visits the spans, then fails.
	malformed := append(spans("a", "b"), 0x0a, 0x7f, 0x01)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name       string
		e          *spanEngine
		ctx        context.Context
		body       []byte
		code       grpcwire.Code
		msg        string
		minVisited int
		commits    int
		discards   int
	}{
		{"malformed after items", &spanEngine{}, context.Background(), malformed, grpcwire.InvalidArgument, "cannot decode", 2, 0, 1},
		{"every item rejected", &spanEngine{reject: "bad"}, context.Background(), spans("bad", "bad"), grpcwire.OK, "", 2, 0, 1},
		{"empty", &spanEngine{}, context.Background(), nil, grpcwire.OK, "", 0, 0, 1},
		{"context ended", &spanEngine{}, canceled, spans("a"), grpcwire.Canceled, "nothing was stored", 1, 0, 1},
		{"begin refused", &spanEngine{beginErr: fmt.Errorf("%w: full", storage.ErrOverloaded)}, context.Background(), spans("a"), grpcwire.Unavailable, "retry later", 0, 0, 0},
		{"commit rejected", &spanEngine{commitErr: fmt.Errorf("%w: no", storage.ErrRejected)}, context.Background(), spans("a"), grpcwire.InvalidArgument, "cannot accept", 1, 1, 0},
		{"commit failed", &spanEngine{commitErr: errors.New("disk on fire")}, context.Background(), spans("a"), grpcwire.Unavailable, "disk on fire", 1, 1, 0},
	} {
		p := New(Config{Items: tc.e, Logger: quietLog()})
		_, st := exportSpans(p, tc.ctx, tc.body)
		if st == nil && tc.code != grpcwire.OK || st != nil && (st.Code != tc.code || !strings.Contains(st.Message, tc.msg)) {
			t.Errorf("%s: %v, want %v %q", tc.name, st, tc.code, tc.msg)
		}
		_, visited, commits, discards, stored := tc.e.counts()
		if visited < tc.minVisited || commits != tc.commits || discards != tc.discards || tc.e.commitErr == nil && len(stored) != 0 {
			t.Errorf("%s: visited %d commits %d discards %d stored %q", tc.name, visited, commits, discards, stored)
		}
	}
	if p := New(Config{Items: &spanEngine{}, Logger: quietLog()}); true {
		_, st := p.Export(context.Background(), Request{Transport: Kafka, Signal: otlp.Logs, Body: nil})
		if st == nil || !strings.Contains(st.Error(), "spans only") {
			t.Errorf("logs into a span engine: %v", st)
		}
	}
}

// TestItemSinkQuota: a tenant is charged for what the engine accepted as
// a byte sink's tenant is for what it stored (the bytes without the
// rejected items, and the items), refunded only for ErrNotStored, and a
// request its quota throttles is discarded.
func TestItemSinkQuota(t *testing.T) {
	qf, err := NewQuotaFile(writeFile(t, "a bytes_per_second=1 burst_bytes=100000 items_per_second=1 burst_items=3\n"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now } // no refill while the test runs
	levels := func(cfg Config, body []byte) (res Result, st *grpcwire.Status, b, i float64) {
		cfg.Tenants, cfg.Clock, cfg.Logger = &TenantsConfig{Quotas: qf}, clock, quietLog()
		p := New(cfg)
		res, st = exportSpans(p, p.WithTenant(context.Background(), "a", true), body)
		b, i, _ = p.TenantLevels("a")
		return res, st, b, i
	}
	// The byte sink stores {a, b}; the engine is sent {a, bad, b} and
	// rejects bad: what it accepted is {a, b}, byte for byte.
	_, st, wantB, wantI := levels(Config{Sink: discardSink{}}, spans("a", "b"))
	if st != nil || wantI != 1 || wantB != 100000-float64(len(spans("a", "b"))) {
		t.Fatalf("byte sink: %v, levels %v %v", st, wantB, wantI)
	}
	e := &spanEngine{reject: "bad"}
	if res, st, b, i := levels(Config{Items: e}, spans("a", "bad", "b")); st != nil || res.Rejected != 1 || b != wantB || i != wantI {
		t.Errorf("item sink: %+v %v, levels %v %v, want %v %v", res, st, b, i, wantB, wantI)
	}
	e = &spanEngine{commitErr: storage.NotStored(storage.ErrOverloaded)}
	if _, st, b, i := levels(Config{Items: e}, spans("a", "b")); st == nil || b != 100000 || i != 3 {
		t.Errorf("ErrNotStored: %v, levels %v %v, want the charge refunded", st, b, i)
	}
	e = &spanEngine{commitErr: storage.ErrOverloaded}
	if _, st, b, i := levels(Config{Items: e}, spans("a", "b")); st == nil || b != wantB || i != wantI {
		t.Errorf("an error that may have stored: %v, levels %v %v, want the charge kept", st, b, i)
	}
	// Throttled by the item bucket after the walk: discarded.
	e = &spanEngine{}
	cfg := Config{Items: e, Tenants: &TenantsConfig{Quotas: qf}, Clock: clock, Logger: quietLog()}
	p := New(cfg)
	ctx := p.WithTenant(context.Background(), "a", true)
	if _, st := exportSpans(p, ctx, spans("a", "b")); st != nil {
		t.Fatal(st)
	}
	res, st := exportSpans(p, ctx, spans("c", "d"))
	if st == nil || st.Code != grpcwire.Unavailable || !res.Throttled {
		t.Fatalf("over the item quota: %+v %v", res, st)
	}
	if _, visited, commits, discards, stored := e.counts(); visited != 4 || commits != 1 || discards != 1 || strings.Join(stored, ",") != "a,b" {
		t.Errorf("throttled: visited %d commits %d discards %d stored %q", visited, commits, discards, stored)
	}
}

// TestItemSinkLifetime: the views live until the visitor function returns.
// An engine that keeps them instead of copies holds another request's
// bytes once the buffer is reused: caught both by visittest.Check and
// through the pipeline, whose caller reuses the request's buffer once
// Export returns. One that copies keeps what was sent.
func TestItemSinkLifetime(t *testing.T) {
	src := spans("alpha", "beta")
	for _, alias := range []bool{false, true} {
		// Through the pipeline.
		e := &spanEngine{alias: alias}
		p := New(Config{Items: e, Logger: quietLog()})
		buf := bytes.Clone(src)
		if _, st := exportSpans(p, context.Background(), buf); st != nil {
			t.Fatal(st)
		}
		for i := range buf {
			buf[i] = visittest.Poison // the next request reuses the buffer
		}
		_, _, _, _, stored := e.counts()
		if intact := strings.Join(stored, ",") == "alpha,beta"; intact == alias {
			t.Errorf("alias=%v: the engine holds %q after the buffer was reused", alias, stored)
		}
		// With visittest, on one of the engine's batches.
		e = &spanEngine{alias: alias}
		b, _ := e.BeginItems(context.Background(), storage.Traces)
		if res := visittest.Check(t, otlp.Traces, src, nil, b.Visitor()); res.Items != 2 || res.Rejected != 0 {
			t.Fatalf("visittest: %+v", res)
		}
		if err := b.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, _, _, _, stored = e.counts()
		if intact := strings.Join(stored, ",") == "alpha,beta"; intact == alias {
			t.Errorf("visittest, alias=%v: the engine holds %q", alias, stored)
		}
	}
}

// TestAdmissionOff: with the budget off, a request larger than it is
// stored and nothing is held in it, while MaxRecvMsgSize still bounds a
// message; with it on, the same request is refused as too large.
func TestAdmissionOff(t *testing.T) {
	body := spans(strings.Repeat("x", 3000))
	for _, off := range []bool{false, true} {
		e := &spanEngine{}
		p := New(Config{Items: e, Logger: quietLog(), MaxRecvMsgSize: 8000,
			Admission: AdmissionConfig{RequestLimit: 1000, Off: off}})
		ctx := context.Background()
		_, st := exportSpans(p, ctx, body)
		if off != (st == nil) {
			t.Errorf("off=%v: %v", off, st)
		}
		if !off && (st.Code != grpcwire.ResourceExhausted || !strings.Contains(st.Message, "admission budget")) {
			t.Errorf("on: %v, want too large for the budget", st)
		}
		if !off {
			continue
		}
		// A transport's tickets: charged past the budget, none waits.
		t1, t2 := p.Take(ctx), p.Take(ctx)
		if err := errors.Join(t1.Declare(5000), t1.Charge(ctx, 900), t2.Charge(ctx, 900), t2.Grow(900)); err != nil {
			t.Errorf("off: charges refused: %v", err)
		}
		if in, waiting := p.AdmissionState(); in != 0 || waiting != 0 {
			t.Errorf("off: %d bytes in flight, %d waiting", in, waiting)
		}
		p.Done(t1)
		p.Done(t2)
		_, st = exportSpans(p, ctx, spans(strings.Repeat("x", 9000)))
		if st == nil || st.Code != grpcwire.ResourceExhausted || !strings.Contains(st.Message, "message limit") {
			t.Errorf("off: a message over MaxRecvMsgSize: %v", st)
		}
	}
}

// TestConfigOneSink: a pipeline stores into a byte sink or an item sink,
// never both.
func TestConfigOneSink(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "both") {
			t.Errorf("recovered %v", r)
		}
	}()
	New(Config{Sink: discardSink{}, Items: &spanEngine{}})
}
