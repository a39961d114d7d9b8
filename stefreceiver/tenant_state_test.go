package stefreceiver

import (
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
)

// A tenant's STEF streams hold at most half its max_budget_share in
// decoder state (ingest.Pipeline.HoldStreamStateFor): its next stream is
// refused as when the budget is full (no_room_for_state), while another
// tenant's stream is served, every point acknowledged and stored.
func TestStreamStateWithinTenantShare(t *testing.T) {
	qpath := t.TempDir() + "/quotas"
	if err := os.WriteFile(qpath, []byte("greedy max_budget_share=0.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	qf, err := ingest.NewQuotaFile(qpath)
	if err != nil {
		t.Fatal(err)
	}
	sink := &countSink{}
	// The state half holds four streams' state; greedy's share four,
	// half of it in state: two.
	pl := ingest.New(ingest.Config{Sink: sink, Tenants: &ingest.TenantsConfig{Quotas: qf},
		Admission: ingest.AdmissionConfig{RequestLimit: 8 * StateCostZstd}})
	r := New(pl, Config{})
	addr := serveH2C(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.ServeHTTP(w, req.WithContext(pl.WithTenant(req.Context(), req.Header.Get("X-Tenant"), true)))
	}))
	for k := int64(1); k <= 2; k++ {
		p := dial(t, addr, "X-Tenant", "greedy")
		p.sendFirst(t, "Metrics")
		p.recv(t)
		// Its state is charged after its capabilities are written.
		deadline := time.Now().Add(10 * time.Second)
		for pl.StreamStateHeld() != k*StateCostZstd {
			if time.Now().After(deadline) {
				t.Fatalf("stream %d: state %d, want %d", k, pl.StreamStateHeld(), k*StateCostZstd)
			}
			runtime.Gosched()
		}
	}
	third := dial(t, addr, "X-Tenant", "greedy")
	third.sendFirst(t, "Metrics")
	third.recv(t)
	// Refused, or (without the tenant's bound) holding a third state:
	// whichever comes first, so that a failure does not hang.
	deadline := time.Now().Add(10 * time.Second)
	for r.refusedState.Get() == 0 {
		if pl.StreamStateHeld() > 2*StateCostZstd {
			t.Fatalf("greedy's third stream holds state: %d bytes, beyond half its share", pl.StreamStateHeld())
		}
		if time.Now().After(deadline) {
			t.Fatal("greedy's third stream neither refused nor charged in 10 s")
		}
		runtime.Gosched()
	}
	if st := third.status(); !strings.Contains(st, "no room for another STEF stream's decoder state") {
		t.Fatalf("greedy's third stream: %q, want refused for want of room", st)
	}
	if got := r.refusedState.Get(); got != 1 {
		t.Fatalf(`otlplite_stef_refusals_total{reason="no_room_for_state"} %d, want 1`, got)
	}
	other := dial(t, addr, "X-Tenant", "other")
	other.sendFirst(t, "Metrics")
	other.recv(t)
	w, err := otelstef.NewMetricsWriter(chunkSender{t, other}, pkg.WriterOptions{Compression: pkg.CompressionZstd})
	if err != nil {
		t.Fatal(err)
	}
	writePoints(t, w, 3, 0)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for acked := uint64(0); acked < 3; {
		msg := other.recv(t)
		if msg == nil {
			t.Fatalf("the other tenant's stream ended at ack %d: %s", acked, other.status())
		}
		acked, _ = parseAck(t, msg)
	}
	if n := sink.count(); n != 3 {
		t.Fatalf("stored %d points, acknowledged 3", n)
	}
}
