// Command fairness measures issue 13's fairness claim: "one tenant flooding
// at 10x its quota leaves another tenant's throughput and latency within
// 10 % of what it gets alone". It is a measurement, not a test: the
// machine it runs on decides the figures, so it reports every round, the
// medians and the spread.
//
//	cd bench && go run ./cmd/fairness                 # 5 rounds of 3 phases of 5 s
//	cd bench && go run ./cmd/fairness -quota bytes    # the flooder limited by a byte quota
//
// It builds otlp-lite (as cmd/sidebyside does) and, each round, starts it
// pinned to -server-cpu with tenancy on (-tenant-header X-Scope-OrgID) and
// a quota file: team-flood gets -flood-quota spans/s (and the matching
// bytes/s with -quota bytes or both) and a quarter of the admission
// budget; every other tenant is unlimited. The load runs in this process,
// pinned to -client-cpu, over OTLP/gRPC (grpc-go, pre-encoded requests of
// -items spans of -attrs attributes), in three phases of -seconds each:
//
//   - alone: team-b sends at -calm-rate spans/s, open loop (each request
//     leaves on schedule whatever the previous one's fate), the latency of
//     each counted from its scheduled start so that a stall is not hidden
//     by the requests it delays;
//   - beside 1x: the same, while team-flood sends at exactly its quota:
//     what the flooder's legitimate load costs team-b;
//   - beside 10x: the same, while team-flood offers -flood-factor times
//     its quota, open loop, not retrying its refusals (the worst case for
//     the receiver: every refused request is new work).
//
// For each phase it prints team-b's stored spans per second, p50 and p99
// latency and refusals, and team-flood's accepted and throttled requests;
// then, over the rounds, the median and range of team-b's ratios beside
// the flood to alone, and beside the 10x flood to beside the 1x one: the
// flooder's accepted load is legitimate work on the server's core, so that
// last ratio is the cost of the excess alone.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/otlp-lite/otlp-lite/bench"
	"github.com/otlp-lite/otlp-lite/bench/internal/benchnet"
)

type config struct {
	rounds      int
	seconds     float64
	items       int
	attrs       int
	calmRate    float64
	floodQuota  float64
	floodFactor float64
	quota       string
	serverCPU   string
	clientCPU   string
	maxInFlight int
}

func main() {
	var cfg config
	flag.IntVar(&cfg.rounds, "rounds", 5, "rounds; each starts a fresh server and runs the three phases")
	flag.Float64Var(&cfg.seconds, "seconds", 5, "length of each phase")
	flag.IntVar(&cfg.items, "items", 500, "spans per request")
	flag.IntVar(&cfg.attrs, "attrs", 10, "attributes per span")
	flag.Float64Var(&cfg.calmRate, "calm-rate", 10000, "spans/s team-b sends (within its quota: it has none)")
	flag.Float64Var(&cfg.floodQuota, "flood-quota", 20000, "team-flood's quota in spans/s (its burst: one second of it)")
	flag.Float64Var(&cfg.floodFactor, "flood-factor", 10, "team-flood offers this many times its quota in the last phase")
	flag.StringVar(&cfg.quota, "quota", "items", "what limits team-flood: items (items_per_second: known only once a request is decoded), bytes (bytes_per_second of the same rate: checked before decoding) or both")
	flag.StringVar(&cfg.serverCPU, "server-cpu", "1", "taskset CPU list of the server")
	flag.StringVar(&cfg.clientCPU, "client-cpu", "0", "taskset CPU list of this process (the load); empty: not pinned")
	flag.IntVar(&cfg.maxInFlight, "max-in-flight", 64, "requests in flight per tenant at most; a request due while that many are out is counted as missed")
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "fairness: %s\n", err)
		os.Exit(1)
	}
}

// phase is one phase's outcome for one tenant.
type phase struct {
	sent, ok, refused, missed int64
	codes                     map[codes.Code]int64
	latencies                 []time.Duration
	seconds                   float64
	items                     int
}

func (p *phase) spansPerSecond() float64 { return float64(p.ok) * float64(p.items) / p.seconds }

func (p *phase) quantile(q float64) time.Duration {
	if len(p.latencies) == 0 {
		return 0
	}
	s := slices.Clone(p.latencies)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

func run(cfg config) error {
	if cfg.rounds < 1 || cfg.seconds <= 0 || cfg.items < 1 || cfg.calmRate <= 0 || cfg.floodQuota <= 0 || cfg.floodFactor <= 0 {
		return errors.New("-rounds, -seconds, -items, -calm-rate, -flood-quota and -flood-factor must be positive")
	}
	if cfg.clientCPU != "" {
		// Pin this process (every thread: taskset -a) before the load
		// starts, away from the server's core.
		if out, err := exec.Command("taskset", "-a", "-p", "-c", cfg.clientCPU, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
			return fmt.Errorf("cannot pin the load to CPU %s: %w: %s", cfg.clientCPU, err, out)
		}
	}
	body := bench.TracesBytes(cfg.items, cfg.attrs)
	var quotaLine string
	switch cfg.quota {
	case "items":
		quotaLine = fmt.Sprintf("items_per_second=%.0f", cfg.floodQuota)
	case "bytes":
		quotaLine = fmt.Sprintf("bytes_per_second=%.0fB", cfg.floodQuota/float64(cfg.items)*float64(len(body)))
	case "both":
		quotaLine = fmt.Sprintf("items_per_second=%.0f bytes_per_second=%.0fB", cfg.floodQuota, cfg.floodQuota/float64(cfg.items)*float64(len(body)))
	default:
		return fmt.Errorf("unknown -quota %q: want items, bytes or both", cfg.quota)
	}
	dir, err := os.MkdirTemp("", "fairness")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	quotaFile := filepath.Join(dir, "quota")
	if err := os.WriteFile(quotaFile, []byte("team-flood "+quotaLine+" max_budget_share=0.25\n* bytes_per_second=0\n"), 0o644); err != nil {
		return err
	}
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/otlp-lite/otlp-lite").Output()
	if err != nil {
		return fmt.Errorf("cannot locate the otlp-lite module: %w", err)
	}
	bin := filepath.Join(dir, "otlp-lite")
	build := exec.Command("go", "build", "-o", bin, "./cmd/otlp-lite")
	build.Dir = strings.TrimSpace(string(root))
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("cannot build otlp-lite: %w", err)
	}
	if rev, err := exec.Command("git", "-C", strings.TrimSpace(string(root)), "describe", "--always", "--dirty").Output(); err == nil {
		fmt.Printf("otlp-lite at %s, %s\n", strings.TrimSpace(string(rev)), time.Now().UTC().Format(time.RFC3339))
	}
	fmt.Printf("requests of %d spans × %d attributes (%d bytes); team-b at %.0f spans/s; team-flood quota %s (%.0f spans/s), offered 1x then %gx; phases of %gs; server CPU %s, load CPU %s\n\n",
		cfg.items, cfg.attrs, len(body), cfg.calmRate, quotaLine, cfg.floodQuota, cfg.floodFactor, cfg.seconds, cfg.serverCPU, cfg.clientCPU)
	fmt.Println("| round | phase | team-b spans/s | p50 ms | p99 ms | team-b refused | team-flood accepted / throttled requests |")
	fmt.Println("|---|---|---:|---:|---:|---:|---|")
	names := []string{"alone", "beside 1x", fmt.Sprintf("beside %gx", cfg.floodFactor)}
	// ratios[1] and [2]: beside 1x and 10x ÷ alone; ratios[0]: beside
	// 10x ÷ beside 1x, the cost of the flood's excess alone (the
	// flooder's accepted load is legitimate work on the same core).
	var ratios [3][3][]float64
	for round := 1; round <= cfg.rounds; round++ {
		phases, err := runRound(cfg, bin, quotaFile, body)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		alone := phases[0][0]
		for i, ph := range phases {
			b, f := ph[0], ph[1]
			fl := "-"
			if f != nil {
				fl = fmt.Sprintf("%d / %d (of %d sent)", f.ok, f.codes[codes.Unavailable], f.sent)
				if other := f.refused - f.codes[codes.Unavailable]; other > 0 {
					fl += fmt.Sprintf(", %d other refusals %v", other, f.codes)
				}
			}
			fmt.Printf("| %d | %s | %.0f | %.2f | %.2f | %d%s | %s |\n", round, names[i], b.spansPerSecond(),
				ms(b.quantile(0.5)), ms(b.quantile(0.99)), b.refused, missed(b), fl)
			if i > 0 {
				ratios[i][0] = append(ratios[i][0], b.spansPerSecond()/alone.spansPerSecond())
				ratios[i][1] = append(ratios[i][1], float64(b.quantile(0.5))/float64(alone.quantile(0.5)))
				ratios[i][2] = append(ratios[i][2], float64(b.quantile(0.99))/float64(alone.quantile(0.99)))
			}
		}
		one, ten := phases[1][0], phases[2][0]
		ratios[0][0] = append(ratios[0][0], ten.spansPerSecond()/one.spansPerSecond())
		ratios[0][1] = append(ratios[0][1], float64(ten.quantile(0.5))/float64(one.quantile(0.5)))
		ratios[0][2] = append(ratios[0][2], float64(ten.quantile(0.99))/float64(one.quantile(0.99)))
	}
	fmt.Printf("\nteam-b's ratios, median of the %d rounds [min – max]\n\n", cfg.rounds)
	fmt.Println("| ratio | throughput | p50 latency | p99 latency |")
	fmt.Println("|---|---:|---:|---:|")
	for i := 1; i < 3; i++ {
		fmt.Printf("| %s ÷ alone | %s | %s | %s |\n", names[i], spread(ratios[i][0]), spread(ratios[i][1]), spread(ratios[i][2]))
	}
	fmt.Printf("| %s ÷ %s | %s | %s | %s |\n", names[2], names[1], spread(ratios[0][0]), spread(ratios[0][1]), spread(ratios[0][2]))
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func missed(p *phase) string {
	if p.missed == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d not sent: -max-in-flight out)", p.missed)
}

func spread(xs []float64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("**%.3f** [%.3f – %.3f]", med, s[0], s[len(s)-1])
}

// runRound starts a server and runs the three phases; it returns, per
// phase, team-b's and team-flood's outcome (nil when it did not send).
func runRound(cfg config, bin, quotaFile string, body []byte) ([3][2]*phase, error) {
	var out [3][2]*phase
	port, err := benchnet.FreePort()
	if err != nil {
		return out, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command("taskset", "-c", cfg.serverCPU, bin, "serve", "-grpc-addr", addr, "-http-addr", "", "-admin-addr", "",
		"-storage", "discard", "-log-level", "error", "-tenant-header", "X-Scope-OrgID", "-tenant-quota-file", quotaFile)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return out, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	if err := benchnet.WaitListening(addr, exited, 10*time.Second); err != nil {
		return out, fmt.Errorf("%w; server stderr: %s", err, stderr.String())
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(benchnet.RawCodec{})))
	if err != nil {
		return out, err
	}
	defer cc.Close()
	// Each tenant on its own connection, as separate clients would be.
	ccFlood, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(benchnet.RawCodec{})))
	if err != nil {
		return out, err
	}
	defer ccFlood.Close()
	// Warm up both connections and the server (one request each, then a
	// second of team-b's load).
	if _, err := openLoop(cc, "team-b", body, cfg.items, cfg.calmRate, time.Second, cfg.maxInFlight); err != nil {
		return out, err
	}
	d := time.Duration(cfg.seconds * float64(time.Second))
	for i, factor := range []float64{0, 1, cfg.floodFactor} {
		var wg sync.WaitGroup
		var calm, flood *phase
		var calmErr, floodErr error
		if factor > 0 {
			wg.Go(func() {
				flood, floodErr = openLoop(ccFlood, "team-flood", body, cfg.items, factor*cfg.floodQuota, d, cfg.maxInFlight*int(max(1, factor)))
			})
		}
		calm, calmErr = openLoop(cc, "team-b", body, cfg.items, cfg.calmRate, d, cfg.maxInFlight)
		wg.Wait()
		if err := errors.Join(calmErr, floodErr); err != nil {
			return out, err
		}
		out[i] = [2]*phase{calm, flood}
		// Let the flooder's bucket refill before the next phase, so
		// that each phase starts as the first did.
		time.Sleep(time.Second) // pacing between phases, not synchronisation
	}
	return out, nil
}

// openLoop sends body as tenant at rate spans/s for d: a request every
// items/rate seconds, on schedule whatever the fate of the others, at
// most maxInFlight at once. Refusals are counted, not retried. The
// latency of a success is counted from the request's scheduled start.
func openLoop(cc *grpc.ClientConn, tenant string, body []byte, items int, rate float64, d time.Duration, maxInFlight int) (*phase, error) {
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-scope-orgid", tenant)
	interval := time.Duration(float64(items) / rate * float64(time.Second))
	p := &phase{codes: map[codes.Code]int64{}, items: items}
	var mu sync.Mutex
	var inFlight atomic.Int64
	var wg sync.WaitGroup
	var fatal atomic.Pointer[error]
	start := time.Now()
	n := int(d / interval)
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		if w := time.Until(due); w > 0 {
			time.Sleep(w) // the schedule of an open-loop load
		}
		if inFlight.Load() >= int64(maxInFlight) {
			p.missed++
			continue
		}
		inFlight.Add(1)
		p.sent++
		wg.Go(func() {
			defer inFlight.Add(-1)
			src := body
			var resp []byte
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			err := cc.Invoke(cctx, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", &src, &resp)
			took := time.Since(due)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				p.ok++
				p.latencies = append(p.latencies, took)
				return
			}
			c := status.Code(err)
			p.refused++
			p.codes[c]++
			if c != codes.Unavailable && c != codes.ResourceExhausted {
				e := fmt.Errorf("%s: %w", tenant, err)
				fatal.CompareAndSwap(nil, &e)
			}
		})
	}
	wg.Wait()
	p.seconds = time.Since(start).Seconds()
	if e := fatal.Load(); e != nil {
		return nil, *e
	}
	return p, nil
}
