// Command sidebyside runs the side-by-side server benchmark (issue 6): the
// otlp-lite receiver and the baseline receiver (the Collector's grpc-go +
// pdata decode paths, ../baseline) each run as their own process pinned to
// one core, receive the same pre-encoded requests from benchload pinned to
// another core, and are charged the CPU time the kernel accounted to them.
//
//	cd bench && go run ./cmd/sidebyside                # the default matrix, a few minutes
//	cd bench && go run ./cmd/sidebyside -matrix full   # every cell of issue 6
//	cd bench && go run ./cmd/sidebyside -matrix one -concurrency 64 -requests 1000  # peak RSS, 64 in flight
//	cd bench && go run ./cmd/sidebyside -matrix one -protocol http-json -items 100 -attrs 4
//
// A cell is a signal and shape (traces 500×10 and 100×4, metrics, logs), a
// protocol (OTLP/gRPC unary, otlp-lite's gRPC stream, OTLP/HTTP protobuf or
// JSON) and a compression (none, gzip, zstd). In each cell, servers
// alternate A B A B… for -rounds rounds so that drifts of a shared machine
// hit both, and each round ends with the decode floor (benchload -floor,
// pinned to the servers' core). For each round and server it measures
//
//   - CPU: utime+stime of the server process from /proc/PID/stat, read
//     before and after the measured load (after a warm-up), divided by the
//     items sent, in µs per item;
//   - RSS: the server's peak resident set (VmHWM of /proc/PID/status) at
//     the end of the round, and that peak without the executable's
//     file-backed pages (VmHWM − RssFile; see memory);
//   - the floor: CPU µs per item of otlpdecode.Check* over the same
//     protobuf bytes in-process, and of decompression + JSON transcoding +
//     Check over the body as sent ("full floor");
//
// and prints, per cell, a table with each round's ratio of otlp-lite to the
// baseline and of otlp-lite to the floor, then a summary of all cells.
//
// The gRPC stream cell has no baseline of its own (the Collector has no
// streaming export): its baseline column is the baseline's unary gRPC on the
// same payload, i.e. what a user would replace. otlp-lite runs it with
// stream rotation off (-stream-max-requests -1 -stream-max-age -1s), since
// benchload does not resend after a rotation.
//
// With -profile-dir, after the rounds of each cell otlp-lite runs once more
// with -admin-pprof, and a CPU profile of the measured load is saved there
// (with the binary, for go tool pprof); that run is not in the tables.
//
// With -disk, otlp-lite also runs with its durable disk store (default
// flags: -storage-sync always) as a third server, "otlp-lite-disk", with its
// own summary rows, and its CPU per item is set against otlp-lite's
// (-storage discard) round by round: the cost of the durable write. With
// -otlplite-rev as well, the revision runs on its disk store too
// ("otlp-lite@REV-disk"), on the same filesystem. With -profile-dir, the
// disk variant is profiled too.
//
// With -tenancy, otlp-lite also runs with tenancy on ("otlp-lite-tenancy":
// -tenant-header X-Scope-OrgID and a quota file whose buckets never run
// dry, the load sending the header), and with -otlplite-rev REV, otlp-lite
// built at an earlier revision ("otlp-lite@REV"); after the summary, each
// such variant's CPU per item is set against otlp-lite's, round by round:
// issue 13's "the same CPU per span with tenancy off" (-otlplite-rev the
// commit before tenancy) and "at most +5 % with it on" (-tenancy).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/otlp-lite/otlp-lite/bench/internal/benchnet"
	"github.com/otlp-lite/otlp-lite/bench/internal/cputime"
	"github.com/otlp-lite/otlp-lite/bench/internal/dataset"
)

// tenantHeader is the tenant header of -tenancy: the one Tempo, Mimir and
// Loki use, otlp-lite's handler.DefaultTenantHeader.
const tenantHeader = "X-Scope-OrgID"

type config struct {
	matrix         string
	rounds         int
	scale          float64
	one            cell
	warmup         int
	concurrency    int
	floorSeconds   float64
	serverCPU      string
	clientCPU      string
	profileDir     string
	profileSeconds int
	image          bool
	static         bool
	disk           bool
	tenancy        bool
	rev            string
	datasets       string
}

// cell is one configuration measured on both servers.
type cell struct {
	signal      string
	items       int
	attrs       int
	protocol    string // grpc, grpc-stream, http-proto, http-json
	compression string // none, gzip, zstd
	requests    int    // measured requests per round and server
	// dataset, when set, names the real data sent instead of the
	// synthetic shape (a key of dataset.Files): the file cut into
	// requests of about items items, sent in turn; attrs is unused.
	dataset string
}

func (c cell) String() string {
	shape := fmt.Sprintf("%dx%d", c.items, c.attrs)
	switch {
	case c.dataset != "":
		shape = fmt.Sprintf("demo/%d", c.items)
	case c.signal == "metrics":
		shape = fmt.Sprintf("%dpoints", c.items)
	}
	s := fmt.Sprintf("%s %s %s", c.signal, shape, c.protocol)
	if c.compression != "none" {
		s += " " + c.compression
	}
	return s
}

// matrices are the predefined sets of cells. Requests are sized so that a
// round takes a few seconds of server CPU on this kind of machine; -scale
// multiplies them.
var matrices = map[string][]cell{
	// default: what `make bench` runs, a few minutes on 2 cores: the
	// cells of the headline targets.
	"default": {
		{"traces", 500, 10, "grpc", "none", 2000, ""},
		{"traces", 500, 10, "grpc", "gzip", 600, ""},
		{"traces", 100, 4, "grpc", "none", 6000, ""},
	},
	// full: the matrix of issue 6.
	"full": {
		{"traces", 500, 10, "grpc", "none", 2000, ""},
		{"traces", 500, 10, "grpc", "gzip", 600, ""},
		{"traces", 500, 10, "grpc", "zstd", 1000, ""},
		{"traces", 500, 10, "grpc-stream", "none", 2000, ""},
		{"traces", 500, 10, "http-proto", "none", 2000, ""},
		{"traces", 500, 10, "http-json", "none", 500, ""},
		{"traces", 100, 4, "grpc", "none", 6000, ""},
		{"traces", 100, 4, "grpc", "gzip", 3000, ""},
		{"traces", 100, 4, "grpc", "zstd", 4000, ""},
		{"traces", 100, 4, "grpc-stream", "none", 6000, ""},
		{"traces", 100, 4, "http-proto", "none", 6000, ""},
		{"traces", 100, 4, "http-json", "none", 2000, ""},
		{"metrics", 510, 3, "grpc", "none", 2000, ""},
		{"metrics", 510, 3, "http-proto", "none", 2000, ""},
		{"logs", 500, 6, "grpc", "none", 2000, ""},
		{"logs", 500, 6, "http-proto", "none", 2000, ""},
	},
	// real: the demo data of ../shared/datasets (issue 26), cut as an
	// SDK's batch processor sends it (512 spans per export) and as a
	// Collector's batch processor does (8192), metrics about a thousand
	// points per request; see the README of the datasets.
	"real": realCells,
}

// inFlightCells, in the full matrix, run with their own number of requests
// in flight instead of -concurrency. Issue 26's "memory that follows the
// bytes in flight": 64 requests of 500x10 (about 240 KB each, 15 MB held at
// once), whose measure is the peak RSS against the baseline's.
var inFlightCells = []job{
	{cell{"traces", 500, 10, "grpc", "none", 1000, ""}, 64},
}

// job is a cell run with inFlight requests in flight (its own, or
// -concurrency when 0).
type job struct {
	cell
	inFlight int
}

var realCells = []cell{
	{"traces", 512, 0, "grpc", "none", 2000, "traces"},
	{"traces", 512, 0, "grpc", "gzip", 600, "traces"},
	{"traces", 512, 0, "http-proto", "none", 2000, "traces"},
	{"traces", 8192, 0, "grpc", "zstd", 150, "traces"},
	{"metrics", 1000, 0, "grpc", "none", 1000, "metrics"},
	{"metrics", 1000, 0, "http-proto", "gzip", 400, "metrics"},
}

// datasetArgs are benchload's flags for a cell that sends real data.
func datasetArgs(cfg config, c cell) []string {
	if c.dataset == "" {
		return nil
	}
	return []string{"-dataset", filepath.Join(cfg.datasets, dataset.Files[c.dataset])}
}

type server struct {
	name string
	// args returns the command line serving c on addr.
	args func(c cell, addr string, extra []string) ([]string, error)
	// loadProtocol is the protocol benchload uses against this server
	// for c (the baseline has no stream: it gets unary gRPC).
	loadProtocol func(c cell) string
	// loadArgs are extra benchload flags against this server (the
	// tenant header of otlp-lite-tenancy).
	loadArgs []string
}

type sample struct {
	cpuSeconds float64
	items      int64
	rssKiB     int64 // VmHWM: peak resident set
	anonKiB    int64 // VmHWM − RssFile: the peak without the executable's pages
	throughput string
}

func (s sample) usPerItem() float64 { return s.cpuSeconds * 1e6 / float64(s.items) }

// floor is one round's in-process decode floor, µs per item.
type floor struct{ check, full float64 }

// cellResult holds every round of one cell.
type cellResult struct {
	cell cell
	// inFlight is set when the cell ran with its own number of requests
	// in flight (inFlightCells): it is then part of the cell's name.
	inFlight int
	samples  map[string][]sample
	floors   []floor
}

func main() {
	var cfg config
	flag.StringVar(&cfg.matrix, "matrix", "default", "cells to run: default (make bench), full (issue 6's matrix, the real data's and 64 requests in flight), real (the real data's: ../shared/datasets), or one (the cell of -signal, -items, -attrs, -protocol, -compression, -requests)")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds per cell; each runs every server once, then the floor")
	flag.Float64Var(&cfg.scale, "scale", 1, "multiplies the requests per round of -matrix default or full")
	flag.StringVar(&cfg.one.signal, "signal", "traces", "with -matrix one: traces, metrics or logs")
	flag.StringVar(&cfg.one.dataset, "dataset", "", "with -matrix one: send real data instead (traces or metrics: ../shared/datasets, cut into requests of about -items items)")
	flag.StringVar(&cfg.datasets, "datasets", dataset.Dir(), "the datasets directory (../shared/datasets) of the cells that send real data")
	flag.IntVar(&cfg.one.items, "items", 500, "with -matrix one: spans, data points or log records per request")
	flag.IntVar(&cfg.one.attrs, "attrs", 10, "with -matrix one: attributes per span or log record")
	flag.StringVar(&cfg.one.protocol, "protocol", "grpc", "with -matrix one: grpc, grpc-stream, http-proto or http-json")
	flag.StringVar(&cfg.one.compression, "compression", "none", "with -matrix one: none, gzip or zstd")
	flag.IntVar(&cfg.one.requests, "requests", 2000, "with -matrix one: measured requests per round and server")
	flag.IntVar(&cfg.warmup, "warmup", 200, "warm-up requests before each measurement")
	flag.IntVar(&cfg.concurrency, "concurrency", 4, "requests in flight (for grpc-stream: unacknowledged requests)")
	flag.Float64Var(&cfg.floorSeconds, "floor-seconds", 1, "CPU seconds of each floor measurement (Check, then the full floor)")
	flag.StringVar(&cfg.serverCPU, "server-cpu", "1", "taskset CPU list of the servers and the floor")
	flag.StringVar(&cfg.clientCPU, "client-cpu", "0", "taskset CPU list of the load client")
	flag.StringVar(&cfg.profileDir, "profile-dir", "", "if set, profile otlp-lite in one extra run per cell and save the CPU profiles here")
	flag.IntVar(&cfg.profileSeconds, "profile-seconds", 10, "with -profile-dir: length of each profile; the extra run's load is made long enough")
	flag.BoolVar(&cfg.disk, "disk", false, "also run otlp-lite with -storage disk (its default -storage-sync always) as a third server, data in a fresh temporary directory per run")
	flag.BoolVar(&cfg.tenancy, "tenancy", false, "also run otlp-lite with tenancy on (-tenant-header "+tenantHeader+" and a quota file whose buckets never run dry) as \"otlp-lite-tenancy\", the load sending the header, and print its CPU per item against otlp-lite's (tenancy off) round by round")
	flag.StringVar(&cfg.rev, "otlplite-rev", "", "also build otlp-lite at this git revision of its repository (git archive, default build flags) and run it as \"otlp-lite@REV\", e.g. the commit before a feature, with its CPU per item against otlp-lite's round by round")
	flag.BoolVar(&cfg.image, "image", false, "build otlp-lite as the container image does (CGO_ENABLED=0, -trimpath, -tags nokafka,nopprof, -ldflags '-s -w') instead of a default go build")
	flag.BoolVar(&cfg.static, "static", false, "build both servers as they are shipped: otlp-lite as `make build` does (CGO_ENABLED=0, -trimpath, default tags) and the baseline with CGO_ENABLED=0, as the Collector's release builds are; a default go build links the C library where a C compiler is present (about 1.4 MiB of resident pages each)")
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "sidebyside: %s\n", err)
		os.Exit(1)
	}
}

func cellsOf(cfg config) ([]cell, error) {
	if cfg.matrix == "one" {
		if _, ok := dataset.Files[cfg.one.dataset]; cfg.one.dataset != "" && !ok {
			return nil, fmt.Errorf("unknown -dataset %q: want traces or metrics", cfg.one.dataset)
		}
		return []cell{cfg.one}, nil
	}
	cells, ok := matrices[cfg.matrix]
	if !ok {
		return nil, fmt.Errorf("unknown -matrix %q: want default, full, real or one", cfg.matrix)
	}
	if cfg.matrix == "full" {
		cells = append(cells[:len(cells):len(cells)], realCells...)
	}
	out := make([]cell, len(cells))
	for i, c := range cells {
		c.requests = max(1, int(float64(c.requests)*cfg.scale))
		out[i] = c
	}
	return out, nil
}

// name is the cell's name in the tables.
func (r cellResult) name() string {
	if r.inFlight > 0 {
		return fmt.Sprintf("%s %d in flight", r.cell, r.inFlight)
	}
	return r.cell.String()
}

func run(cfg config) error {
	cells, err := cellsOf(cfg)
	if err != nil {
		return err
	}
	jobs := make([]job, 0, len(cells)+len(inFlightCells))
	for _, c := range cells {
		jobs = append(jobs, job{cell: c})
	}
	if cfg.matrix == "full" {
		for _, j := range inFlightCells {
			j.requests = max(1, int(float64(j.requests)*cfg.scale))
			jobs = append(jobs, j)
		}
	}
	allCfg := cfg
	if cfg.rounds < 1 {
		return errors.New("-rounds must be at least 1")
	}
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
	builds := []struct {
		name, dir, pkg string
		flags          []string
	}{
		{"otlp-lite", strings.TrimSpace(string(root)), "./cmd/otlp-lite", nil},
		{"baseline", "", "github.com/otlp-lite/otlp-lite/bench/cmd/baseline", nil},
		{"benchload", "", "github.com/otlp-lite/otlp-lite/bench/cmd/benchload", nil},
	}
	if cfg.image {
		// Dockerfile and scripts/image/build.sh.
		builds[0].flags = []string{"-trimpath", "-buildvcs=false", "-tags", "nokafka nopprof", "-ldflags", "-s -w"}
	} else if cfg.static {
		// The Makefile's build target; the baseline as the Collector's
		// releases are built (CGO_ENABLED=0, below).
		builds[0].flags = []string{"-trimpath"}
		builds[1].flags = []string{"-trimpath"}
	}
	if cfg.rev != "" {
		// The revision's tree, unpacked beside the binaries, built as
		// the current otlp-lite is (same toolchain and flags).
		src := filepath.Join(dir, "src-"+cfg.rev)
		if err := os.MkdirAll(src, 0o755); err != nil {
			return err
		}
		archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", strings.TrimSpace(string(root)), cfg.rev, src)
		archive.Stderr = os.Stderr
		if err := archive.Run(); err != nil {
			return fmt.Errorf("cannot unpack otlp-lite at %s: %w", cfg.rev, err)
		}
		builds = append(builds, struct {
			name, dir, pkg string
			flags          []string
		}{"otlp-lite-rev", src, "./cmd/otlp-lite", builds[0].flags})
	}
	for _, b := range builds {
		cmd := exec.Command("go", append(append([]string{"build"}, b.flags...), "-o", bin(b.name), b.pkg)...)
		if b.flags != nil {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		cmd.Dir = b.dir
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("cannot build %s: %w", b.pkg, err)
		}
	}
	if rev, err := exec.Command("git", "-C", strings.TrimSpace(string(root)), "describe", "--always", "--dirty").Output(); err == nil {
		fmt.Printf("otlp-lite at %s, %s\n", strings.TrimSpace(string(rev)), time.Now().UTC().Format(time.RFC3339))
	}
	if cfg.profileDir != "" {
		if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
			return err
		}
		if err := copyFile(bin("otlp-lite"), filepath.Join(cfg.profileDir, "otlp-lite")); err != nil {
			return err
		}
	}

	servers := []server{
		{
			name: "baseline",
			args: func(c cell, addr string, _ []string) ([]string, error) {
				if strings.HasPrefix(c.protocol, "http") {
					return []string{bin("baseline"), "-grpc-addr", "", "-http-addr", addr}, nil
				}
				return []string{bin("baseline"), "-grpc-addr", addr}, nil
			},
			loadProtocol: func(c cell) string {
				if c.protocol == "grpc-stream" {
					return "grpc"
				}
				return c.protocol
			},
		},
		{
			name: "otlp-lite",
			args: func(c cell, addr string, extra []string) ([]string, error) {
				args := []string{bin("otlp-lite"), "serve", "-admin-addr", "", "-storage", "discard", "-log-level", "warn"}
				if strings.HasPrefix(c.protocol, "http") {
					// The OTLP/HTTP port, as a client configured
					// for http/protobuf would use; the gRPC
					// port goes unused.
					p, err := benchnet.FreePort()
					if err != nil {
						return nil, err
					}
					args = append(args, "-http-addr", addr, "-grpc-addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
				} else {
					args = append(args, "-grpc-addr", addr, "-http-addr", "")
				}
				if c.protocol == "grpc-stream" {
					args = append(args, "-stream-max-requests", "-1", "-stream-max-age", "-1s")
				}
				return append(args, extra...), nil
			},
			loadProtocol: func(c cell) string { return c.protocol },
		},
	}
	if cfg.disk {
		// A fresh data directory per run (the store locks it, and a
		// round writes ~0.5 GB); the previous run's is removed first.
		var dataDir string
		oursArgs := servers[1].args
		servers = append(servers, server{
			name: "otlp-lite-disk",
			args: func(c cell, addr string, extra []string) ([]string, error) {
				if dataDir != "" {
					if err := os.RemoveAll(dataDir); err != nil {
						return nil, err
					}
				}
				var err error
				if dataDir, err = os.MkdirTemp(dir, "data"); err != nil {
					return nil, err
				}
				return oursArgs(c, addr, append([]string{"-storage", "disk", "-data-dir", dataDir}, extra...))
			},
			loadProtocol: servers[1].loadProtocol,
		})
	}
	if cfg.tenancy {
		// A quota that exercises every step of tenancy (identity,
		// the tenant's state, both buckets, its share of the budget)
		// and never refuses: the cost measured is tenancy's, not
		// throttling's.
		quota := filepath.Join(dir, "quota")
		if err := os.WriteFile(quota, []byte("* bytes_per_second=1000GiB items_per_second=1000000M max_budget_share=0.9\n"), 0o644); err != nil {
			return err
		}
		oursArgs := servers[1].args
		servers = append(servers, server{
			name: "otlp-lite-tenancy",
			args: func(c cell, addr string, extra []string) ([]string, error) {
				return oursArgs(c, addr, append([]string{"-tenant-header", tenantHeader, "-tenant-quota-file", quota}, extra...))
			},
			loadProtocol: servers[1].loadProtocol,
			loadArgs:     []string{"-header", tenantHeader + ": bench-tenant"},
		})
	}
	if cfg.rev != "" {
		var revServers []server
		for _, base := range servers[1:] {
			if base.name != "otlp-lite" && base.name != "otlp-lite-disk" {
				continue
			}
			baseArgs := base.args
			revServers = append(revServers, server{
				name: strings.Replace(base.name, "otlp-lite", "otlp-lite@"+cfg.rev, 1),
				args: func(c cell, addr string, extra []string) ([]string, error) {
					args, err := baseArgs(c, addr, extra)
					if err != nil {
						return nil, err
					}
					args[0] = bin("otlp-lite-rev")
					return args, nil
				},
				loadProtocol: base.loadProtocol,
			})
		}
		servers = append(servers, revServers...)
	}
	var results []cellResult
	for _, j := range jobs {
		c, cfg := j.cell, allCfg
		if j.inFlight > 0 {
			cfg.concurrency = j.inFlight
		}
		r := cellResult{cell: c, inFlight: j.inFlight, samples: make(map[string][]sample)}
		fmt.Fprintf(os.Stderr, "cell %s: %d requests per round\n", r.name(), c.requests)
		for round := range cfg.rounds {
			for _, srv := range servers {
				s, err := measure(cfg, c, srv, bin("benchload"), "")
				if err != nil {
					return fmt.Errorf("%s, round %d, %s: %w", c, round+1, srv.name, err)
				}
				fmt.Fprintf(os.Stderr, "  round %d %-9s %7.3f µs/item CPU, RSS %6.1f MiB, %s\n",
					round+1, srv.name, s.usPerItem(), float64(s.rssKiB)/1024, s.throughput)
				r.samples[srv.name] = append(r.samples[srv.name], s)
			}
			f, err := measureFloor(cfg, c, bin("benchload"))
			if err != nil {
				return fmt.Errorf("%s, round %d, floor: %w", c, round+1, err)
			}
			fmt.Fprintf(os.Stderr, "  round %d floor     %7.3f µs/item Check, %.3f full\n", round+1, f.check, f.full)
			r.floors = append(r.floors, f)
		}
		printCell(cfg, r, servers)
		results = append(results, r)
		if cfg.profileDir != "" {
			for _, srv := range servers[1:] {
				if srv.name != "otlp-lite" && srv.name != "otlp-lite-disk" {
					continue
				}
				suffix := strings.TrimPrefix(srv.name, "otlp-lite")
				file := filepath.Join(cfg.profileDir, strings.NewReplacer(" ", "_", "/", "-").Replace(c.String())+suffix+".cpu.pprof")
				if _, err := measure(cfg, c, srv, bin("benchload"), file); err != nil {
					return fmt.Errorf("%s, profile run: %w", c, err)
				}
				fmt.Fprintf(os.Stderr, "  profile: %s\n", file)
			}
		}
	}
	printSummary(allCfg, results, servers)
	return nil
}

// measure starts srv for c pinned to cfg.serverCPU, warms it up, loads it
// with c.requests requests and returns its CPU and RSS. With a profile file
// it also serves pprof on an admin port and saves a CPU profile of the
// load there, making the load last at least cfg.profileSeconds.
func measure(cfg config, c cell, srv server, benchload, profile string) (sample, error) {
	port, err := benchnet.FreePort()
	if err != nil {
		return sample{}, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var extra []string
	var adminAddr string
	if profile != "" {
		p, err := benchnet.FreePort()
		if err != nil {
			return sample{}, err
		}
		adminAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		extra = []string{"-admin-addr", adminAddr, "-admin-pprof"}
	}
	args, err := srv.args(c, addr, extra)
	if err != nil {
		return sample{}, err
	}
	cmd := exec.Command("taskset", append([]string{"-c", cfg.serverCPU}, args...)...)
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
	if err := benchnet.WaitListening(addr, exited, 10*time.Second); err != nil {
		return sample{}, fmt.Errorf("%w; server stderr: %s", err, stderr.String())
	}

	load := func(requests int) (string, error) {
		l := exec.Command("taskset", "-c", cfg.clientCPU, benchload,
			"-addr", addr, "-protocol", srv.loadProtocol(c), "-compression", c.compression,
			"-signal", c.signal, "-items", strconv.Itoa(c.items),
			"-attrs", strconv.Itoa(c.attrs), "-requests", strconv.Itoa(requests),
			"-concurrency", strconv.Itoa(cfg.concurrency))
		l.Args = append(l.Args, datasetArgs(cfg, c)...)
		l.Args = append(l.Args, srv.loadArgs...)
		out, err := l.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("benchload: %w: %s; server stderr: %s", err, out, stderr.String())
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := load(cfg.warmup); err != nil {
		return sample{}, err
	}
	requests := c.requests
	var profErr chan error
	if profile != "" {
		// Enough requests to cover the profile: the warm-up's rate
		// is unknown here, so send many; the load is cut short by
		// nothing, so keep -profile-seconds modest.
		requests = c.requests * 3
		profErr = make(chan error, 1)
		go func() { profErr <- fetchProfile(adminAddr, cfg.profileSeconds, profile) }()
	}
	before, err := cputime.ProcessSeconds(pid)
	if err != nil {
		return sample{}, err
	}
	out, err := load(requests)
	if err != nil {
		return sample{}, err
	}
	after, err := cputime.ProcessSeconds(pid)
	if err != nil {
		return sample{}, err
	}
	rss, anon, err := memory(pid)
	if err != nil {
		return sample{}, err
	}
	items, err := itemsOf(out)
	if err != nil {
		return sample{}, err
	}
	if profErr != nil {
		if err := <-profErr; err != nil {
			return sample{}, err
		}
	}
	return sample{cpuSeconds: after - before, items: items, rssKiB: rss, anonKiB: anon, throughput: throughputOf(out)}, nil
}

// fetchProfile saves a CPU profile of seconds from otlp-lite's admin pprof
// endpoint to file.
func fetchProfile(adminAddr string, seconds int, file string) error {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", adminAddr, seconds))
	if err != nil {
		return fmt.Errorf("cannot profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("cannot profile: %s", resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// measureFloor runs benchload -floor for c pinned to the servers' core.
func measureFloor(cfg config, c cell, benchload string) (floor, error) {
	args := []string{"-c", cfg.serverCPU, benchload, "-floor",
		"-floor-seconds", strconv.FormatFloat(cfg.floorSeconds, 'f', -1, 64),
		"-protocol", c.protocol, "-compression", c.compression,
		"-signal", c.signal, "-items", strconv.Itoa(c.items), "-attrs", strconv.Itoa(c.attrs)}
	out, err := exec.Command("taskset", append(args, datasetArgs(cfg, c)...)...).CombinedOutput()
	if err != nil {
		return floor{}, fmt.Errorf("benchload -floor: %w: %s", err, out)
	}
	var f floor
	var okCheck, okFull bool
	for _, field := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(field, "floor_check_us_per_item="); ok {
			f.check, err = strconv.ParseFloat(v, 64)
			okCheck = err == nil
		}
		if v, ok := strings.CutPrefix(field, "floor_full_us_per_item="); ok {
			f.full, err = strconv.ParseFloat(v, 64)
			okFull = err == nil
		}
	}
	if !okCheck || !okFull {
		return floor{}, fmt.Errorf("cannot parse benchload -floor output %q", out)
	}
	return f, nil
}

// memory returns, in KiB, VmHWM of /proc/PID/status and VmHWM − RssFile.
//
// VmHWM, the peak resident set, is the measure, but it includes the
// file-backed pages of the executable that the process touched (10–12 MiB
// of each server here: code and runtime tables), which are clean, shared
// between processes and reclaimable. They are mapped at start-up and stay,
// so VmHWM − RssFile (RssFile read at the end of the load) estimates the
// peak of the memory the server's own work holds: heap, stacks, buffers.
// The kernel keeps no peak of the anonymous part alone.
func memory(pid int) (hwm, anonPeak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	if hwm, err = parseVmHWM(b); err != nil {
		return 0, 0, err
	}
	file, err := parseStatusKiB(b, "RssFile")
	if err != nil {
		return 0, 0, err
	}
	return hwm, max(hwm-file, 0), nil
}

// parseVmHWM returns the VmHWM line of a /proc/PID/status file in KiB. A
// zombie's status has no VmHWM: the server must still be running.
func parseVmHWM(b []byte) (int64, error) { return parseStatusKiB(b, "VmHWM") }

// parseStatusKiB returns the value of a "Field:   1234 kB" line of a
// /proc/PID/status file (proc(5)).
func parseStatusKiB(b []byte, field string) (int64, error) {
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			v = strings.TrimSuffix(strings.TrimSpace(v), " kB")
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("cannot parse %s %q", field, v)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/PID/status (has the server exited?)", field)
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

// printCell prints, in Markdown, every round of r: each server's CPU per
// item and peak RSS with its ratio to the baseline's in the same round, and
// the floor with otlp-lite's ratio to it; then the medians (of values and
// of per-round ratios).
func printCell(cfg config, r cellResult, servers []server) {
	c := r.cell
	fmt.Printf("\n%s: %d requests/round, concurrency %d, server CPU %s, client CPU %s\n\n",
		r.name(), c.requests, cfg.concurrency, cfg.serverCPU, cfg.clientCPU)
	fmt.Println("| round | server | CPU µs/item | CPU ratio | ÷ floor | ÷ full floor | peak RSS MiB | RSS ratio | peak − file MiB | ratio | client items/s |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	base := r.samples[servers[0].name]
	cols := make(map[string]*[6][]float64) // cpu, cpu ratio, rss, rss ratio, anon, anon ratio; per server
	floorRatio := make(map[string][]float64)
	fullRatio := make(map[string][]float64)
	for _, srv := range servers {
		cols[srv.name] = &[6][]float64{}
	}
	for round := range cfg.rounds {
		f := r.floors[round]
		for _, srv := range servers {
			s := r.samples[srv.name][round]
			cr := s.usPerItem() / base[round].usPerItem()
			rr := float64(s.rssKiB) / float64(base[round].rssKiB)
			col := cols[srv.name]
			col[0] = append(col[0], s.usPerItem())
			col[1] = append(col[1], cr)
			col[2] = append(col[2], float64(s.rssKiB)/1024)
			col[3] = append(col[3], rr)
			ar := float64(s.anonKiB) / float64(base[round].anonKiB)
			col[4] = append(col[4], float64(s.anonKiB)/1024)
			col[5] = append(col[5], ar)
			fl, ff := "", ""
			if srv.name != servers[0].name {
				floorRatio[srv.name] = append(floorRatio[srv.name], s.usPerItem()/f.check)
				fullRatio[srv.name] = append(fullRatio[srv.name], s.usPerItem()/f.full)
				fl, ff = fmt.Sprintf("%.2f", s.usPerItem()/f.check), fmt.Sprintf("%.2f", s.usPerItem()/f.full)
			}
			fmt.Printf("| %d | %s | %.3f | %.3f | %s | %s | %.1f | %.3f | %.1f | %.3f | %s |\n",
				round+1, srv.name, s.usPerItem(), cr, fl, ff, float64(s.rssKiB)/1024, rr,
				float64(s.anonKiB)/1024, ar, strings.TrimSuffix(s.throughput, " items/s"))
		}
		fmt.Printf("| %d | floor | %.3f (Check), %.3f (full) | | | | | | | | |\n", round+1, f.check, f.full)
	}
	for _, srv := range servers {
		col := cols[srv.name]
		fl, ff := "", ""
		if srv.name != servers[0].name {
			fl, ff = fmt.Sprintf("%.2f", median(floorRatio[srv.name])), fmt.Sprintf("%.2f", median(fullRatio[srv.name]))
		}
		fmt.Printf("| median | %s | %.3f | %.3f | %s | %s | %.1f | %.3f | %.1f | %.3f | |\n",
			srv.name, median(col[0]), median(col[1]), fl, ff, median(col[2]), median(col[3]), median(col[4]), median(col[5]))
	}
}

// printSummary prints one Markdown row per cell: medians over the rounds,
// ratios as the median of the per-round ratios, and the per-round CPU
// ratios themselves.
func printSummary(cfg config, results []cellResult, servers []server) {
	fmt.Printf("\nSummary (%d rounds per cell; ratios are medians of per-round ratios)\n\n", cfg.rounds)
	fmt.Println("| cell | baseline CPU µs/item | otlp-lite CPU µs/item | CPU ratio | per-round CPU ratios | floor µs/item (Check / full) | otlp-lite ÷ floor | ÷ full floor | peak RSS MiB (baseline / otlp-lite) | RSS ratio | peak − file MiB (baseline / otlp-lite) | ratio |")
	fmt.Println("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		for _, srv := range servers[1:] {
			printSummaryRow(r, servers[0], srv)
		}
	}
	// The variants of otlp-lite against otlp-lite as built and run by
	// default, round by round: both ran in the same rounds, so a drift
	// of the machine hits both.
	if len(servers) > 2 {
		fmt.Printf("\nVariants against otlp-lite, a disk variant against the same build on -storage discard (CPU µs/item, ratios per round and their median)\n\n")
		fmt.Println("| cell | variant ÷ against | against CPU µs/item | variant CPU µs/item | CPU ratio | per-round CPU ratios |")
		fmt.Println("|---|---|---:|---:|---:|---|")
		for _, r := range results {
			for _, srv := range servers[2:] {
				// A disk variant against the same build on -storage
				// discard: what the durable write costs.
				against := servers[1].name
				if base, ok := strings.CutSuffix(srv.name, "-disk"); ok {
					against = base
				}
				ours := r.samples[against]
				v := r.samples[srv.name]
				var oc, vc, cr []float64
				var rounds []string
				for i := range ours {
					oc = append(oc, ours[i].usPerItem())
					vc = append(vc, v[i].usPerItem())
					ratio := v[i].usPerItem() / ours[i].usPerItem()
					cr = append(cr, ratio)
					rounds = append(rounds, fmt.Sprintf("%.3f", ratio))
				}
				fmt.Printf("| %s | %s ÷ %s | %.3f | %.3f | **%.3f** | %s |\n", r.name(), srv.name, against, median(oc), median(vc), median(cr), strings.Join(rounds, ", "))
			}
		}
	}
}

// printSummaryRow prints the summary row of one cell for srv against base.
func printSummaryRow(r cellResult, baseSrv, srv server) {
	base, ours := r.samples[baseSrv.name], r.samples[srv.name]
	var bc, oc, cr, br, or, rr, fc, ffl, fr, ffr, ba, oa, ar []float64
	var rounds []string
	for i := range base {
		bc = append(bc, base[i].usPerItem())
		oc = append(oc, ours[i].usPerItem())
		ratio := ours[i].usPerItem() / base[i].usPerItem()
		cr = append(cr, ratio)
		rounds = append(rounds, fmt.Sprintf("%.2f", ratio))
		br = append(br, float64(base[i].rssKiB)/1024)
		or = append(or, float64(ours[i].rssKiB)/1024)
		rr = append(rr, float64(ours[i].rssKiB)/float64(base[i].rssKiB))
		ba = append(ba, float64(base[i].anonKiB)/1024)
		oa = append(oa, float64(ours[i].anonKiB)/1024)
		ar = append(ar, float64(ours[i].anonKiB)/float64(base[i].anonKiB))
		fc = append(fc, r.floors[i].check)
		ffl = append(ffl, r.floors[i].full)
		fr = append(fr, ours[i].usPerItem()/r.floors[i].check)
		ffr = append(ffr, ours[i].usPerItem()/r.floors[i].full)
	}
	name := r.name()
	if srv.name != "otlp-lite" {
		name += " [" + srv.name + "]"
	}
	if r.cell.protocol == "grpc-stream" {
		name += " (baseline: unary)"
	}
	fmt.Printf("| %s | %.3f | %.3f | **%.3f** | %s | %.3f / %.3f | **%.2f** | %.2f | %.1f / %.1f | **%.2f** | %.1f / %.1f | %.2f |\n",
		name, median(bc), median(oc), median(cr), strings.Join(rounds, ", "),
		median(fc), median(ffl), median(fr), median(ffr), median(br), median(or), median(rr),
		median(ba), median(oa), median(ar))
}
