package service_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/admin"
	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpview"
	"github.com/otlp-lite/otlp-lite/service"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// testConfig is the configuration an embedder writes: free ports, no
// admin listener, the disk log in dir.
func testConfig(dir string) service.Config {
	cfg := service.DefaultConfig()
	cfg.GRPCAddr, cfg.HTTPAddr, cfg.AdminAddr = "127.0.0.1:0", "", ""
	cfg.DataDir = dir
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg
}

func start(t *testing.T, cfg service.Config) *service.Service {
	t.Helper()
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc
}

func shutdown(t *testing.T, svc *service.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := svc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// export sends n requests of spans spans each over OTLP/gRPC and returns
// them as sent; each is acknowledged when it returns.
func export(t *testing.T, addr string, n, spans int) [][]byte {
	t.Helper()
	e := otlpclient.NewUnaryExporter(otlpclient.Config{Endpoint: addr})
	gen := otlpclient.NewSpanGenerator(spans, 4, 1)
	var sent [][]byte
	for range n {
		req := gen.AppendBatch(nil)
		if err := e.Export(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, req)
	}
	return sent
}

// records reads every traces record of the disk log in dir.
func records(t *testing.T, dir string) []disk.Record {
	t.Helper()
	r := disk.NewReader(dir, storage.Traces, disk.Position{})
	defer r.Close()
	var out []disk.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		rec.Data = bytes.Clone(rec.Data)
		out = append(out, rec)
	}
}

// TestServiceStoresOnDisk: a Service started from a Config in a few lines
// acknowledges what it stored: after Shutdown, every request exported is
// in the disk log, byte for byte.
func TestServiceStoresOnDisk(t *testing.T) {
	dir := t.TempDir()
	svc := start(t, testConfig(dir))
	if svc.GRPCAddr() == "" || svc.HTTPAddr() != svc.GRPCAddr() || svc.AdminAddr() != "" || svc.Store() == nil {
		t.Fatalf("addresses %q %q %q, store %v", svc.GRPCAddr(), svc.HTTPAddr(), svc.AdminAddr(), svc.Store())
	}
	sent := export(t, svc.GRPCAddr(), 5, 10)
	shutdown(t, svc)

	got := records(t, dir)
	if len(got) != len(sent) {
		t.Fatalf("%d records in the log, %d requests acknowledged", len(got), len(sent))
	}
	for i, rec := range got {
		if rec.Items != 10 || !bytes.Equal(rec.Data, sent[i]) {
			t.Errorf("record %d: %d items, %d bytes; sent 10 spans in %d bytes", i, rec.Items, len(rec.Data), len(sent[i]))
		}
	}
	if err := svc.Shutdown(context.Background()); err != nil {
		t.Fatalf("a second Shutdown: %v", err)
	}
}

// TestServiceSink: an embedder's Sink replaces the built-in storage, and is
// closed at Shutdown, after every acknowledged request was written to it.
func TestServiceSink(t *testing.T) {
	sink := &countSink{}
	cfg := testConfig(t.TempDir())
	cfg.Sink = sink
	svc := start(t, cfg)
	if svc.Store() != nil {
		t.Fatal("a disk log was opened beside the Sink")
	}
	export(t, svc.GRPCAddr(), 3, 7)
	shutdown(t, svc)
	if sink.items != 21 || !sink.closed {
		t.Fatalf("sink got %d items, closed %v; want 21 and closed", sink.items, sink.closed)
	}
	cfg.Forward.Destinations = []forward.Destination{mustParse(t, "a=grpc://127.0.0.1:1")}
	if _, err := service.New(cfg); err == nil {
		t.Fatal("forwarding accepted without the disk log")
	}
}

// TestServiceItems: an engine's ItemSink given through Config receives
// every span in the validation pass, each request committed once, and is
// closed at Shutdown; it cannot be combined with a Sink, nor with
// forwarding.
func TestServiceItems(t *testing.T) {
	items := &countItems{}
	cfg := testConfig(t.TempDir())
	cfg.Items = items
	svc := start(t, cfg)
	if svc.Store() != nil {
		t.Fatal("a disk log was opened beside the ItemSink")
	}
	export(t, svc.GRPCAddr(), 3, 7)
	shutdown(t, svc)
	if items.spans != 21 || items.commits != 3 || !items.closed {
		t.Fatalf("item sink got %d spans in %d commits, closed %v; want 21 in 3, closed", items.spans, items.commits, items.closed)
	}
	both := cfg
	both.Sink = &countSink{}
	if _, err := service.New(both); err == nil {
		t.Fatal("Sink and Items accepted together")
	}
	cfg.Forward.Destinations = []forward.Destination{mustParse(t, "a=grpc://127.0.0.1:1")}
	if _, err := service.New(cfg); err == nil {
		t.Fatal("forwarding accepted without the disk log")
	}
}

// countItems counts the spans it is handed and the requests committed; the
// test exports one request at a time.
type countItems struct {
	spans, pending, commits int
	closed                  bool
	v                       otlpdecode.Visitor
}

func (c *countItems) BeginItems(context.Context, storage.Signal) (storage.ItemBatch, error) {
	c.pending = 0
	c.v.Span = func(*otlpview.Resource, *otlpview.Scope, *otlpview.Span) error { c.pending++; return nil }
	return c, nil
}
func (c *countItems) Visitor() *otlpdecode.Visitor { return &c.v }
func (c *countItems) Commit(context.Context) error {
	c.spans += c.pending
	c.commits++
	return nil
}
func (c *countItems) Discard()     {}
func (c *countItems) Close() error { c.closed = true; return nil }

type countSink struct {
	items  int
	closed bool
}

func (s *countSink) Write(_ context.Context, _ storage.Signal, _ []byte, items int) error {
	s.items += items // the handler calls Write from request goroutines, one request at a time here
	return nil
}

func (s *countSink) Close() error { s.closed = true; return nil }

func mustParse(t *testing.T, v string) forward.Destination {
	t.Helper()
	d, err := forward.Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// downAddr is an address nobody listens on.
func downAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestServiceForwardingHoldsRetention: forwarding configured through Config
// holds the disk log against its age limit (the library links retention to
// the forwarding cursors; the embedder does not, and cannot forget to):
// with a destination that is down, a Service whose age limit every record
// is past deletes none of them, where the same limit without the link
// deletes them.
func TestServiceForwardingHoldsRetention(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.Disk.MaxSegmentSize = "4096" // several segments: retention deletes whole ones
	cfg.Forward.Destinations = []forward.Destination{mustParse(t, "gone=grpc://"+downAddr(t)+"?retry-max-backoff=1s")}
	svc := start(t, cfg)
	export(t, svc.GRPCAddr(), 20, 10)
	shutdown(t, svc)
	stored := len(records(t, dir))
	if stored != 20 {
		t.Fatalf("%d records stored, want 20", stored)
	}

	// Every record is older than the age limit; the destination got
	// none of them. The store applies retention as it opens.
	cfg.Disk.MaxAge = time.Nanosecond
	svc = start(t, cfg)
	shutdown(t, svc)
	if n := len(records(t, dir)); n != stored {
		t.Fatalf("retention deleted %d records the destination had not received", stored-n)
	}

	// The same limit without the hold deletes them: the test would see it.
	st, err := disk.Open(dir, disk.Options{MaxAge: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(records(t, dir)); n >= stored {
		t.Fatalf("without the hold, retention kept all %d records: the test does not test the hold", n)
	}
}

// TestServiceAdmin: the admin listener serves the status page, /metrics
// (the disk log's series among them), /config (the Effective entries) and
// readiness while the Service runs.
func TestServiceAdmin(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.AdminAddr = "127.0.0.1:0"
	cfg.Effective = []admin.ConfigEntry{{Section: "Storage", Flag: "data-dir", Env: "OTLP_LITE_DATA_DIR", Value: cfg.DataDir, Source: "flag"}}
	svc := start(t, cfg)
	defer shutdown(t, svc)
	export(t, svc.GRPCAddr(), 1, 3)
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get("http://" + svc.AdminAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if body := get("/readyz"); body != "ready\n" {
		t.Fatalf("/readyz: %q", body)
	}
	if body := get("/metrics"); !strings.Contains(body, `otlplite_storage_items{signal="traces"} 3`) {
		t.Fatalf("/metrics lacks the disk log's items:\n%.2000s", body)
	}
	if body := get("/config"); !strings.Contains(body, "data-dir=") {
		t.Fatalf("/config: %q", body)
	}
	if body := get("/"); !strings.Contains(body, svc.GRPCAddr()) {
		t.Fatalf("the status page does not show the OTLP listener %s", svc.GRPCAddr())
	}
}

// TestServiceFailedStartLeavesCallersSink: a Start that fails after the
// storage is open (here at the tenant quota file, removed after New) leaves
// the caller's Sink open: it is still the caller's, who may start again
// with it.
func TestServiceFailedStartLeavesCallersSink(t *testing.T) {
	sink := &countSink{}
	cfg := testConfig(t.TempDir())
	cfg.Sink = sink
	cfg.Tenants.Header = "X-Scope-OrgID"
	cfg.Tenants.QuotaFile = filepath.Join(t.TempDir(), "quotas")
	if err := os.WriteFile(cfg.Tenants.QuotaFile, []byte("* items_per_second=100000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(cfg.Tenants.QuotaFile); err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err == nil {
		svc.Shutdown(context.Background())
		t.Fatal("Start succeeded without its quota file")
	}
	if sink.closed {
		t.Fatal("a failed Start closed the caller's Sink")
	}
}
