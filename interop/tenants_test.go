package interop

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// attemptLog records every Export attempt a tenant's exporter makes: its
// outcome, the RetryInfo delay of a refusal, and the latency of successes.
type attemptLog struct {
	mu        sync.Mutex
	ok        int
	refusals  map[codes.Code]int
	delays    []time.Duration
	latencies []time.Duration
	noDelay   int // refusals without RetryInfo
}

func (l *attemptLog) interceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		took := time.Since(start)
		l.mu.Lock()
		defer l.mu.Unlock()
		if err == nil {
			l.ok++
			l.latencies = append(l.latencies, took)
			return nil
		}
		st := status.Convert(err)
		l.refusals[st.Code()]++
		found := false
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				l.delays = append(l.delays, ri.GetRetryDelay().AsDuration())
				found = true
			}
		}
		if !found {
			l.noDelay++
		}
		return err
	}
}

func (l *attemptLog) quantile(q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.latencies) == 0 {
		return 0
	}
	s := slices.Clone(l.latencies)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// tenantSpans returns n spans whose span ids encode the tenant index and
// the span's sequence number, so the store can be checked span by span.
func tenantSpans(tenant, from, n int) []sdktrace.ReadOnlySpan {
	stubs := make(tracetest.SpanStubs, n)
	now := time.Now()
	for i := range stubs {
		var tid trace.TraceID
		var sid trace.SpanID
		tid[0], tid[15] = 0x7e, byte(tenant)
		binary.BigEndian.PutUint32(sid[:4], uint32(tenant+1))
		binary.BigEndian.PutUint32(sid[4:], uint32(from+i))
		stubs[i] = tracetest.SpanStub{
			Name:        "tenant-span",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
			StartTime:   now,
			EndTime:     now.Add(time.Millisecond),
		}
	}
	return stubs.Snapshots()
}

// TestTenantsGoSDK: three tenants send with the OpenTelemetry Go SDK's gRPC
// exporter, naming themselves in X-Scope-OrgID. team-flood offers ten
// times its quota; team-b and team-c stay within theirs. The flooder is
// throttled with UNAVAILABLE and a RetryInfo no longer than its bucket
// needs to refill for one batch; honouring the delays (the SDK's retry),
// it eventually stores everything. The others see no refusal at all. The
// store holds every acknowledged span once, under its tenant, and nothing
// else. Latencies of the well-behaved tenants, alone and beside the flood,
// are logged (a measurement, not a timed assertion).
func TestTenantsGoSDK(t *testing.T) {
	const (
		floodRate  = 200 // items/s quota of team-flood
		batch      = 50
		floodSpans = 10 * floodRate // offered in about a second: ten times the quota
		calmSpans  = 400
	)
	quotas := filepath.Join(t.TempDir(), "quotas")
	if err := os.WriteFile(quotas, fmt.Appendf(nil,
		"team-flood items_per_second=%d burst_items=%d max_budget_share=0.2\n* items_per_second=2000 burst_items=2000\n", floodRate, floodRate), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	srv := startServer(t, dataDir, "-tenant-header", "X-Scope-OrgID", "-tenant-required", "-tenant-quota-file", quotas)

	tenants := []string{"team-flood", "team-b", "team-c"}
	logs := make([]*attemptLog, len(tenants))
	exporters := make([]sdktrace.SpanExporter, len(tenants))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for i, tenant := range tenants {
		logs[i] = &attemptLog{refusals: map[codes.Code]int{}}
		exp, err := otlptracegrpc.New(ctx,
			otlptracegrpc.WithEndpoint(srv.addr),
			otlptracegrpc.WithInsecure(),
			otlptracegrpc.WithHeaders(map[string]string{"X-Scope-OrgID": tenant}),
			otlptracegrpc.WithDialOption(grpc.WithUnaryInterceptor(logs[i].interceptor())),
			// The SDK retries UNAVAILABLE, waiting the RetryInfo delay
			// when the server sends one (at least its own backoff).
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 10 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: 2 * time.Minute}),
			otlptracegrpc.WithTimeout(2*time.Minute),
		)
		if err != nil {
			t.Fatal(err)
		}
		exporters[i] = exp
		defer exp.Shutdown(context.Background())
	}

	// calm sends calmSpans spans of tenant i in batches of 10 at about a
	// fifth of its quota.
	calm := func(i, from int) error {
		for n := 0; n < calmSpans; n += 10 {
			if err := exporters[i].ExportSpans(ctx, tenantSpans(i, from+n, 10)); err != nil {
				return fmt.Errorf("%s: %w", tenants[i], err)
			}
			time.Sleep(25 * time.Millisecond) // pacing the offered load, not synchronisation
		}
		return nil
	}
	// Solo: team-b alone, for its latency baseline.
	if err := calm(1, 0); err != nil {
		t.Fatal(err)
	}
	soloP50, soloP99 := logs[1].quantile(0.5), logs[1].quantile(0.99)
	logs[1].latencies = nil

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	floodStart := time.Now()
	for w := range 8 {
		wg.Go(func() {
			// Eight senders, each a share of the flood, at once.
			for from := w * batch; from < floodSpans; from += 8 * batch {
				if err := exporters[0].ExportSpans(ctx, tenantSpans(0, from, batch)); err != nil {
					errs <- fmt.Errorf("team-flood: %w", err)
					return
				}
			}
		})
	}
	for _, i := range []int{1, 2} {
		wg.Go(func() {
			from := 0
			if i == 1 {
				from = calmSpans
			}
			if err := calm(i, from); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	floodTook := time.Since(floodStart)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	srv.stop()

	// The flooder: throttled, each delay what one batch needs at most
	// (batch/rate, rounded up to the millisecond), never refused for good.
	fl := logs[0]
	maxDelay := time.Duration(batch) * time.Second / floodRate
	if fl.refusals[codes.Unavailable] == 0 {
		t.Errorf("team-flood was never throttled: %+v", fl.refusals)
	}
	for code, n := range fl.refusals {
		if code != codes.Unavailable {
			t.Errorf("team-flood got %d %v refusals; only UNAVAILABLE expected", n, code)
		}
	}
	if fl.noDelay > 0 {
		t.Errorf("%d refusals without RetryInfo", fl.noDelay)
	}
	for _, d := range fl.delays {
		if d <= 0 || d > maxDelay+time.Millisecond {
			t.Errorf("RetryInfo delay %v outside (0, %v]", d, maxDelay)
			break
		}
	}
	// Honouring the delays, the flood drains at the quota: not much
	// faster (the bucket starts full) and stores everything.
	if min := time.Duration(floodSpans-floodRate) * time.Second / floodRate; floodTook < min*9/10 {
		t.Errorf("the flood of %d spans was stored in %v, faster than its quota allows (%v)", floodSpans, floodTook, min)
	}
	for _, i := range []int{1, 2} {
		if len(logs[i].refusals) != 0 {
			t.Errorf("%s (within its quota) was refused: %v", tenants[i], logs[i].refusals)
		}
	}
	t.Logf("team-flood: %d accepted, %d throttled, delays up to %v; drained in %v", fl.ok, fl.refusals[codes.Unavailable], slices.Max(append(fl.delays, 0)), floodTook)
	t.Logf("team-b latency alone p50 %v p99 %v; beside the flood p50 %v p99 %v (team-c p50 %v p99 %v)",
		soloP50, soloP99, logs[1].quantile(0.5), logs[1].quantile(0.99), logs[2].quantile(0.5), logs[2].quantile(0.99))

	// The store: every span once, under its tenant.
	want := map[string]int{"team-flood": floodSpans, "team-b": 2 * calmSpans, "team-c": calmSpans}
	seen := map[[8]byte]string{}
	got := map[string]int{}
	err := disk.Scan(dataDir, storage.Traces, func(r disk.Record) error {
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(r.Data, &req); err != nil {
			return err
		}
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					id := [8]byte(sp.GetSpanId())
					tenant := tenants[binary.BigEndian.Uint32(id[:4])-1]
					if prev, dup := seen[id]; dup {
						return fmt.Errorf("span %x stored twice (%s, %s)", id, prev, r.Tenant)
					}
					if r.Tenant != tenant {
						return fmt.Errorf("span %x of %s stored under tenant %s", id, tenant, r.Tenant)
					}
					seen[id] = r.Tenant
					got[r.Tenant]++
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for tenant, n := range want {
		if got[tenant] != n {
			t.Errorf("%s: %d spans stored, %d acknowledged", tenant, got[tenant], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("tenants in the store: %v", got)
	}
}
