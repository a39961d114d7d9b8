package handler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// Tests of issue 21's tenant contracts: quotas are charged once, for what
// is stored, and refunded only when nothing was; known tenants are never
// displaced by invented names.

// lateSink stores every write once the request's context has ended, then
// reports the context's error: what the disk log does when a client's
// deadline passes during the durable write (the record is still written,
// the client is told it failed). entered receives each write as it
// starts waiting.
type lateSink struct {
	tenantSink
	entered chan struct{}
}

func (s *lateSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	s.entered <- struct{}{}
	<-ctx.Done()
	s.tenantSink.Write(ctx, sig, data, items)
	return fmt.Errorf("stopped waiting for the write: %w", ctx.Err())
}

// notStoredSink refuses every write before storing anything.
type notStoredSink struct{ tenantSink }

func (s *notStoredSink) Write(context.Context, storage.Signal, []byte, int) error {
	return storage.NotStored(fmt.Errorf("queue full: %w", storage.ErrOverloaded))
}

// fixedClock is a stopped clock for the pipeline's tenant registry
// (Config.Clock), so that no bucket refills while a test runs.
func fixedClock() time.Time { return time.Unix(1_000_000, 0) }

// frozenTenantHandler is tenantHandler with the clock stopped.
func frozenTenantHandler(t *testing.T, sink storage.Sink, quotas string, cfg TenantConfig) (*Handler, *grpcwire.Client) {
	t.Helper()
	return tenantHandlerClock(t, sink, quotas, cfg, fixedClock)
}

// Finding 7: a request whose client stops waiting during the durable
// write is stored, so it stays charged: timing the deadline to that window
// cannot store more than the quota. On main every such request was
// refunded, and all 10 were stored against a quota of one.
func TestTenantQuotaKeptWhenStoredAfterCancel(t *testing.T) {
	req := traceRequest(goodID, goodID, goodID, goodID)
	sink := &lateSink{entered: make(chan struct{})}
	// 4 items of burst, no refill while the test runs: one request.
	h, c := frozenTenantHandler(t, sink, "* items_per_second=1 burst_items=4\n", TenantConfig{})
	codes := map[int]int{}
	for range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		r := httptest.NewRequestWithContext(ctx, "POST", "/v1/traces", bytes.NewReader(req))
		r.Header.Set("Content-Type", "application/x-protobuf")
		r.Header.Set("X-Scope-OrgID", "team-a")
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(w, r)
		}()
		select {
		case <-sink.entered:
			cancel() // the client goes away during the write
		case <-done:
		}
		<-done
		cancel()
		codes[w.Code]++
	}
	if got := sink.get("team-a"); got != 4 {
		t.Fatalf("stored %d items of a tenant whose quota holds 4 (answers %v)", got, codes)
	}
	if codes[http.StatusTooManyRequests] != 9 {
		t.Errorf("answers %v, want 9 of 429 after the first request used the quota", codes)
	}

	// The same over gRPC: the client's context ends while the sink
	// writes.
	gc := withHeaders(c, map[string]string{"x-scope-orgid": "team-b"})
	refused := 0
	for range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := gc.Invoke(ctx, traceExport, req)
			errc <- err
		}()
		var err error
		select {
		case <-sink.entered:
			cancel()
			err = <-errc
		case err = <-errc:
			refused++
		}
		cancel()
		if err == nil {
			t.Fatal("a request answered OK")
		}
	}
	if refused != 4 {
		t.Fatalf("gRPC: %d requests refused before storage (want 4)", refused)
	}
	// The client's call ends as it cancels; the server's write, which the
	// stream's reset ends, stores after that.
	waitFor(t, func() bool { return sink.get("team-b") >= 4 })
	if got := sink.get("team-b"); got != 4 {
		t.Fatalf("gRPC: stored %d items (quota 4)", got)
	}
}

// Only a sink's promise that nothing was stored refunds: a request refused
// with storage.ErrNotStored costs its tenant nothing, and the tenant's
// metrics count what was charged, in the quota's unit.
func TestTenantQuotaRefundedWhenNothingStored(t *testing.T) {
	req := traceRequest(goodID, goodID, goodID, goodID)
	h, _ := frozenTenantHandler(t, &notStoredSink{}, "* items_per_second=1 burst_items=4\n", TenantConfig{})
	for i := range 5 {
		r := httptest.NewRequest("POST", "/v1/traces", bytes.NewReader(req))
		r.Header.Set("Content-Type", "application/x-protobuf")
		r.Header.Set("X-Scope-OrgID", "team-a")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusServiceUnavailable {
			t.Fatalf("request %d: %d %s, want 503 (storage overloaded, refunded)", i, w.Code, w.Body)
		}
	}
	if _, items, _ := h.Pipeline().TenantLevels("team-a"); items != 4 {
		t.Fatalf("item bucket at %v after 5 requests nothing of which was stored, want 4", items)
	}
	if !errors.Is(storage.NotStored(storage.ErrOverloaded), storage.ErrOverloaded) || storage.NotStored(nil) != nil {
		t.Fatal("NotStored must keep what it wraps, and nil")
	}
}

// The item bucket is charged in the README's units: spans, data points,
// log records, profile samples; the byte bucket with the bytes stored (a
// rejected item's bytes are not). The tenant metrics count the same.
func TestTenantQuotaUnits(t *testing.T) {
	sink := &tenantSink{}
	h, _ := frozenTenantHandler(t, sink, "* items_per_second=1000 bytes_per_second=1MB\n", TenantConfig{})
	post := func(tenant, path string, body []byte) {
		t.Helper()
		r := httptest.NewRequest("POST", path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/x-protobuf")
		r.Header.Set("X-Scope-OrgID", tenant)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", tenant, w.Code, w.Body)
		}
	}
	spans := traceRequest(goodID, goodID, goodID)
	post("spans", "/v1/traces", spans)
	// Two spans of which one has a zero trace id: rejected, not stored.
	mixed := traceRequest(goodID, make([]byte, 16))
	post("mixed", "/v1/traces", mixed)
	// Two profiles, 3 + 5 samples: 8 items.
	post("profiles", "/v1development/profiles", profilesRequest(3, 5))

	level := func(tenant string) (bytes, items float64) {
		bytes, items, _ = h.Pipeline().TenantLevels(tenant)
		return bytes, items
	}
	if b, i := level("spans"); i != 1000-3 || b != 1e6-float64(len(spans)) {
		t.Errorf("spans: buckets at %v bytes, %v items; want %v and %v", b, i, 1e6-float64(len(spans)), 1000-3)
	}
	b, i := level("mixed")
	if i != 1000-1 || b <= 1e6-float64(len(mixed)) {
		t.Errorf("one span of two rejected: buckets at %v bytes, %v items; want 999 items and less than the %d request bytes charged", b, i, len(mixed))
	}
	const samples = 8
	if _, i = level("profiles"); i != 1000-samples {
		t.Errorf("profiles: item bucket at %v, want 1000 less the %d samples stored", i, samples)
	}
	var buf bytes.Buffer
	h.Metrics().WritePrometheus(&buf)
	for _, want := range []string{
		`otlplite_tenant_items_total{tenant="spans"} 3`,
		fmt.Sprintf(`otlplite_tenant_bytes_total{tenant="spans"} %d`, len(spans)),
		`otlplite_tenant_items_total{tenant="mixed"} 1`,
		fmt.Sprintf(`otlplite_tenant_items_total{tenant="profiles"} %d`, samples),
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// Finding 8: invented names, however many, do not displace a known
// tenant: one listed in the quota file, or named by a token, keeps its own
// state and quota, and its export succeeds. On main, 10,050 names sent
// with a legacy token pushed vip into the shared overflow state, whose
// "*" quota refused its 200 KB export with RESOURCE_EXHAUSTED.
func TestTenantKnownNeverDisplaced(t *testing.T) {
	tokens := writeFile(t, "legacy-token\nvip-token tenant=vip\nbound-token tenant=bound\n")
	tf, err := NewTokenFile(tokens)
	if err != nil {
		t.Fatal(err)
	}
	qf, err := NewQuotaFile(writeFile(t, "* bytes_per_second=10KB\nvip bytes_per_second=10MB\n"))
	if err != nil {
		t.Fatal(err)
	}
	sink := &tenantSink{}
	h := New(Config{Sink: sink, Logger: quietLogger(), Auth: tf, Tenants: &TenantConfig{Quotas: qf, Sources: []TenantSource{TenantFromToken, TenantFromHeader}}, Clock: fixedClock})
	do := func(token, tenant string, body []byte) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/v1/traces", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/x-protobuf")
		r.Header.Set("Authorization", "Bearer "+token)
		if tenant != "" {
			r.Header.Set("X-Scope-OrgID", tenant)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	// The flood: bodyless requests, each naming a new tenant (refused as
	// undecodable, after the tenant's state was made).
	for i := range ingest.MaxTenantStates + 50 {
		do("legacy-token", fmt.Sprintf("invented-%d", i), nil)
	}
	if n := h.Pipeline().UnknownTenants(); n != ingest.MaxTenantStates {
		t.Fatalf("%d unknown states, want the bound %d", n, ingest.MaxTenantStates)
	}
	ids := make([][]byte, 4000)
	for i := range ids {
		ids[i] = goodID
	}
	big := traceRequest(ids...) // over the "*" burst (10 KB), within vip's
	if len(big) < 100_000 {
		t.Fatalf("request of %d bytes, want over 100 KB", len(big))
	}
	if w := do("vip-token", "", big); w.Code != 200 {
		t.Fatalf("vip after the flood: %d %s", w.Code, w.Body)
	}
	if _, _, own := h.Pipeline().TenantLevels("vip"); !own {
		t.Fatal("vip has no state of its own")
	}
	// A token's tenant without a quota line of its own is known too.
	if w := do("bound-token", "", traceRequest(goodID)); w.Code != 200 {
		t.Fatalf("bound after the flood: %d %s", w.Code, w.Body)
	}
	if _, _, own := h.Pipeline().TenantLevels("bound"); !own {
		t.Fatal("a token's tenant has no state of its own")
	}
	// So is the default tenant, of requests that name none.
	w := do("legacy-token", "", traceRequest(goodID))
	if _, _, own := h.Pipeline().TenantLevels(otlp.DefaultTenant); w.Code != 200 || !own {
		t.Fatalf("the default tenant after the flood: %d %s, own state %v", w.Code, w.Body, own)
	}
	// An unknown tenant past the bound shares the overflow state: over
	// its rate it is told to retry (429 with Retry-After), never 413.
	small := traceRequest(goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID, goodID)
	codes := map[int]int{}
	for i := range 40 {
		w := do("legacy-token", fmt.Sprintf("late-%d", i), small)
		codes[w.Code]++
		if w.Code != 200 && (w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "") {
			t.Fatalf("overflowed tenant: %d %s", w.Code, w.Body)
		}
	}
	if codes[http.StatusTooManyRequests] == 0 {
		t.Fatalf("the overflow state never throttled: %v", codes)
	}
	var buf bytes.Buffer
	h.Metrics().WritePrometheus(&buf)
	for _, want := range []string{`otlplite_tenant_requests_total{tenant="vip",result="accepted"} 1`, `otlplite_tenant_requests_total{tenant="bound",result="accepted"} 1`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("metrics lack %s: a known tenant lost its label to invented ones", want)
		}
	}
}

// The tenant header cannot be one that carries credentials.
func TestTenantHeaderNotCredential(t *testing.T) {
	for _, name := range []string{"Authorization", "authorization", "Proxy-Authorization", "COOKIE"} {
		if err := CheckTenantHeader(name); err == nil || !strings.Contains(err.Error(), "carries credentials") {
			t.Errorf("%s: %v", name, err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New accepted the tenant header %s", name)
				}
			}()
			New(Config{Sink: &memSink{}, Tenants: &TenantConfig{Header: name}})
		}()
	}
	for _, name := range []string{DefaultTenantHeader, "X-Tenant", "tenant_id"} {
		if err := CheckTenantHeader(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := CheckTenantHeader("X Tenant"); err == nil {
		t.Error("a header name with a space accepted")
	}
}

// A tenant's max_request_bytes bounds its decompression: a gzip bomb
// (32 MiB of zeros in 32 KB) sent by a tenant limited to 64 KiB makes the
// decompressor produce at most about that, not the receiver's limit. On
// main it was decompressed up to the admission budget (4 MiB here) before
// the tenant's limit refused it.
func TestTenantMaxRequestBytesBoundsDecompression(t *testing.T) {
	bomb, err := compression.Compress(nil, compression.Gzip, make([]byte, 32<<20))
	if err != nil {
		t.Fatal(err)
	}
	qf, err := NewQuotaFile(writeFile(t, "* max_request_bytes=64KiB\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Sink: &tenantSink{}, Logger: quietLogger(), Tenants: &TenantConfig{Quotas: qf},
		Admission: AdmissionConfig{RequestLimit: 4 << 20}})
	post := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/v1/traces", bytes.NewReader(bomb))
		r.Header.Set("Content-Type", "application/x-protobuf")
		r.Header.Set("Content-Encoding", "gzip")
		r.Header.Set("X-Scope-OrgID", "team-a")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	post() // warm the pools
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w := post()
	runtime.ReadMemStats(&after)
	if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "65536-byte limit") {
		t.Fatalf("%d %q, want 413 naming the tenant's 65536-byte limit", w.Code, w.Body)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("a refused bomb allocated %d bytes; the tenant's limit is 64 KiB", alloc)
	}
	// gRPC: the same limit on each message.
	c := startHandler(t, h)
	c.Encoding = compression.Gzip
	_, err = withHeaders(c, map[string]string{"x-scope-orgid": "team-a"}).Invoke(context.Background(), traceExport, make([]byte, 1<<20))
	if st := statusOf(t, err); st.Code != grpcwire.ResourceExhausted || !strings.Contains(st.Message, "65536") {
		t.Fatalf("gRPC: %v", st)
	}
}

// Request-log lines: a tenant kept over its quota (a few tiny requests)
// cannot fill the rate-limited refusal log, which would hide every other
// refusal: quota throttles are flow control and log at DEBUG. Refusal
// lines and debug request lines name the tenant. On main 200 throttles
// used the log's whole burst and the other tenant's refusal was dropped.
func TestTenantThrottlesDoNotFillTheRefusalLog(t *testing.T) {
	var logs syncBuffer
	sink := &tenantSink{}
	qf, err := NewQuotaFile(writeFile(t, "* items_per_second=1 burst_items=1\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Sink: sink, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})), Tenants: &TenantConfig{Quotas: qf}, Clock: fixedClock})
	post := func(tenant string, body []byte) int {
		r := httptest.NewRequest("POST", "/v1/traces", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/x-protobuf")
		r.Header.Set("X-Scope-OrgID", tenant)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	codes := map[int]int{}
	for range 200 {
		codes[post("flood", traceRequest(goodID))]++
	}
	if codes[200] != 1 || codes[http.StatusTooManyRequests] != 199 {
		t.Fatalf("flood: %v", codes)
	}
	if code := post("victim", []byte("\xff\xff not protobuf")); code != http.StatusBadRequest {
		t.Fatalf("victim: %d", code)
	}
	out := logs.String()
	if strings.Contains(out, "flood") {
		t.Errorf("a quota throttle was logged at WARN:\n%s", out)
	}
	if !strings.Contains(out, "tenant=victim") || !strings.Contains(out, "cannot decode") {
		t.Errorf("the other tenant's refusal is not in the log:\n%s", out)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use by a logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The debug request line names the request's tenant, as sent.
func TestTenantInRequestLog(t *testing.T) {
	var logs syncBuffer
	h := New(Config{Sink: &tenantSink{}, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Tenants: &TenantConfig{}})
	r := httptest.NewRequest("POST", "/v1/traces", bytes.NewReader(traceRequest(goodID)))
	r.Header.Set("Content-Type", "application/x-protobuf")
	r.Header.Set("X-Scope-OrgID", "team-a")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if out := logs.String(); !strings.Contains(out, "msg=request") || !strings.Contains(out, "tenant=team-a") {
		t.Fatalf("request line without its tenant:\n%s", out)
	}
}

// clientSink records, per tenant, whether its writes came with a tenant a
// client chose (otlp.WithClientTenant).
type clientSink struct {
	mu     sync.Mutex
	client map[string]bool
}

func (s *clientSink) Write(ctx context.Context, _ storage.Signal, _ []byte, _ int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tn, _ := otlp.TenantFrom(ctx)
	s.client[tn] = otlp.TenantFromClient(ctx)
	return nil
}

func (s *clientSink) Close() error { return nil }

// The sink learns which tenants a client chose: a header's name the quota
// file does not list. Listed, token and default tenants are the
// operator's.
func TestTenantClientChosenReachesSink(t *testing.T) {
	tf, err := NewTokenFile(writeFile(t, "legacy-token\nvip-token tenant=vip\n"))
	if err != nil {
		t.Fatal(err)
	}
	qf, err := NewQuotaFile(writeFile(t, "listed items_per_second=1000\n"))
	if err != nil {
		t.Fatal(err)
	}
	sink := &clientSink{client: map[string]bool{}}
	h := New(Config{Sink: sink, Logger: quietLogger(), Auth: tf, Tenants: &TenantConfig{Quotas: qf}})
	for _, c := range []struct{ token, header string }{{"legacy-token", "invented"}, {"legacy-token", "listed"}, {"vip-token", ""}, {"legacy-token", ""}} {
		r := httptest.NewRequest("POST", "/v1/traces", bytes.NewReader(traceRequest(goodID)))
		r.Header.Set("Content-Type", "application/x-protobuf")
		r.Header.Set("Authorization", "Bearer "+c.token)
		if c.header != "" {
			r.Header.Set("X-Scope-OrgID", c.header)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("%+v: %d %s", c, w.Code, w.Body)
		}
	}
	want := map[string]bool{"invented": true, "listed": false, "vip": false, otlp.DefaultTenant: false}
	if fmt.Sprint(sink.client) != fmt.Sprint(want) {
		t.Fatalf("client-chosen per tenant %v, want %v", sink.client, want)
	}
}
