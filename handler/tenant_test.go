package handler

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
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

// tenantSink records the tenant and items of every write.
type tenantSink struct {
	mu    sync.Mutex
	items map[string]int
	set   bool // some write had a tenant in its context
}

func (s *tenantSink) Write(ctx context.Context, _ storage.Signal, _ []byte, items int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil {
		s.items = map[string]int{}
	}
	tn, ok := otlp.TenantFrom(ctx)
	s.set = s.set || ok
	s.items[tn] += items
	return nil
}

func (s *tenantSink) Close() error { return nil }

func (s *tenantSink) get(tenant string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.items[tenant]
}

// headerTransport adds headers to every request (gRPC metadata).
type headerTransport struct {
	rt  http.RoundTripper
	hdr map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header.Set(k, v)
	}
	return h.rt.RoundTrip(r)
}

// withHeaders returns a copy of c that sends hdr with every call.
func withHeaders(c *grpcwire.Client, hdr map[string]string) *grpcwire.Client {
	cc := *c
	cc.HTTP = &http.Client{Transport: headerTransport{c.HTTP.Transport, hdr}}
	return &cc
}

func postTraces(t *testing.T, c *grpcwire.Client, hdr map[string]string, body []byte) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.BaseURL+"/v1/traces", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestParseTenantSources(t *testing.T) {
	got, err := ParseTenantSources("header, token,cert")
	if err != nil || len(got) != 3 || got[0] != TenantFromHeader || got[1] != TenantFromToken || got[2] != TenantFromCert {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"header,header", "cookie"} {
		if _, err := ParseTenantSources(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTokenFileTenants(t *testing.T) {
	tf, _ := newTestTokenFile(t, "plain-token\nteam-a-token tenant=team-a\nteam-b-token\ttenant=team-b\n")
	if !tf.HasTenants() {
		t.Fatal("HasTenants is false")
	}
	for token, want := range map[string]string{"plain-token": "", "team-a-token": "team-a", "team-b-token": "team-b"} {
		got, ok := tf.AuthenticateTenant(bearerRequest(token))
		if !ok || got != want {
			t.Errorf("%s: tenant %q %v, want %q", token, got, ok, want)
		}
	}
	if _, ok := tf.AuthenticateTenant(bearerRequest("team-a")); ok {
		t.Error("the tenant name authenticated as a token")
	}
	old, _ := newTestTokenFile(t, "only-token\n")
	if old.HasTenants() {
		t.Error("a file without tenants has tenants")
	}
}

func tenantHandler(t *testing.T, sink storage.Sink, quotas string, cfg TenantConfig) (*Handler, *grpcwire.Client) {
	t.Helper()
	return tenantHandlerClock(t, sink, quotas, cfg, nil)
}

// tenantHandlerClock is tenantHandler with the pipeline's clock (nil:
// time.Now).
func tenantHandlerClock(t *testing.T, sink storage.Sink, quotas string, cfg TenantConfig, clock func() time.Time) (*Handler, *grpcwire.Client) {
	t.Helper()
	if quotas != "" {
		qf, err := NewQuotaFile(writeFile(t, quotas))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Quotas = qf
	}
	h := New(Config{Sink: sink, Logger: quietLogger(), Tenants: &cfg, Clock: clock})
	return h, startHandler(t, h)
}

// The tenant reaches the sink from the header, on every transport; the
// default and the refusals of a missing or bad name.
func TestTenantIdentityHeader(t *testing.T) {
	sink := &tenantSink{}
	_, c := tenantHandler(t, sink, "", TenantConfig{Default: "fallback"})
	req := traceRequest(goodID, goodID)
	if resp, body := postTraces(t, c, map[string]string{"X-Scope-OrgID": "team-a"}, req); resp.StatusCode != 200 {
		t.Fatalf("HTTP: %d %s", resp.StatusCode, body)
	}
	if _, err := withHeaders(c, map[string]string{"x-scope-orgid": "team-b"}).Invoke(context.Background(), traceExport, req); err != nil {
		t.Fatalf("gRPC: %v", err)
	}
	s := openStream(t, c, "ExportTraces", "X-Scope-OrgID", "team-c")
	s.send(1, req)
	s.send(2, req)
	s.pw.Close()
	acks, st := s.finish()
	if len(acks) != 2 || acks[0].code != resultSuccess || st.Code != grpcwire.OK {
		t.Fatalf("stream: %+v %v", acks, st)
	}
	if resp, _ := postTraces(t, c, nil, req); resp.StatusCode != 200 {
		t.Fatalf("no tenant: %d", resp.StatusCode)
	}
	for tenant, want := range map[string]int{"team-a": 2, "team-b": 2, "team-c": 4, "fallback": 2} {
		if got := sink.get(tenant); got != want {
			t.Errorf("tenant %s: %d items, want %d", tenant, got, want)
		}
	}

	for name, tc := range map[string]struct {
		hdr        []string
		wantStatus int
		want       string
	}{
		"invalid":  {[]string{"team/a"}, 400, "tenant name from the header X-Scope-OrgID has byte 5"},
		"too long": {[]string{strings.Repeat("a", 10000)}, 400, "is 10000 bytes long"},
		"two":      {[]string{"a", "b"}, 400, "2 X-Scope-OrgID headers sent"},
		"reserved": {[]string{"_self"}, 400, "reserved for the receiver's own telemetry"},
	} {
		t.Run(name, func(t *testing.T) {
			r, _ := http.NewRequest("POST", c.BaseURL+"/v1/traces", bytes.NewReader(req))
			r.Header.Set("Content-Type", "application/x-protobuf")
			for _, v := range tc.hdr {
				r.Header.Add("X-Scope-OrgID", v)
			}
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%d %q, want %d %q", resp.StatusCode, body, tc.wantStatus, tc.want)
			}
			if len(tc.hdr) > 1 {
				return
			}
			_, err = withHeaders(c, map[string]string{"x-scope-orgid": tc.hdr[0]}).Invoke(context.Background(), traceExport, req)
			if st := statusOf(t, err); st.Code != grpcwire.InvalidArgument {
				t.Fatalf("gRPC: %v", st)
			}
		})
	}
	if sink.get("team/a") != 0 || len(sink.items) != 4 {
		t.Errorf("refused requests were stored: %v", sink.items)
	}
}

// A control character in the header, sent raw (Go's client refuses to
// send one): net/http answers 400 before the handler sees it, or the
// handler refuses it; nothing is stored either way.
func TestTenantHeaderControlCharacters(t *testing.T) {
	sink := &tenantSink{}
	_, c := tenantHandler(t, sink, "", TenantConfig{})
	addr := strings.TrimPrefix(c.BaseURL, "http://")
	for _, v := range []string{"team\x01a", "team\x7fa", "team\ta"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		body := traceRequest(goodID)
		fmt.Fprintf(conn, "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nX-Scope-OrgID: %s\r\nContent-Length: %d\r\n\r\n", v, len(body))
		conn.Write(body)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != 400 {
			t.Errorf("%q: status %d, want 400", v, resp.StatusCode)
		}
	}
	if len(sink.items) != 0 {
		t.Errorf("stored: %v", sink.items)
	}
}

func TestTenantRequired(t *testing.T) {
	_, c := tenantHandler(t, &tenantSink{}, "", TenantConfig{Required: true})
	resp, body := postTraces(t, c, nil, traceRequest(goodID))
	if resp.StatusCode != 401 || !strings.Contains(body, "no tenant: this server requires one (send the header X-Scope-OrgID)") || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	_, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID))
	if st := statusOf(t, err); st.Code != grpcwire.Unauthenticated {
		t.Fatalf("gRPC: %v", st)
	}
	// Health checks need no tenant.
	if _, err := c.Invoke(context.Background(), "/grpc.health.v1.Health/Check", healthRequest("")); err != nil {
		t.Fatalf("health: %v", err)
	}
}

// The token's tenant comes first when the sources say so; a token without
// one falls through to the header.
func TestTenantFromToken(t *testing.T) {
	tf, _ := newTestTokenFile(t, "tok-a tenant=team-a\ntok-plain\n")
	sink := &tenantSink{}
	srcs, _ := ParseTenantSources("token,header")
	h := New(Config{Sink: sink, Logger: quietLogger(), Auth: tf, Tenants: &TenantConfig{Sources: srcs, Required: true}})
	c := startHandler(t, h)
	req := traceRequest(goodID)
	for _, tc := range []struct {
		hdr  map[string]string
		want int
	}{
		{map[string]string{"Authorization": "Bearer tok-a", "X-Scope-OrgID": "spoofed"}, 200},
		{map[string]string{"Authorization": "Bearer tok-plain", "X-Scope-OrgID": "team-h"}, 200},
		{map[string]string{"Authorization": "Bearer tok-plain"}, 401},
		{map[string]string{"Authorization": "Bearer wrong", "X-Scope-OrgID": "team-h"}, 401},
	} {
		if resp, body := postTraces(t, c, tc.hdr, req); resp.StatusCode != tc.want {
			t.Errorf("%v: %d %s, want %d", tc.hdr, resp.StatusCode, body, tc.want)
		}
	}
	if sink.get("team-a") != 1 || sink.get("team-h") != 1 || sink.get("spoofed") != 0 {
		t.Errorf("stored %v", sink.items)
	}
}

// Over quota: 429 with Retry-After (rounded up), gRPC UNAVAILABLE with the
// computed RetryInfo, the stream FailedRetryable with retry_delay; a
// request larger than the burst: 413 / RESOURCE_EXHAUSTED without
// RetryInfo / FailedNoneRetryable. Nothing refused is stored.
func TestTenantThrottled(t *testing.T) {
	req := traceRequest(goodID, goodID, goodID, goodID)
	sink := &tenantSink{}
	// 1 item a second, burst 4: the first request empties the bucket,
	// the next waits 4 s.
	h, c := tenantHandler(t, sink, "* items_per_second=1 burst_items=4\nbig items_per_second=1000 burst_items=2\n", TenantConfig{})
	hdr := map[string]string{"X-Scope-OrgID": "team-a"}
	if resp, body := postTraces(t, c, hdr, req); resp.StatusCode != 200 {
		t.Fatalf("first: %d %s", resp.StatusCode, body)
	}
	resp, body := postTraces(t, c, hdr, req)
	if resp.StatusCode != 429 || !strings.Contains(body, "tenant team-a is over its items per second quota") {
		t.Fatalf("second: %d %q", resp.StatusCode, body)
	}
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); ra < 3 || ra > 4 {
		t.Errorf("Retry-After %q, want 3 or 4 (the bucket refills 1 item/s, the request has 4)", resp.Header.Get("Retry-After"))
	}
	_, err := withHeaders(c, hdr).Invoke(context.Background(), traceExport, req)
	st := statusOf(t, err)
	if st.Code != grpcwire.Unavailable || st.RetryDelay < 3*time.Second || st.RetryDelay > 4*time.Second {
		t.Fatalf("gRPC: %v delay %v", st, st.RetryDelay)
	}
	s := openStream(t, c, "ExportTraces", "X-Scope-OrgID", "team-a")
	s.send(7, req)
	s.pw.Close()
	acks, _ := s.finish()
	if len(acks) != 1 || acks[0].code != resultRetryable || !acks[0].hasDelay || acks[0].delay < 3*time.Second || acks[0].delay > 4*time.Second {
		t.Fatalf("stream: %+v", acks)
	}

	big := map[string]string{"X-Scope-OrgID": "big"}
	resp, body = postTraces(t, c, big, req)
	if resp.StatusCode != 413 || resp.Header.Get("Retry-After") != "" || !strings.Contains(body, "larger than the tenant's burst_items of 2") {
		t.Fatalf("never fits: %d %q", resp.StatusCode, body)
	}
	_, err = withHeaders(c, big).Invoke(context.Background(), traceExport, req)
	if st := statusOf(t, err); st.Code != grpcwire.ResourceExhausted || st.HasRetryInfo() {
		t.Fatalf("gRPC never fits: %v", st)
	}
	s = openStream(t, c, "ExportTraces", "X-Scope-OrgID", "big")
	s.send(1, req)
	s.pw.Close()
	if acks, _ := s.finish(); len(acks) != 1 || acks[0].code != resultNonRetryable {
		t.Fatalf("stream never fits: %+v", acks)
	}
	if sink.get("team-a") != 4 || sink.get("big") != 0 {
		t.Fatalf("stored %v", sink.items)
	}

	var buf bytes.Buffer
	h.Metrics().WritePrometheus(&buf)
	for _, want := range []string{
		`otlplite_tenant_requests_total{tenant="team-a",result="accepted"} 1`,
		`otlplite_tenant_requests_total{tenant="team-a",result="throttled"} 3`,
		`otlplite_tenant_requests_total{tenant="big",result="refused"} 3`,
		`otlplite_tenant_items_total{tenant="team-a"} 4`,
		`otlplite_tenant_bucket_items{tenant="big"} 2`,
		`otlplite_tenant_bucket_bytes{tenant="team-a"} +Inf`,
		`otlplite_tenant_admission_bytes{tenant="team-a"} 0`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Log(buf.String())
	}
}

// A tenant at its share of the admission budget is refused (retryable)
// while another tenant is admitted; a request larger than the share alone
// is refused as too large.
func TestTenantBudgetShare(t *testing.T) {
	req := traceRequest(goodID, goodID)
	n := int64(len(req))
	sink := &gateSink{gate: make(chan struct{})}
	qf, err := NewQuotaFile(writeFile(t, "* max_budget_share=0.3\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Sink: sink, Logger: quietLogger(), Tenants: &TenantConfig{Quotas: qf},
		// One request is 0.2 of the budget: a tenant's share (0.3) holds
		// one, the budget holds four.
		Admission: AdmissionConfig{RequestLimit: 5 * n}})
	c := startHandler(t, h)
	done := make(chan int, 2)
	post := func(tenant string) {
		r, _ := http.NewRequest("POST", c.BaseURL+"/v1/traces", bytes.NewReader(req))
		r.Header.Set("Content-Type", "application/x-protobuf")
		r.Header.Set("X-Scope-OrgID", tenant)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}
	go post("team-a") // held in the sink
	deadline := time.Now().Add(10 * time.Second)
	for sink.blocked.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("first request never reached the sink")
		}
		time.Sleep(time.Millisecond)
	}
	resp, body := postTraces(t, c, map[string]string{"X-Scope-OrgID": "team-a"}, req)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "max_budget_share") {
		t.Fatalf("second request of team-a: %d %q", resp.StatusCode, body)
	}
	go post("team-b") // admitted, also held
	for sink.blocked.Load() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("team-b was not admitted while team-a was at its share")
		}
		time.Sleep(time.Millisecond)
	}
	close(sink.gate)
	if a, b := <-done, <-done; a != 200 || b != 200 {
		t.Fatalf("held requests: %d %d", a, b)
	}
	bigger := traceRequest(goodID, goodID, goodID, goodID)
	resp, body = postTraces(t, c, map[string]string{"X-Scope-OrgID": "team-a"}, bigger)
	if resp.StatusCode != 413 || !strings.Contains(body, "max_budget_share of the admission budget") {
		t.Fatalf("larger than the share: %d %q", resp.StatusCode, body)
	}
}

// Metrics labels are capped: a flood of 2000 distinct tenant names (a
// hostile header) is served, and beyond ingest.MaxTenantLabels the tenants are
// counted under otherTenants, so the sums stay right.
func TestTenantLabelsCapped(t *testing.T) {
	h, c := tenantHandler(t, &tenantSink{}, "", TenantConfig{})
	req := traceRequest(goodID)
	const total = 2000
	for i := range total {
		if resp, _ := postTraces(t, c, map[string]string{"X-Scope-OrgID": fmt.Sprintf("t%d", i)}, req); resp.StatusCode != 200 {
			t.Fatal(resp.StatusCode)
		}
	}
	var buf bytes.Buffer
	h.Metrics().WritePrometheus(&buf)
	labels, sum := 0, 0
	for line := range strings.SplitSeq(buf.String(), "\n") {
		if strings.HasPrefix(line, `otlplite_tenant_requests_total{`) && strings.Contains(line, `result="accepted"`) {
			labels++
			v, _ := strconv.Atoi(line[strings.LastIndexByte(line, ' ')+1:])
			sum += v
		}
	}
	if labels != ingest.MaxTenantLabels || sum != total {
		t.Fatalf("%d labels, %d requests counted; want %d and %d", labels, sum, ingest.MaxTenantLabels, total)
	}
	want := fmt.Sprintf(`otlplite_tenant_requests_total{tenant="~other",result="accepted"} %d`, total-(ingest.MaxTenantLabels-1))
	if !strings.Contains(buf.String(), want) {
		t.Errorf("no %s", want)
	}
}

// The quota file reloads while requests flow; a bad reload keeps the
// limits in force.
func TestTenantQuotaReloadUnderLoad(t *testing.T) {
	path := writeFile(t, "* items_per_second=1 burst_items=1\n")
	qf, err := NewQuotaFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sink := &tenantSink{}
	h := New(Config{Sink: sink, Logger: quietLogger(), Tenants: &TenantConfig{Quotas: qf}})
	c := startHandler(t, h)
	gc := withHeaders(c, map[string]string{"x-scope-orgid": "team-a"})
	req := traceRequest(goodID, goodID)
	// Burst 1, requests of 2: never fits.
	_, err = gc.Invoke(context.Background(), traceExport, req)
	if st := statusOf(t, err); st.Code != grpcwire.ResourceExhausted {
		t.Fatalf("before reload: %v", st)
	}
	stop := make(chan struct{})
	reports := make(chan error, 10)
	go qf.Watch(time.Millisecond, stop, func(_ int, err error) { reports <- err })
	defer close(stop)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[grpcwire.Code]int{}
	for range 4 {
		wg.Go(func() {
			for range 50 {
				_, err := gc.Invoke(context.Background(), traceExport, req)
				code := grpcwire.OK
				if err != nil {
					code = statusOf(t, err).Code
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		})
	}
	replaceFile(t, path, "* items_per_second=1000000\n")
	if err := <-reports; err != nil {
		t.Fatalf("reload: %v", err)
	}
	wg.Wait()
	if codes[grpcwire.OK] == 0 {
		t.Fatalf("no request admitted after the reload: %v", codes)
	}
	// A bad file: reported, the old limits stay.
	replaceFile(t, path, "* items_per_second=lots\n")
	if err := <-reports; err == nil || !strings.Contains(err.Error(), "line 1: items_per_second") {
		t.Fatalf("bad reload reported as %v", err)
	}
	if _, err := gc.Invoke(context.Background(), traceExport, req); err != nil {
		t.Fatalf("after a bad reload: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := sink.get("team-a"); got != 2*(codes[grpcwire.OK]+1) {
		t.Fatalf("stored %d items, acknowledged %d requests of 2", got, codes[grpcwire.OK]+1)
	}
}

// With tenancy off, nothing of it shows: no tenant in the sink's context,
// no tenant metrics.
func TestTenancyOff(t *testing.T) {
	sink := &tenantSink{}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	c := startHandler(t, h)
	if resp, _ := postTraces(t, c, map[string]string{"X-Scope-OrgID": "team-a"}, traceRequest(goodID)); resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	if sink.set {
		t.Error("a tenant reached the sink with tenancy off")
	}
	var buf bytes.Buffer
	h.Metrics().WritePrometheus(&buf)
	if strings.Contains(buf.String(), "otlplite_tenant_") {
		t.Error("tenant metrics with tenancy off")
	}
}

// replaceFile replaces path's content at once (write, then rename), so a
// poll never sees it half written.
func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// max_request_bytes: a declared size over it is refused before the body is
// read (413 / RESOURCE_EXHAUSTED without RetryInfo), as is a decompressed
// size over it.
func TestTenantMaxRequestBytes(t *testing.T) {
	ids := make([][]byte, 50)
	for i := range ids {
		ids[i] = goodID
	}
	req := traceRequest(ids...) // 50 like spans: compresses well
	sink := &tenantSink{}
	_, c := tenantHandler(t, sink, fmt.Sprintf("* max_request_bytes=%d\n", len(req)-1), TenantConfig{})
	hdr := map[string]string{"X-Scope-OrgID": "team-a"}
	resp, body := postTraces(t, c, hdr, req)
	if resp.StatusCode != 413 || !strings.Contains(body, "larger than the tenant's max_request_bytes") {
		t.Fatalf("HTTP: %d %q", resp.StatusCode, body)
	}
	_, err := withHeaders(c, map[string]string{"x-scope-orgid": "team-a"}).Invoke(context.Background(), traceExport, req)
	if st := statusOf(t, err); st.Code != grpcwire.ResourceExhausted || st.HasRetryInfo() {
		t.Fatalf("gRPC: %v", st)
	}
	// Compressed below the limit, decompressed above it.
	gz, _ := compression.Compress(nil, compression.Gzip, req)
	if len(gz) >= len(req) {
		t.Fatalf("the request does not compress: %d bytes gzipped, %d plain", len(gz), len(req))
	}
	resp, body = postTraces(t, c, map[string]string{"X-Scope-OrgID": "team-a", "Content-Encoding": "gzip"}, gz)
	if resp.StatusCode != 413 || !strings.Contains(body, fmt.Sprintf("exceeds the %d-byte limit (compressed or decompressed)", len(req)-1)) {
		t.Fatalf("gzip: %d %q", resp.StatusCode, body)
	}
	if len(sink.items) != 0 {
		t.Fatalf("stored %v", sink.items)
	}
	if resp, _ := postTraces(t, c, hdr, traceRequest(goodID)); resp.StatusCode != 200 {
		t.Fatalf("a small request: %d", resp.StatusCode)
	}
}
