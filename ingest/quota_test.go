package ingest

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestParseQuotas(t *testing.T) {
	q, err := ParseQuotas([]byte(`
# comment
team-a bytes_per_second=10MiB burst_bytes=40MiB items_per_second=50k max_request_bytes=8MiB
*      bytes_per_second=1MB items_per_second=1000 max_budget_share=0.25
team-b bytes_per_second=0 burst_items=5000
`))
	if err != nil {
		t.Fatal(err)
	}
	a := q.Tenants["team-a"]
	if a.BytesPerSecond != 10<<20 || a.BurstBytes != 40<<20 || a.ItemsPerSecond != 50000 || a.BurstItems != 50000 ||
		a.MaxRequestBytes != 8<<20 || a.MaxBudgetShare != 0.25 {
		t.Errorf("team-a %+v", a)
	}
	b := q.Tenants["team-b"]
	if b.BytesPerSecond != 0 || b.BurstBytes != 0 || b.ItemsPerSecond != 1000 || b.BurstItems != 5000 {
		t.Errorf("team-b %+v", b)
	}
	if d := q.Default; d.BytesPerSecond != 1e6 || d.BurstBytes != 1e6 || d.MaxBudgetShare != 0.25 {
		t.Errorf("default %+v", d)
	}
	if len(q.Order) != 2 || q.Order[0] != "team-a" {
		t.Errorf("order %v", q.Order)
	}
	for content, want := range map[string]string{
		"a bytes_per_second=1MiB\na items_per_second=1\n": "line 2: a already has a quota on line 1",
		"* bytes_per_second=1\n\n* bytes_per_second=2\n":  "line 3: * already has a quota on line 1",
		"a rate=1\n":                                `line 1: unknown key "rate"`,
		"a bytes_per_second\n":                      `line 1: "bytes_per_second" is not key=value`,
		"a bytes_per_second=10XB\n":                 "line 1: bytes_per_second: \"10XB\" is not a size",
		"a items_per_second=-1\n":                   "is negative",
		"a max_budget_share=1.5\n":                  "want a share above 0 and at most 1",
		"a burst_bytes=1MiB\n":                      "line 1: burst_bytes without bytes_per_second",
		"bad/name bytes_per_second=1\n":             "line 1: the tenant name has byte 4",
		"a items_per_second=1 items_per_second=2\n": "items_per_second is set twice",
		"a items_per_second=NaN\n":                  "is not a number",
	} {
		if _, err := ParseQuotas([]byte(content)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", content, err, want)
		}
	}
}

// The buckets: a request is charged both bytes and items or neither, the
// delay is when the bucket will hold it, refills are continuous, and a
// request larger than a bucket can ever hold is refused for good.
func TestTenantBuckets(t *testing.T) {
	qf, err := NewQuotaFile(writeFile(t, "a bytes_per_second=1000 burst_bytes=2000 items_per_second=10 burst_items=20\n"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	ts := &tenantState{name: "a", last: now}
	if st, _ := ts.take(qf, now, 1500, 5); st != nil {
		t.Fatalf("first take: %v", st)
	}
	// 500 bytes left: 1000 more need 0.5 s.
	st, throttled := ts.take(qf, now, 1000, 5)
	if st == nil || !throttled || st.Code != grpcwire.Unavailable || st.RetryDelay != 500*time.Millisecond {
		t.Fatalf("second take: %v throttled=%v", st, throttled)
	}
	// Nothing was taken by the refusal: after exactly the delay it fits.
	if st, _ := ts.take(qf, now.Add(500*time.Millisecond), 1000, 5); st != nil {
		t.Fatalf("after the delay: %v", st)
	}
	// Items: 10 left after 0.5 s refill (15-5-... ) — ask for 20, the item
	// bucket decides: (20-level)/10 s.
	b, i := ts.levels(qf, now.Add(500*time.Millisecond))
	if b != 0 || i != 15 {
		t.Fatalf("levels %v %v, want 0 and 15", b, i)
	}
	st, _ = ts.take(qf, now.Add(500*time.Millisecond), 0, 20)
	if st == nil || st.RetryDelay != 500*time.Millisecond || !strings.Contains(st.Message, "items per second") {
		t.Fatalf("items: %v", st)
	}
	st, throttled = ts.take(qf, now, 10, 21)
	if st == nil || throttled || st.Code != grpcwire.ResourceExhausted || st.RetryDelay != 0 || !strings.Contains(st.Message, "burst_items of 20") {
		t.Fatalf("never fits: %v", st)
	}
	st, _ = ts.beforeDecode(qf, now, 2001)
	if st == nil || st.Code != grpcwire.ResourceExhausted || !strings.Contains(st.Message, "burst_bytes of 2000") {
		t.Fatalf("never fits before decode: %v", st)
	}
	ts.refund(1000, 5)
	if b, _ := ts.levels(qf, now.Add(500*time.Millisecond)); b != 1000 {
		t.Fatalf("after refund: %v", b)
	}
	// A reload that lowers the burst caps the level; one that lifts the
	// limit makes the bucket unlimited.
	os.WriteFile(qf.path, []byte("a bytes_per_second=100 burst_bytes=300\n"), 0o600)
	if err := qf.Reload(); err != nil {
		t.Fatal(err)
	}
	if b, i := ts.levels(qf, now.Add(500*time.Millisecond)); b != 300 || !math.IsInf(i, 1) {
		t.Fatalf("after reload: %v %v", b, i)
	}
	os.WriteFile(qf.path, []byte("a bytes_per_second=100 burst_bytes=\n"), 0o600)
	if err := qf.Reload(); err == nil {
		t.Fatal("bad reload accepted")
	}
	if b, _ := ts.levels(qf, now.Add(500*time.Millisecond)); b != 300 {
		t.Fatalf("after a bad reload the old quota must stay: %v", b)
	}
}

// Thousands of distinct names: the registry stays bounded; full states are
// forgotten, and past the cap new names share the overflow state.
func TestTenantRegistryBounded(t *testing.T) {
	qf, err := NewQuotaFile(writeFile(t, "* items_per_second=10\n"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	r := newTenantRegistry(qf, newTenantMetrics(metrics.NewSet()))
	r.now = func() time.Time { return now }
	for i := range MaxTenantStates {
		ts := r.get(fmt.Sprintf("t%d", i), false)
		ts.take(qf, now, 0, 1) // not full: cannot be forgotten yet
	}
	if ts := r.get("late", false); ts != r.overflow {
		t.Fatalf("past the cap, a new tenant got its own state")
	}
	// A while later every bucket is full again and unused: they can go.
	now = now.Add(forgetIdle + time.Second)
	if ts := r.get("later", false); ts == r.overflow || len(r.states) != 1 {
		t.Fatalf("full states were not forgotten: %d states", len(r.states))
	}
}

// The tenant table with the fewest bytes: one request per invented name,
// each of the longest name allowed (150 bytes), each leaving its bucket
// below full so that none can be forgotten. Twice MaxTenantStates names
// hold MaxTenantStates states, in under 8 MB, and a known tenant still
// gets its own.
func TestTenantTableMemoryBound(t *testing.T) {
	qf, err := NewQuotaFile(writeFile(t, "* items_per_second=10\n"))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := newTenantRegistry(qf, newTenantMetrics(metrics.NewSet()))
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	for i := range 2 * MaxTenantStates {
		name := fmt.Sprintf("%0*d", otlp.MaxTenantNameLength, i)
		r.get(name, false).take(qf, now, 0, 1)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if len(r.states) != MaxTenantStates || r.unknown != MaxTenantStates {
		t.Fatalf("%d states, %d unknown; want %d", len(r.states), r.unknown, MaxTenantStates)
	}
	if heap > 8<<20 {
		t.Fatalf("the tenant table holds %d bytes", heap)
	}
	t.Logf("%d invented names of %d bytes: %d states, %d bytes of heap", 2*MaxTenantStates, otlp.MaxTenantNameLength, len(r.states), heap)
	if ts := r.get("vip", true); ts == r.overflow {
		t.Fatal("a known tenant was given the overflow state")
	}
	runtime.KeepAlive(r)
}
