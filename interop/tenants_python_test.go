package interop

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// pyTenantRun is python/tenants.py's summary.
type pyTenantRun struct {
	Acked, Failed []uint64
	Seconds       float64
	Latencies     []float64
}

// TestTenantsPythonSDK: three tenants with the OpenTelemetry Python SDK's
// gRPC exporter (x-scope-orgid). team-flood offers ten times its quota
// from four threads; the exporter retries, waiting the server's RetryInfo
// (google.rpc.retryinfo-bin), and gives up on a batch after its own six
// attempts. team-b and team-c stay within their quotas and are never
// refused. The store holds every acknowledged span once under its tenant,
// and no span of a batch the exporter gave up on.
func TestTenantsPythonSDK(t *testing.T) {
	python := pythonInterpreter(t)
	const floodRate = 200
	quotas := filepath.Join(t.TempDir(), "quotas")
	if err := os.WriteFile(quotas, fmt.Appendf(nil,
		"team-flood items_per_second=%d burst_items=%d\n* items_per_second=5000\n", floodRate, floodRate), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	srv := startServer(t, dataDir, "-tenant-header", "X-Scope-OrgID", "-tenant-required", "-tenant-quota-file", quotas)

	type run struct {
		tenant                string
		spans, batch, threads int
		pace                  string
		out                   string
	}
	runs := []run{
		{tenant: "team-flood", spans: 10 * floodRate, batch: 50, threads: 4, pace: "0"},
		{tenant: "team-b", spans: 300, batch: 10, threads: 1, pace: "0.02"},
		{tenant: "team-c", spans: 300, batch: 10, threads: 1, pace: "0.02"},
	}
	var wg sync.WaitGroup
	for i := range runs {
		runs[i].out = filepath.Join(t.TempDir(), "out.json")
		wg.Go(func() {
			r := runs[i]
			cmd := exec.Command(python, filepath.Join("python", "tenants.py"), "--endpoint", srv.addr, "--tenant", r.tenant,
				"--index", fmt.Sprint(i), "--spans", fmt.Sprint(r.spans), "--batch", fmt.Sprint(r.batch),
				"--threads", fmt.Sprint(r.threads), "--pace", r.pace, "--out", r.out)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("tenants.py %s: %v\n%s", r.tenant, err, out)
			}
		})
	}
	wg.Wait()
	srv.stop()
	if t.Failed() {
		return
	}
	results := make([]pyTenantRun, len(runs))
	acked := map[uint64]string{}
	failed := map[uint64]bool{}
	for i, r := range runs {
		b, err := os.ReadFile(r.out)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &results[i]); err != nil {
			t.Fatal(err)
		}
		for _, id := range results[i].Acked {
			acked[id] = r.tenant
		}
		for _, id := range results[i].Failed {
			failed[id] = true
		}
	}
	fl := results[0]
	if len(fl.Acked) == 0 {
		t.Fatalf("team-flood: nothing acknowledged")
	}
	// Honouring the delays, what was acknowledged went at the quota.
	if min := float64(len(fl.Acked)-floodRate) / floodRate; fl.Seconds < min*0.9 {
		t.Errorf("team-flood stored %d spans in %.1fs, faster than its quota allows (%.1fs)", len(fl.Acked), fl.Seconds, min)
	}
	for _, i := range []int{1, 2} {
		if len(results[i].Failed) > 0 || len(results[i].Acked) != runs[i].spans {
			t.Errorf("%s (within its quota): %d acknowledged, %d failed of %d", runs[i].tenant, len(results[i].Acked), len(results[i].Failed), runs[i].spans)
		}
	}
	p := func(l []float64, q float64) time.Duration {
		if len(l) == 0 {
			return 0
		}
		s := slices.Clone(l)
		slices.Sort(s)
		return time.Duration(s[int(q*float64(len(s)-1))] * float64(time.Second))
	}
	t.Logf("team-flood: %d acknowledged, %d given up by the exporter, %.1fs; team-b latency p50 %v p99 %v; team-c p50 %v p99 %v",
		len(fl.Acked), len(fl.Failed), fl.Seconds, p(results[1].Latencies, 0.5), p(results[1].Latencies, 0.99), p(results[2].Latencies, 0.5), p(results[2].Latencies, 0.99))

	stored := map[uint64]int{}
	err := disk.Scan(dataDir, storage.Traces, func(r disk.Record) error {
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(r.Data, &req); err != nil {
			return err
		}
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					id := binary.BigEndian.Uint64(sp.GetSpanId())
					stored[id]++
					if want := runs[id>>32-1].tenant; r.Tenant != want {
						return fmt.Errorf("span %x of %s stored under %s", id, want, r.Tenant)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, tenant := range acked {
		if stored[id] != 1 {
			t.Errorf("acknowledged span %x of %s stored %d times", id, tenant, stored[id])
		}
	}
	for id := range stored {
		if failed[id] {
			t.Errorf("span %x of a batch the exporter gave up on was stored", id)
		}
		if _, ok := acked[id]; !ok && !failed[id] {
			t.Errorf("span %x stored but never sent", id)
		}
	}
}
