// Command sidebyside runs the side-by-side server benchmark (issue 6): the
// otlp-lite receiver and the baseline receiver (the Collector's grpc-go +
// pdata decode path, ../baseline) each run as their own process pinned to
// one core, receive the same pre-encoded requests from benchload pinned to
// another core, and are charged the CPU time the kernel accounted to them.
//
//	cd bench && go run ./cmd/sidebyside -rounds 3
//
// Servers alternate A B A B... so that drifts of a shared machine hit both.
// For each round and server it measures
//
//   - CPU: utime+stime of the server process from /proc/PID/stat, read
//     before and after the measured load (after a warm-up), divided by the
//     items sent, in µs per item;
//   - RSS: the server's peak resident set (VmHWM of /proc/PID/status) at
//     the end of the round;
//
// and prints a table with each round's ratio of otlp-lite to the baseline.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat;
// it is 100 on every Linux architecture Go supports (proc(5)).
const clockTicks = 100

type config struct {
	rounds      int
	signal      string
	items       int
	attrs       int
	requests    int
	warmup      int
	concurrency int
	serverCPU   string
	clientCPU   string
	port        int
}

type server struct {
	name string
	args func(addr string) []string
}

type sample struct {
	cpuSeconds float64
	items      int64
	rssKiB     int64
	throughput string
}

func (s sample) usPerItem() float64 { return s.cpuSeconds * 1e6 / float64(s.items) }

func main() {
	var cfg config
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds; each runs every server once")
	flag.StringVar(&cfg.signal, "signal", "traces", "traces, metrics or logs")
	flag.IntVar(&cfg.items, "items", 500, "spans, data points or log records per request")
	flag.IntVar(&cfg.attrs, "attrs", 10, "attributes per span or log record")
	flag.IntVar(&cfg.requests, "requests", 2000, "measured requests per round and server")
	flag.IntVar(&cfg.warmup, "warmup", 200, "warm-up requests before the measurement")
	flag.IntVar(&cfg.concurrency, "concurrency", 4, "requests in flight")
	flag.StringVar(&cfg.serverCPU, "server-cpu", "1", "taskset CPU list of the servers")
	flag.StringVar(&cfg.clientCPU, "client-cpu", "0", "taskset CPU list of the load client")
	flag.IntVar(&cfg.port, "port", 0, "port the servers listen on, on 127.0.0.1; 0 picks a free one for each run")
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "sidebyside: %s\n", err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	dir, err := os.MkdirTemp("", "sidebyside")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := func(name string) string { return filepath.Join(dir, name) }

	// Both servers are built the same way (no race detector, default
	// flags, same toolchain). otlp-lite is built in its own module (found
	// through this module's replace directive) so that it links the
	// dependency versions it ships with.
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/otlp-lite/otlp-lite").Output()
	if err != nil {
		return fmt.Errorf("cannot locate the otlp-lite module: %w", err)
	}
	builds := []struct{ name, dir, pkg string }{
		{"otlp-lite", strings.TrimSpace(string(root)), "./cmd/otlp-lite"},
		{"baseline", "", "github.com/otlp-lite/otlp-lite/bench/cmd/baseline"},
		{"benchload", "", "github.com/otlp-lite/otlp-lite/bench/cmd/benchload"},
	}
	for _, b := range builds {
		cmd := exec.Command("go", "build", "-o", bin(b.name), b.pkg)
		cmd.Dir = b.dir
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("cannot build %s: %w", b.pkg, err)
		}
	}

	servers := []server{
		{"baseline", func(addr string) []string { return []string{bin("baseline"), "-grpc-addr", addr} }},
		{"otlp-lite", func(addr string) []string {
			return []string{bin("otlp-lite"), "serve", "-grpc-addr", addr, "-http-addr", "", "-admin-addr", "", "-storage", "discard", "-log-level", "warn"}
		}},
	}
	results := make(map[string][]sample)
	for round := range cfg.rounds {
		for _, srv := range servers {
			s, err := measure(cfg, srv, bin("benchload"))
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", round+1, srv.name, err)
			}
			fmt.Fprintf(os.Stderr, "round %d %-9s %7.2f µs/item CPU, RSS %6.1f MiB, %s\n",
				round+1, srv.name, s.usPerItem(), float64(s.rssKiB)/1024, s.throughput)
			results[srv.name] = append(results[srv.name], s)
		}
	}
	printTable(cfg, servers, results)
	return nil
}

// measure starts srv pinned to cfg.serverCPU, warms it up, loads it with
// cfg.requests requests and returns its CPU and RSS.
func measure(cfg config, srv server, benchload string) (sample, error) {
	port := cfg.port
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return sample{}, err
		}
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command("taskset", append([]string{"-c", cfg.serverCPU}, srv.args(addr)...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	// taskset execs the server, so the PID is the server's.
	pid := cmd.Process.Pid
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
	if err := waitListening(addr, exited, 10*time.Second); err != nil {
		return sample{}, fmt.Errorf("%w; server stderr: %s", err, stderr.String())
	}

	load := func(requests int) (string, error) {
		c := exec.Command("taskset", "-c", cfg.clientCPU, benchload,
			"-addr", addr, "-signal", cfg.signal, "-items", strconv.Itoa(cfg.items),
			"-attrs", strconv.Itoa(cfg.attrs), "-requests", strconv.Itoa(requests),
			"-concurrency", strconv.Itoa(cfg.concurrency))
		out, err := c.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("benchload: %w: %s; server stderr: %s", err, out, stderr.String())
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := load(cfg.warmup); err != nil {
		return sample{}, err
	}
	before, err := cpuSeconds(pid)
	if err != nil {
		return sample{}, err
	}
	out, err := load(cfg.requests)
	if err != nil {
		return sample{}, err
	}
	after, err := cpuSeconds(pid)
	if err != nil {
		return sample{}, err
	}
	rss, err := peakRSS(pid)
	if err != nil {
		return sample{}, err
	}
	items, err := itemsOf(out)
	if err != nil {
		return sample{}, err
	}
	return sample{cpuSeconds: after - before, items: items, rssKiB: rss, throughput: throughputOf(out)}, nil
}

// waitListening waits until addr accepts connections, failing early if
// the server exits (e.g. because another process holds the port, which
// would otherwise be measured in its place).
func waitListening(addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("server exited before listening")
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			return c.Close()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("server did not listen on %s within %s", addr, timeout)
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// cpuSeconds returns utime+stime of pid in seconds.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := parseStatCPU(b)
	if err != nil {
		return 0, err
	}
	return float64(ticks) / clockTicks, nil
}

// parseStatCPU returns utime+stime, in clock ticks, of a /proc/PID/stat
// line (fields 14 and 15, proc(5)).
func parseStatCPU(b []byte) (int64, error) {
	// comm (field 2) is in parentheses and may hold spaces and
	// parentheses: split after its last closing parenthesis, where field 3
	// starts.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("cannot parse /proc/PID/stat: no comm field")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("cannot parse /proc/PID/stat: %d fields after comm, want at least 13", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || utime < 0 || stime < 0 || utime > math.MaxInt64-stime {
		return 0, fmt.Errorf("cannot parse utime/stime of /proc/PID/stat: %q %q", f[11], f[12])
	}
	return utime + stime, nil
}

// peakRSS returns VmHWM of /proc/PID/status in KiB.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseVmHWM(b)
}

// parseVmHWM returns the VmHWM line of a /proc/PID/status file in KiB. A
// zombie's status has no VmHWM: the server must still be running.
func parseVmHWM(b []byte) (int64, error) {
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			v = strings.TrimSuffix(strings.TrimSpace(v), " kB")
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("cannot parse VmHWM %q", v)
			}
			return n, nil
		}
	}
	return 0, errors.New("no VmHWM in /proc/PID/status (has the server exited?)")
}

func itemsOf(out string) (int64, error) {
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "items="); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no items= in benchload output %q", out)
}

func throughputOf(out string) string {
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "items_per_second="); ok {
			return v + " items/s"
		}
	}
	return ""
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printTable prints, in Markdown, every round's CPU per item and peak RSS,
// with the ratio of each server to the first (the baseline), and the
// medians.
func printTable(cfg config, servers []server, results map[string][]sample) {
	fmt.Printf("signal=%s items/request=%d attrs=%d requests/round=%d concurrency=%d server CPU %s, client CPU %s\n\n",
		cfg.signal, cfg.items, cfg.attrs, cfg.requests, cfg.concurrency, cfg.serverCPU, cfg.clientCPU)
	fmt.Println("| round | server | CPU µs/item | CPU ratio | peak RSS MiB | RSS ratio | client items/s |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|")
	base := results[servers[0].name]
	cpu := make(map[string][]float64)
	rss := make(map[string][]float64)
	cpuRatio := make(map[string][]float64)
	rssRatio := make(map[string][]float64)
	for round := range cfg.rounds {
		for _, srv := range servers {
			s := results[srv.name][round]
			cr := s.usPerItem() / base[round].usPerItem()
			rr := float64(s.rssKiB) / float64(base[round].rssKiB)
			cpu[srv.name] = append(cpu[srv.name], s.usPerItem())
			rss[srv.name] = append(rss[srv.name], float64(s.rssKiB)/1024)
			cpuRatio[srv.name] = append(cpuRatio[srv.name], cr)
			rssRatio[srv.name] = append(rssRatio[srv.name], rr)
			fmt.Printf("| %d | %s | %.3f | %.3f | %.1f | %.3f | %s |\n",
				round+1, srv.name, s.usPerItem(), cr, float64(s.rssKiB)/1024, rr, strings.TrimSuffix(s.throughput, " items/s"))
		}
	}
	for _, srv := range servers {
		fmt.Printf("| median | %s | %.3f | %.3f | %.1f | %.3f | |\n",
			srv.name, median(cpu[srv.name]), median(cpuRatio[srv.name]), median(rss[srv.name]), median(rssRatio[srv.name]))
	}
}
