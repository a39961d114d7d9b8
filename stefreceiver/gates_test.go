package stefreceiver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// The STEF stream mounted behind the handler's gates (handler.Mount), as
// the service serves it: admitted exactly like the export stream.

// tenantSink counts the items stored per tenant.
type tenantSink struct {
	mu    sync.Mutex
	items map[string]int
}

func (s *tenantSink) Write(ctx context.Context, _ storage.Signal, _ []byte, items int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tn, _ := otlp.TenantFrom(ctx)
	s.items[tn] += items
	return nil
}

func (s *tenantSink) Close() error { return nil }

func (s *tenantSink) get(tn string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.items[tn]
}

// serveMounted serves a handler built from cfg, with the STEF receiver
// mounted on it, on h2c on a free port.
func serveMounted(t *testing.T, cfg handler.Config) (string, *handler.Handler, *tenantSink) {
	t.Helper()
	sink := &tenantSink{items: map[string]int{}}
	cfg.Sink = sink
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	h := handler.New(cfg)
	h.Mount(Path, New(h.Pipeline(), Config{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	protos.SetHTTP1(true)
	srv := &http.Server{Handler: h, Protocols: &protos}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), h, sink
}

// open sends the first message and takes the capabilities.
func (p *peer) open(t *testing.T) {
	t.Helper()
	p.sendFirst(t, "Metrics")
	if caps := p.recv(t); len(caps) == 0 || caps[0] != 1<<3|2 {
		t.Fatalf("no capabilities: %x", caps)
	}
}

// frame writes n points with w and returns the acknowledgement.
func (p *peer) frame(t *testing.T, w *otelstef.MetricsWriter, n, from int) uint64 {
	t.Helper()
	writePoints(t, w, n, from)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	msg := p.recv(t)
	if msg == nil {
		t.Fatalf("stream ended: %s", p.status())
	}
	ack, _ := parseAck(t, msg)
	return ack
}

func newWriter(t *testing.T, p *peer, c pkg.Compression) *otelstef.MetricsWriter {
	w, err := otelstef.NewMetricsWriter(chunkSender{t, p}, pkg.WriterOptions{Compression: c})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A STEF stream without the bearer token is refused UNAUTHENTICATED by
// the handler's Authenticator before it is read; with it, it is served.
func TestMountedAuthenticated(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("s3cret-token-of-the-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auth, err := handler.NewTokenFile(tokens)
	if err != nil {
		t.Fatal(err)
	}
	addr, _, sink := serveMounted(t, handler.Config{Auth: auth})
	if st := dial(t, addr).status(); !strings.HasPrefix(st, "16 ") {
		t.Fatalf("no token: status %q, want UNAUTHENTICATED", st)
	}
	p := dial(t, addr, "Authorization", "Bearer s3cret-token-of-the-test")
	p.open(t)
	if ack := p.frame(t, newWriter(t, p, pkg.CompressionNone), 3, 0); ack != 3 {
		t.Fatalf("ack %d, want 3", ack)
	}
	if n := sink.get(otlp.DefaultTenant) + sink.get(""); n != 3 {
		t.Fatalf("stored %d points, want 3", n)
	}
}

// A STEF stream naming its tenant in the tenant header is stored under
// that tenant and charged to its quota: past its burst the stream ends,
// retryable, as the export stream's request does.
func TestMountedTenantAndQuota(t *testing.T) {
	quotas := filepath.Join(t.TempDir(), "quotas")
	if err := os.WriteFile(quotas, []byte("* items_per_second=1 burst_items=4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	qf, err := handler.NewQuotaFile(quotas)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	addr, _, sink := serveMounted(t, handler.Config{
		Tenants: &handler.TenantConfig{Quotas: qf},
		Clock:   func() time.Time { return now },
	})
	p := dial(t, addr, "X-Scope-OrgID", "team-a")
	p.open(t)
	w := newWriter(t, p, pkg.CompressionNone)
	if ack := p.frame(t, w, 3, 0); ack != 3 {
		t.Fatalf("ack %d, want 3", ack)
	}
	if got := sink.get("team-a"); got != 3 {
		t.Fatalf("team-a stored %d points, want 3 (default tenant: %d)", got, sink.get(otlp.DefaultTenant))
	}
	// 3 more do not fit the 1 left of the burst of 4.
	writePoints(t, w, 3, 3)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if msg := p.recv(t); msg != nil {
		ack, _ := parseAck(t, msg)
		t.Fatalf("acknowledged %d past the quota", ack)
	}
	if st := p.status(); !strings.HasPrefix(st, "14 ") || !strings.Contains(st, "team-a") {
		t.Fatalf("over quota: status %q, want UNAVAILABLE naming the tenant", st)
	}
	if got := sink.get("team-a"); got != 3 {
		t.Fatalf("team-a stored %d points past its quota", got)
	}
}

// STEF streams hold units of the process-wide stream bound, shared with
// every request: with both units held by idle STEF streams a third STEF
// stream and an OTLP export are refused, retryable; once one STEF stream
// ends, the export succeeds.
func TestMountedStreamBound(t *testing.T) {
	addr, h, _ := serveMounted(t, handler.Config{
		Admission: handler.AdmissionConfig{MaxStreams: 2, MaxWait: time.Millisecond},
	})
	a, b := dial(t, addr), dial(t, addr)
	a.open(t)
	b.open(t)
	if st := dial(t, addr).status(); !strings.HasPrefix(st, "14 ") {
		t.Fatalf("third STEF stream: status %q, want UNAVAILABLE", st)
	}
	post := func() int {
		resp, err := http.Post("http://"+addr+"/v1/metrics", "application/x-protobuf", bytes.NewReader(nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(); code != http.StatusServiceUnavailable {
		t.Fatalf("export beside two idle STEF streams at a bound of 2: %d, want 503", code)
	}
	a.w.Close()
	if st := a.status(); st != "0 " {
		t.Fatalf("closed STEF stream: %q", st)
	}
	if code := post(); code != http.StatusOK {
		t.Fatalf("export once a unit is free: %d, want 200", code)
	}
	var buf bytes.Buffer
	h.Metrics().WritePrometheus(&buf)
	if !strings.Contains(buf.String(), "otlplite_streams_refused_total 2\n") {
		t.Errorf("refusals not counted by the stream bound:\n%s", grepLines(buf.String(), "otlplite_streams_"))
	}
}

// The reader's state is charged to the admission budget for the stream's
// life (zstd: StateCostZstd, plain: StateCostPlain, and its dictionaries
// as they grow) and returned when it
// ends; a stream that finds no room is refused UNAVAILABLE, counted.
func TestStateCharged(t *testing.T) {
	addr, h, _ := serveMounted(t, handler.Config{})
	pl := h.Pipeline()
	z, plain := dial(t, addr), dial(t, addr)
	z.open(t)
	plain.open(t)
	z.frame(t, newWriter(t, z, pkg.CompressionZstd), 1, 0)
	plain.frame(t, newWriter(t, plain, pkg.CompressionNone), 1, 0)
	// Each stream's dictionaries, one point's, take one DictChargeStep.
	if got := pl.StreamStateHeld(); got != StateCostZstd+StateCostPlain+2*DictChargeStep {
		t.Fatalf("held %d, want %d (zstd) + %d (plain) + 2 x %d (dictionaries)", got, StateCostZstd, StateCostPlain, DictChargeStep)
	}
	z.w.Close()
	plain.w.Close()
	if z.status() != "0 " || plain.status() != "0 " {
		t.Fatal("streams did not end OK")
	}
	// What stays charged is the zstd stream's decoder, kept for the
	// next stream (spares.go); the plain stream's buffer is too small to
	// keep.
	if got := pl.StreamStateHeld(); got != StateCostZstd {
		t.Fatalf("held %d after the streams ended, want %d (a spare zstd decoder)", got, StateCostZstd)
	}

	// A budget whose half (what stream state may take) is under one
	// reader's state.
	addr, h, _ = serveMounted(t, handler.Config{Admission: handler.AdmissionConfig{RequestLimit: 16 << 20}})
	p := dial(t, addr)
	p.open(t)
	if st := p.status(); !strings.HasPrefix(st, "14 ") || !strings.Contains(st, "decoder state") {
		t.Fatalf("no room: status %q, want UNAVAILABLE", st)
	}
	if got := h.Pipeline().StreamStateHeld(); got != 0 {
		t.Fatalf("held %d after a refusal", got)
	}
	var buf bytes.Buffer
	h.Metrics().WritePrometheus(&buf)
	if !strings.Contains(buf.String(), `otlplite_stef_refusals_total{reason="no_room_for_state"} 1`) {
		t.Errorf("refusal not counted:\n%s", grepLines(buf.String(), "otlplite_stef_"))
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
