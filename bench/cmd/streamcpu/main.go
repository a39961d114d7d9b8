// Command streamcpu measures the whole server's CPU per item, a real
// `otlp-lite serve` process with its disk log, for the same real requests
// sent three ways (issue 23: "the stream: server CPU per span with
// stateful compression against per-message zstd"):
//
//	cd bench && go run ./cmd/streamcpu -dir ../../shared/datasets -rounds 3
//
// The modes:
//
//   - (a) unary: what the Collector's otlp exporter sends, one OTLP/gRPC
//     Export call per request, each message zstd-compressed, from grpc-go
//     with the zstd compressor the Collector registers (bench/grpczstd:
//     klauspost/compress at its default level), -concurrency calls in
//     flight on one connection (the exporter's sending queue has 10
//     consumers by default);
//   - (b) stream: otlpclient's StreamExporter (what `replay -protocol
//     stream`, `loadgen` and `-forward stream://` use) on one connection,
//     stateful zstd negotiated (the default), -concurrency requests
//     pending;
//   - (c) columns: the same with columns (the default since session 13), the columnar transform
//     under the stateful zstd.
//
// The requests are wirebytes' exactly: each dataset file cut in order as an
// SDK sends them and as a batch processor does (dataset.Cuttings), the
// -half second half by default (data nobody tuned on). Every mode runs
// against a server of its own (one process per mode, started once, its disk
// log in a temporary directory, -storage disk with its default -storage-sync
// always, free ports), so that what the kernel accounts to a process is
// that mode's work alone, its garbage collected on its own heap's pace, not
// another mode's; the server's defaults are kept otherwise (the stream is
// rotated every 1,000 requests, and the client reopens it, as in
// production). For each signal and cutting, after -warmup rounds outside
// the figures, each mode sends in each round (-rounds) every request of the cutting, as
// many times as it takes to send -min-items items (a batch processor's
// cutting is a few requests), each time (a pass) on a connection and a
// stream of its own (with -same-stream, one for the round's passes: a
// stream's setup counted once a round, but the repeated requests find the
// columns' tables warm). The modes take turns pass by pass, in an order
// that rotates with the round and the pass, so that each mode's round spans
// the same stretch of the machine's time (on a shared machine the load of
// other processes comes and goes by the second: with a window per mode, a
// burst fell on one mode's window and not the other's). A pass's
// connection and stream are opened before the clock
// starts (an empty request answered on it: the connection, the stream's
// headers and its compression negotiated, what a long-lived exporter
// amortises; the stream's rotations every 1,000 requests are counted),
// waits for every acknowledgement and closes. The server's utime+stime is
// read once it has gone quiet (less than 1 ms of CPU in 100 ms: the
// garbage of the pass collected), from the process's CPU clock (all its
// threads, to the nanosecond, where /proc counts 10 ms ticks), and divided
// by the items. The client's CPU is this process's (getrusage) over the
// sending, after a GC; the bytes on the wire are what the client wrote on
// its connection (HTTP/2 frames and headers included); the disk log's
// commits per request are its otlplite_storage_sync_seconds count; its
// garbage collections and bytes allocated are its runtime's
// (go_gc_duration_seconds_count, go_memstats_alloc_bytes_total): the
// rounds of one mode differ mostly by these (in session 13, a round of
// unary at 8,192 spans allocated 20 to 850 bytes a span and collected 0 to
// 26 times, its CPU 530 to 880 ns a span: buffers pooled, or allocated
// again after a collection emptied the pools). The ratios to (a) are
// given round by round with their median, quartiles and range, and for
// all rounds together (each mode's CPU summed over the rounds). A
// request a stream resent after a stall or a break is logged with its
// cause and the round marked in the output, and a stream that fails (a
// stall, a break) has the server's and the client's goroutines saved in
// files of the temporary directory, whose names are logged. A round in which
// the server's disk log (otlplite_storage_items, on its admin /metrics)
// did not grow by exactly the items sent, or in which the stream's
// compression or columns were not accepted, is an error, not a figure.
//
// With -otlplite-rev REV, otlp-lite at that revision is built too and runs
// the modes of -rev-modes (default: columns) beside this tree's, in the same
// rounds. With -profile-dir, after the rounds of each cutting whose name
// contains -profile-cut, each server is profiled (its admin /debug/pprof)
// while the cutting's requests are sent again, outside the figures
// (-profile-type allocs: what it allocated meanwhile). -only and -cut keep
// the files and cuttings whose names contain them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otlp-lite/otlp-lite/bench/grpczstd"
	"github.com/otlp-lite/otlp-lite/bench/internal/benchnet"
	"github.com/otlp-lite/otlp-lite/bench/internal/cputime"
	"github.com/otlp-lite/otlp-lite/bench/internal/dataset"
	"github.com/otlp-lite/otlp-lite/bench/internal/otlplitebin"
	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

func init() { grpczstd.Register() }

type config struct {
	dir, only, half string
	cut             string
	rounds          int
	// warmup is the rounds sent before the measured ones.
	warmup      int
	concurrency int
	// requests, if positive, keeps only the first requests of each
	// cutting's half (quick runs, the test).
	requests int
	minItems int
	// sameStream sends a round's passes on one connection and stream.
	sameStream bool
	// quietStep is how long a server's CPU must stay (nearly) unchanged
	// for it to be quiet (quiet).
	quietStep  time.Duration
	bin, rev   string
	revModes   string
	modes      string
	profileDir string
	profileCut string
	profileSec int
	// profileType is the profile of /debug/pprof taken: profile (CPU)
	// or allocs (what was allocated while it ran: a delta).
	profileType string
	args        []string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.dir, "dir", "../../shared/datasets", "the datasets directory")
	flag.StringVar(&cfg.only, "only", "", "only the files whose name contains this")
	flag.StringVar(&cfg.cut, "cut", "", "only the cuttings whose name contains this (SDK, 8192)")
	flag.StringVar(&cfg.half, "half", "second", "which requests of each cutting: all, first (tuned on) or second (not tuned on)")
	flag.IntVar(&cfg.rounds, "rounds", 3, "measured rounds (the modes take turns in each)")
	flag.IntVar(&cfg.warmup, "warmup", 1, "rounds sent before the measured ones, outside the figures (the servers' buffers, pools and heap grown to the cutting's requests)")
	flag.IntVar(&cfg.concurrency, "concurrency", 10, "requests in flight per mode: unary calls on one connection, or pending requests on the stream (the Collector's sending queue: 10 consumers)")
	flag.IntVar(&cfg.requests, "requests", 0, "send only the first N requests of each cutting (0: all)")
	flag.IntVar(&cfg.minItems, "min-items", 300000, "send each cutting's requests as many times per round as it takes to send this many items (each time on a connection of its own)")
	flag.BoolVar(&cfg.sameStream, "same-stream", false, "send a round's passes on one connection and stream, one after the other (default: each pass on its own, so that no stream sees the same requests twice: the columns' tables and zstd's window would find them; with it, a stream's setup is counted once a round, not once a pass)")
	flag.StringVar(&cfg.bin, "otlplite-bin", "", "the otlp-lite binary (default: built from this tree)")
	flag.StringVar(&cfg.rev, "otlplite-rev", "", "also build otlp-lite at this git revision (git archive) and run it as \"otlp-lite@REV\" in the same rounds, with the modes of -rev-modes")
	flag.StringVar(&cfg.revModes, "rev-modes", "columns", "the modes otlp-lite@REV runs (comma-separated: unary, stream, columns)")
	flag.StringVar(&cfg.modes, "modes", "unary,stream,columns", "the modes this tree's otlp-lite runs; unary, the reference of the ratios, first")
	flag.StringVar(&cfg.profileDir, "profile-dir", "", "after the rounds of each cutting matching -profile-cut, write a CPU profile of each server to this directory (outside the figures)")
	flag.StringVar(&cfg.profileCut, "profile-cut", "8192", "the cuttings profiled (a substring of their name: SDK, 8192)")
	flag.IntVar(&cfg.profileSec, "profile-seconds", 10, "length of each profile")
	flag.StringVar(&cfg.profileType, "profile-type", "profile", "the profile taken: profile (CPU) or allocs (what was allocated while it ran)")
	flag.Parse()
	cfg.args = os.Args[1:]
	cfg.quietStep = 100 * time.Millisecond
	if err := run(os.Stdout, cfg); err != nil {
		log.Fatal(err)
	}
}

// mode is how a client sends: unary Export calls with per-message zstd,
// or our stream with stateful zstd, with or without columns.
type mode int

const (
	unary mode = iota
	stream
	columns
)

var modeNames = map[string]mode{"unary": unary, "stream": stream, "columns": columns}

func (m mode) String() string {
	switch m {
	case unary:
		return "(a) OTLP/gRPC unary, each message zstd"
	case stream:
		return "(b) stream, stateful zstd"
	}
	return "(c) stream, columns + stateful zstd"
}

func parseModes(s string) ([]mode, error) {
	var out []mode
	for _, f := range strings.Split(s, ",") {
		m, ok := modeNames[strings.TrimSpace(f)]
		if !ok {
			return nil, fmt.Errorf("unknown mode %q: want unary, stream or columns", f)
		}
		out = append(out, m)
	}
	return out, nil
}

// server is one otlp-lite process and the mode it is sent.
type server struct {
	name   string // otlp-lite or otlp-lite@REV, and the mode
	mode   mode
	cmd    *exec.Cmd
	addr   string
	admin  string
	exited chan struct{}
	stderr *lockedBuffer
}

func run(w io.Writer, cfg config) error {
	files, err := filepath.Glob(filepath.Join(cfg.dir, "*.zst"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no dataset files in %s", cfg.dir)
	}
	modes, err := parseModes(cfg.modes)
	if err != nil {
		return err
	}
	if modes[0] != unary {
		return errors.New("-modes must start with unary, the reference of the ratios")
	}
	var revModes []mode
	if cfg.rev != "" {
		if revModes, err = parseModes(cfg.revModes); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "streamcpu")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	root, err := otlplitebin.Root()
	if err != nil {
		return err
	}
	if cfg.bin == "" {
		cfg.bin = filepath.Join(tmp, "otlp-lite")
		if err := otlplitebin.Build(cfg.bin, root); err != nil {
			return err
		}
	}
	revBin := ""
	if cfg.rev != "" {
		src := filepath.Join(tmp, "src")
		if err := otlplitebin.Unpack(root, cfg.rev, src); err != nil {
			return err
		}
		revBin = filepath.Join(tmp, "otlp-lite-rev")
		if err := otlplitebin.Build(revBin, src); err != nil {
			return err
		}
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	for _, m := range modes {
		s, err := start(cfg.bin, "otlp-lite", m, tmp)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	for _, m := range revModes {
		s, err := start(revBin, "otlp-lite@"+cfg.rev, m, tmp)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	fmt.Fprintf(w, "Command: `cd bench && go run ./cmd/streamcpu %s`\n\n", strings.Join(cfg.args, " "))
	fmt.Fprintf(w, "otlp-lite at %s, %s, %d CPUs (load average %s)\n\n", otlplitebin.Describe(root), time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), loadavg())
	if cfg.rev != "" {
		fmt.Fprintf(w, "otlp-lite@%s at %s\n\n", cfg.rev, otlplitebin.Commit(root, cfg.rev))
	}
	for _, f := range files {
		if !strings.Contains(filepath.Base(f), cfg.only) {
			continue
		}
		if err := table(w, f, cfg, servers); err != nil {
			return err
		}
	}
	return nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// start runs bin serve with its disk log in a directory of its own under
// tmp, on free ports, pprof on its admin listener.
func start(bin, name string, m mode, tmp string) (*server, error) {
	port, err := benchnet.FreePort()
	if err != nil {
		return nil, err
	}
	aport, err := benchnet.FreePort()
	if err != nil {
		return nil, err
	}
	s := &server{name: name, mode: m, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		admin: net.JoinHostPort("127.0.0.1", strconv.Itoa(aport)), exited: make(chan struct{}), stderr: &lockedBuffer{}}
	data, err := os.MkdirTemp(tmp, "data")
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "serve", "-grpc-addr", s.addr, "-http-addr", "", "-admin-addr", s.admin, "-admin-pprof",
		"-storage", "disk", "-data-dir", data, "-log-level", "warn")
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	if err := benchnet.WaitListening(s.addr, s.exited, 30*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s: %w; its stderr: %s", s.name, err, s.stderr.String())
	}
	if err := benchnet.WaitListening(s.admin, s.exited, 30*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s: %w; its stderr: %s", s.name, err, s.stderr.String())
	}
	return s, nil
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *server) label() string { return s.name + " " + s.mode.String() }

// sample is one round of one server at one cutting.
type sample struct {
	serverNs, clientNs, wire float64 // per item
	// syncs is the disk log's commits (fsyncs of a group of records)
	// per request.
	syncs float64
	// gcs is the server's garbage collections over the round (its
	// runtime's NumGC), allocs the bytes it allocated per item: the
	// rounds of one mode differ mostly by these (buffers pooled or
	// allocated again after a collection emptied the pools).
	gcs, allocs float64
	// releases is the server's burst releases over the round (an idle
	// server giving its heap back: a mode that waited its turn too long).
	releases float64
	// resent counts requests the client sent again after a stall or a
	// broken stream, cause the last one's.
	resent uint64
	cause  error
}

func table(w io.Writer, file string, cfg config, servers []*server) error {
	metrics := dataset.IsMetrics(file)
	records, err := dataset.Read(file)
	if err != nil {
		return err
	}
	sig, item, items := otlpclient.Traces, "span", "spans"
	if metrics {
		sig, item, items = otlpclient.Metrics, "data point", "data points"
	}
	type result struct {
		cut     dataset.Cutting
		samples [][]sample // by server, by round
		note    string
	}
	var results []result
	for _, c := range dataset.Cuttings(metrics) {
		if !strings.Contains(c.Name+" "+strconv.Itoa(c.Items), cfg.cut) {
			continue
		}
		cut, err := dataset.Cut(records, metrics, c.Items, c.ByResource)
		if err != nil {
			return err
		}
		if cut, err = dataset.Half(cut, cfg.half); err != nil {
			return err
		}
		if cfg.requests > 0 && len(cut) > cfg.requests {
			cut = cut[:cfg.requests]
		}
		reqs := make([][]byte, len(cut))
		n, plain := 0, 0
		for i, r := range cut {
			reqs[i] = r.Proto
			n += r.Items
			plain += len(r.Proto)
		}
		res := result{cut: c, samples: make([][]sample, len(servers)),
			note: fmt.Sprintf("%s: %d requests, %d %s, %.0f %s and %.1f KB of plain OTLP per request",
				c.Name, len(reqs), n, items, float64(n)/float64(len(reqs)), items, float64(plain)/float64(len(reqs))/1e3)}
		log.Printf("%s: %s", filepath.Base(file), res.note)
		// Passes per round: enough items that each round's figure is
		// not a few milliseconds (a batch processor's cutting is only a
		// few requests).
		passes := max(1, (cfg.minItems+n-1)/n)
		if cfg.sameStream {
			res.note += fmt.Sprintf(", sent %d times per round, one after the other on one connection (and stream)", passes)
		} else {
			res.note += fmt.Sprintf(", sent %d times per round, each on a connection (and stream) of its own", passes)
		}
		// Warm-up rounds, as long as the measured ones, outside the
		// figures: a server that served the last cutting's requests
		// (SDK-sized) keeps buffers, pools and a heap goal of their size,
		// and the first passes of 2 MB requests paid to grow them (in
		// session 13, a first round of metrics at 8,192 points after a
		// one-pass warm-up: the stream 1.75x and columns 1.32x of unary,
		// the next rounds 0.83x and 0.60x).
		for round := range cfg.warmup {
			if _, err := measureRound(servers, sig, reqs, n, passes, round, cfg); err != nil {
				return fmt.Errorf("warm-up: %w", err)
			}
		}
		for round := range cfg.rounds {
			smps, err := measureRound(servers, sig, reqs, n, passes, round, cfg)
			if err != nil {
				return err
			}
			for i, smp := range smps {
				s := servers[i]
				res.samples[i] = append(res.samples[i], smp)
				log.Printf("round %d %s: server %.0f ns/%s (%.0f GCs, %.0f burst releases, %.2f commits a request, %.0f bytes allocated/%s), client %.0f ns/%s, %.2f bytes/%s",
					round+1, s.label(), smp.serverNs, item, smp.gcs, smp.releases, smp.syncs, smp.allocs, item, smp.clientNs, item, smp.wire, item)
			}
		}
		if cfg.profileDir != "" && strings.Contains(c.Name+" "+strconv.Itoa(c.Items), cfg.profileCut) {
			for _, s := range servers {
				name := strings.NewReplacer(" ", "_", "/", "-", "(", "", ")", "", ",", "").Replace(fmt.Sprintf("%s.%s.%s.%s.%s.pprof", filepath.Base(file), c.Name, s.name, modeKey(s.mode), cfg.profileType))
				passes, err := profile(s, sig, reqs, cfg, filepath.Join(cfg.profileDir, name))
				if err != nil {
					return err
				}
				log.Printf("profile of %s: %s, %d passes (%d %s) sent whole while it ran", s.label(), name, passes, passes*n, items)
			}
		}
		results = append(results, res)
	}
	signal := "traces"
	if metrics {
		signal = "metrics"
	}
	fmt.Fprintf(w, "**%s** (`%s`, requests: %s; %d rounds, median; ratios: the median of each round's ratio to (a) of the same round)\n\n",
		signal, filepath.Base(file), dataset.HalfName(cfg.half), cfg.rounds)
	heads := []string{"requests"}
	for i, s := range servers {
		heads = append(heads, s.label())
		if i > 0 {
			heads = append(heads, "÷ (a)")
		}
	}
	header := "| " + strings.Join(heads, " | ") + " |\n|" + strings.Repeat("---|", len(heads)) + "\n"
	figure := []struct {
		title  string
		get    func(sample) float64
		format string
	}{
		{fmt.Sprintf("Server CPU per %s (ns; utime+stime of the server process: transport, decompression, validation, pipeline, disk log with fsync, GC)", item), func(s sample) float64 { return s.serverNs }, "%.0f"},
		{fmt.Sprintf("Client CPU per %s (ns; this process's utime+stime while sending: encoding, compression, transport)", item), func(s sample) float64 { return s.clientNs }, "%.0f"},
		{fmt.Sprintf("Bytes on the wire per %s (client to server: what the client wrote on its TCP connection, HTTP/2 frames and headers included)", item), func(s sample) float64 { return s.wire }, "%.2f"},
		{"The disk log's commits (fsyncs, each of a group of records) per request", func(s sample) float64 { return s.syncs }, "%.2f"},
		{"The server's garbage collections per round (its runtime's count)", func(s sample) float64 { return s.gcs }, "%.0f"},
		{fmt.Sprintf("Bytes the server allocated per %s", item), func(s sample) float64 { return s.allocs }, "%.0f"},
	}
	for _, f := range figure {
		fmt.Fprintf(w, "%s:\n\n%s", f.title, header)
		for _, r := range results {
			cells := []string{r.cut.Name}
			for i := range servers {
				var vals, ratios []float64
				for round, smp := range r.samples[i] {
					vals = append(vals, f.get(smp))
					if ref := f.get(r.samples[0][round]); ref != 0 { // (a) without a collection
						ratios = append(ratios, f.get(smp)/ref)
					}
				}
				cells = append(cells, fmt.Sprintf(f.format, median(vals)))
				if i > 0 && len(ratios) == 0 {
					cells = append(cells, "—")
				} else if i > 0 {
					cells = append(cells, fmt.Sprintf("%.2fx", median(ratios)))
				}
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "Server CPU ratios to (a), round by round:\n\n")
	for _, r := range results {
		for i, s := range servers[1:] {
			fmt.Fprintf(w, "- %s, %s:", r.cut.Name, s.label())
			var ratios []float64
			var sum, sumA float64
			for round, smp := range r.samples[i+1] {
				ratios = append(ratios, smp.serverNs/r.samples[0][round].serverNs)
				sum += smp.serverNs
				sumA += r.samples[0][round].serverNs
				fmt.Fprintf(w, " %.2fx", ratios[round])
			}
			fmt.Fprintf(w, " (%s; all rounds together %.2fx)\n", spread(ratios), sum/sumA)
		}
	}
	fmt.Fprintln(w)
	// A revision's server against this tree's in the same mode, round by
	// round: the rounds share the machine's state.
	for i, s := range servers {
		for j, t := range servers[:i] {
			if t.mode != s.mode || t.name == s.name {
				continue
			}
			for _, r := range results {
				var ratios []float64
				fmt.Fprintf(w, "- %s, server CPU of %s ÷ %s:", r.cut.Name, s.label(), t.name)
				for round := range r.samples[i] {
					ratios = append(ratios, r.samples[i][round].serverNs/r.samples[j][round].serverNs)
					fmt.Fprintf(w, " %.2fx", ratios[round])
				}
				fmt.Fprintf(w, " (%s)\n", spread(ratios))
			}
			fmt.Fprintln(w)
		}
	}
	for _, r := range results {
		for i, s := range servers {
			for round, smp := range r.samples[i] {
				if smp.resent > 0 {
					fmt.Fprintf(w, "- **%s, %s, round %d: %d requests resent** (%v: nothing lost, but the round's figures hold the resends)\n",
						r.cut.Name, s.label(), round+1, smp.resent, smp.cause)
				}
			}
		}
	}
	for _, r := range results {
		fmt.Fprintf(w, "- %s\n", r.note)
	}
	fmt.Fprintln(w)
	return nil
}

func modeKey(m mode) string {
	for k, v := range modeNames {
		if v == m {
			return k
		}
	}
	return "?"
}

// counters are the admin series a round checks.
type counters struct {
	stored, compression, columns float64
	syncs                        float64 // the disk log's fsyncs
	// The Go runtime's own counts (metrics.WriteProcessMetrics): its
	// collections and the bytes allocated.
	gcs, allocs float64
	// releases counts the server's burst releases (its heap given back
	// after burstIdle seconds with nothing in flight: two collections,
	// its pools emptied).
	releases float64
}

func (s *server) counters(sig otlpclient.Signal) (counters, error) {
	m, err := benchnet.Scrape("http://" + s.admin + "/metrics")
	if err != nil {
		return counters{}, err
	}
	return counters{
		stored:      m[fmt.Sprintf(`otlplite_storage_items{signal=%q}`, sig.String())],
		compression: m["otlplite_stream_compression_accepted_total"],
		columns:     m["otlplite_stream_columns_accepted_total"],
		syncs:       m[fmt.Sprintf(`otlplite_storage_sync_seconds_count{signal=%q}`, sig.String())],
		gcs:         m["go_gc_duration_seconds_count"],
		allocs:      m["go_memstats_alloc_bytes_total"],
		releases:    m["otlplite_go_burst_releases_total"],
	}, nil
}

// meter measures one server over a round: its passes, taken in turns
// with the other servers' (pass by pass, so that every mode's round spans
// the same stretch of the machine's time: a helper's build or a burst of
// load falls on every mode alike, not on the one whose window it was).
type meter struct {
	s      *server
	sig    otlpclient.Signal
	cfg    config
	before counters
	// snd is the round's one sender with -same-stream, nil otherwise
	// (each pass opens its own).
	snd            sender
	server, client time.Duration
	written        int64
	// wire counts the bytes the client writes on its connection.
	wire   atomic.Int64
	passes int
	resent uint64
	cause  error
}

// begin reads s's counters before a round (and, with -same-stream, opens
// the round's connection and stream).
func begin(s *server, sig otlpclient.Signal, cfg config) (*meter, error) {
	m := &meter{s: s, sig: sig, cfg: cfg}
	var err error
	if m.before, err = s.counters(sig); err != nil {
		return nil, err
	}
	if cfg.sameStream {
		if m.snd, err = open(s, sig, cfg.concurrency, &m.wire); err != nil {
			return nil, fmt.Errorf("%w; server stderr: %s", err, s.stderr.String())
		}
	}
	return m, nil
}

// pass sends every request to the server in its mode, on a connection
// (and a stream) of its own opened before the clock starts (an empty
// request answered on it: the connection, the stream's headers and its
// compression negotiated, setup a long-lived exporter amortises), or on
// the round's with -same-stream, waits for every acknowledgement, closes,
// and waits for the server to go quiet; it adds the server's and the
// client's CPU and the bytes written.
func (m *meter) pass(reqs [][]byte) error {
	s := m.s
	pid := s.cmd.Process.Pid
	snd := m.snd
	if snd == nil {
		var err error
		if snd, err = open(s, m.sig, m.cfg.concurrency, &m.wire); err != nil {
			return fmt.Errorf("%w; server stderr: %s", err, s.stderr.String())
		}
	}
	if _, err := quiet(pid, m.cfg.quietStep); err != nil {
		return err
	}
	runtime.GC() // this process's garbage of before, out of the client's figure
	m.wire.Store(0)
	sBefore, err := cputime.ProcessCPU(pid)
	if err != nil {
		return err
	}
	cBefore := selfCPU()
	err = snd.send(reqs)
	if m.snd == nil {
		if cerr := snd.close(); err == nil {
			err = cerr
		}
	}
	m.client += selfCPU() - cBefore
	m.written += m.wire.Load()
	if err != nil {
		return fmt.Errorf("%w; server stderr: %s", err, s.stderr.String())
	}
	m.passes++
	if m.snd == nil {
		m.resends(snd)
	}
	sAfter, err := quiet(pid, m.cfg.quietStep)
	if err != nil {
		return err
	}
	m.server += sAfter - sBefore
	return nil
}

// resends notes the requests snd sent again. Requests a rotation left
// unread are resent, as in production (no cause); a stall or a broken
// stream (a cause) is not a loss (the disk log's count says so in end),
// but the figure holds its cost: the output names it.
func (m *meter) resends(snd sender) {
	n, why := snd.resent()
	if n == 0 {
		return
	}
	log.Printf("%s: %d requests resent (last cause: %v); server stderr: %s", m.s.label(), n, why, m.s.stderr.String())
	if why != nil {
		m.resent += n
		m.cause = why
	}
}

// end closes the round's stream (-same-stream: its close counted in the
// server's CPU) and returns the round's figures per item, checking that
// the server's disk log grew by exactly the items sent (items per pass),
// and that the stream's compression and columns were accepted.
func (m *meter) end(items, requests int) (sample, error) {
	s := m.s
	streams := m.passes
	if m.snd != nil {
		pid := s.cmd.Process.Pid
		before, err := quiet(pid, m.cfg.quietStep)
		if err != nil {
			return sample{}, err
		}
		cBefore := selfCPU()
		err = m.snd.close()
		m.client += selfCPU() - cBefore
		if err != nil {
			return sample{}, fmt.Errorf("%w; server stderr: %s", err, s.stderr.String())
		}
		m.resends(m.snd)
		after, err := quiet(pid, m.cfg.quietStep)
		if err != nil {
			return sample{}, err
		}
		m.server += after - before
		streams = 1
	}
	after, err := s.counters(m.sig)
	if err != nil {
		return sample{}, err
	}
	items *= m.passes
	if got := int(after.stored - m.before.stored); got != items {
		return sample{}, fmt.Errorf("the server's disk log grew by %d items, %d sent and acknowledged", got, items)
	}
	if s.mode != unary && after.compression-m.before.compression < float64(streams) {
		return sample{}, fmt.Errorf("stateful compression accepted on %.0f streams, %d opened", after.compression-m.before.compression, streams)
	}
	if gotCols := after.columns > m.before.columns; gotCols != (s.mode == columns) {
		return sample{}, fmt.Errorf("streams with columns accepted: %v, want %v", gotCols, s.mode == columns)
	}
	n := float64(items)
	return sample{
		resent:   m.resent,
		cause:    m.cause,
		syncs:    (after.syncs - m.before.syncs) / float64(requests*m.passes),
		gcs:      after.gcs - m.before.gcs,
		releases: after.releases - m.before.releases,
		allocs:   (after.allocs - m.before.allocs) / n,
		serverNs: float64(m.server) / n,
		clientNs: float64(m.client) / n,
		wire:     float64(m.written) / n,
	}, nil
}

// measureRound measures a round of every server, passes passes each,
// taken in turns pass by pass in an order that rotates (by round and by
// pass: no mode always follows the same one, whose disk log's writeback
// or garbage might still be under way).
func measureRound(servers []*server, sig otlpclient.Signal, reqs [][]byte, items, passes, round int, cfg config) ([]sample, error) {
	meters := make([]*meter, len(servers))
	for i, s := range servers {
		m, err := begin(s, sig, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s, round %d: %w", s.label(), round+1, err)
		}
		meters[i] = m
	}
	for p := range passes {
		for k := range servers {
			i := (k + round + p) % len(servers)
			if err := meters[i].pass(reqs); err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", servers[i].label(), round+1, err)
			}
		}
	}
	out := make([]sample, len(servers))
	for i, m := range meters {
		smp, err := m.end(items, len(reqs))
		if err != nil {
			return nil, fmt.Errorf("%s, round %d: %w", servers[i].label(), round+1, err)
		}
		out[i] = smp
	}
	return out, nil
}

// selfCPU is this process's user+system CPU so far (getrusage).
func selfCPU() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// quiet waits until the process's CPU grows by less than 1 % of step in
// step (100 ms: the work of what was acknowledged done, its garbage
// collected; an idle server's timers cost far less), at most 5 s, and
// returns its CPU then.
func quiet(pid int, step time.Duration) (time.Duration, error) {
	last, err := cputime.ProcessCPU(pid)
	if err != nil {
		return 0, err
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(step) // polling another process's CPU
		now, err := cputime.ProcessCPU(pid)
		if err != nil {
			return 0, err
		}
		if now-last < step/100 {
			return now, nil
		}
		last = now
	}
	return last, nil
}

var exportMethod = map[otlpclient.Signal]string{
	otlpclient.Traces:  "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
	otlpclient.Metrics: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
}

// sender is one client of a mode on a connection of its own.
type sender interface {
	// send sends the requests and waits for every acknowledgement,
	// failing on any error.
	send(reqs [][]byte) error
	close() error
	// resent returns the requests sent again (a stream stalled, broke
	// or was rotated with requests unread) and the last cause.
	resent() (uint64, error)
}

// open connects a client of s's mode, counting the bytes it writes in
// wire, and has an empty request answered on it.
func open(s *server, sig otlpclient.Signal, concurrency int, wire *atomic.Int64) (sender, error) {
	dial := func(ctx context.Context, network, a string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, a)
		if err != nil {
			return nil, err
		}
		return countingConn{c, wire}, nil
	}
	if s.mode == unary {
		return openUnary(s.addr, sig, concurrency, dial)
	}
	return openStream(s.addr, sig, concurrency, s.mode == columns, dial, func(err error, delay time.Duration) {
		// A stream that failed (a stall, a break: not a rotation) is
		// logged with the time, and both sides' goroutines are saved
		// while the server still holds what the stream left (who waits
		// for whom: issue 23's stall).
		log.Printf("%s: stream failed, its requests resent in %v: %v", s.label(), delay, err)
		dumpGoroutines(s)
	})
}

// dumpGoroutines saves the goroutines of s (its admin /debug/pprof, with
// their stacks) and of this process (the client) in files of the
// temporary directory, and logs their names.
func dumpGoroutines(s *server) {
	stamp := time.Now().UTC().Format("150405.000")
	name := strings.NewReplacer(" ", "_", "/", "-", "(", "", ")", "", ",", "", "@", "-").Replace(s.label())
	if f, err := os.CreateTemp("", "streamcpu-server-"+name+"-"+stamp+"-*.txt"); err == nil {
		c := http.Client{Timeout: 10 * time.Second}
		if resp, err := c.Get("http://" + s.admin + "/debug/pprof/goroutine?debug=2"); err == nil {
			_, _ = io.Copy(f, resp.Body)
			resp.Body.Close()
		} else {
			fmt.Fprintln(f, err)
		}
		f.Close()
		log.Printf("%s: the server's goroutines in %s", s.label(), f.Name())
	}
	if f, err := os.CreateTemp("", "streamcpu-client-"+name+"-"+stamp+"-*.txt"); err == nil {
		_ = pprof.Lookup("goroutine").WriteTo(f, 2)
		f.Close()
		log.Printf("%s: the client's goroutines in %s", s.label(), f.Name())
	}
}

// unarySender sends each request as one Export call, zstd, from grpc-go
// as the Collector's otlp exporter does, concurrency calls at a time on one
// connection.
type unarySender struct {
	conn        *grpc.ClientConn
	method      string
	concurrency int
}

func openUnary(addr string, sig otlpclient.Signal, concurrency int, dial otlpclient.DialFunc) (*unarySender, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) { return dial(ctx, "tcp", a) }),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(benchnet.RawCodec{}), grpc.UseCompressor(grpczstd.Name)))
	if err != nil {
		return nil, err
	}
	u := &unarySender{conn: conn, method: exportMethod[sig], concurrency: concurrency}
	if err := u.send([][]byte{{}}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("an empty request: %w", err)
	}
	return u, nil
}

func (u *unarySender) send(reqs [][]byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var next atomic.Int64
	errs := make(chan error, u.concurrency)
	var wg sync.WaitGroup
	for range u.concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(reqs) {
					return
				}
				var resp []byte
				if err := u.conn.Invoke(ctx, u.method, &reqs[i], &resp); err != nil {
					errs <- fmt.Errorf("request %d: %w", i, err)
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func (u *unarySender) close() error { return u.conn.Close() }

// resent is 0: grpc-go without a retry policy resends nothing it sent.
func (u *unarySender) resent() (uint64, error) { return 0, nil }

// streamSender sends the requests on otlpclient's StreamExporter
// (stateful zstd; with columns, the default, unless DisableStreamColumns), at most
// concurrency pending.
type streamSender struct {
	e    *otlpclient.StreamExporter
	sent int
}

func openStream(addr string, sig otlpclient.Signal, concurrency int, cols bool, dial otlpclient.DialFunc, onRetry func(error, time.Duration)) (*streamSender, error) {
	e := otlpclient.NewStreamExporter(otlpclient.StreamConfig{
		Config: otlpclient.Config{
			Endpoint:       addr,
			Signal:         sig,
			Compression:    compression.Zstd, // the messages a stream sends before the server's answer
			DialContext:    dial,
			RequestTimeout: 5 * time.Minute,
			OnRetry:        onRetry,
		},
		MaxPending:           concurrency,
		DisableStreamColumns: !cols,
	})
	s := &streamSender{e: e}
	if err := s.send([][]byte{{}}); err != nil {
		_ = e.Close(context.Background())
		return nil, fmt.Errorf("an empty request: %w", err)
	}
	return s, nil
}

func (s *streamSender) send(reqs [][]byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i, r := range reqs {
		wg.Add(1)
		err := s.e.Send(ctx, r, func(err error) {
			if err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("request %d: %w", i, err)
				}
				mu.Unlock()
			}
			wg.Done()
		})
		if err != nil {
			wg.Done()
			return fmt.Errorf("request %d: %w", i, err)
		}
	}
	wg.Wait()
	s.sent += len(reqs)
	if st := s.e.Stats(); first == nil && (st.Acknowledged != uint64(s.sent) || st.Rejected != 0) {
		first = fmt.Errorf("%d of %d requests acknowledged, %d items rejected (%+v)", st.Acknowledged, s.sent, st.Rejected, st)
	}
	return first
}

func (s *streamSender) resent() (uint64, error) { return s.e.Stats().Retried, s.e.LastError() }

func (s *streamSender) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return s.e.Close(ctx)
}

// countingConn counts the bytes written on a connection.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// profile saves a CPU profile of s (its admin /debug/pprof) while the
// requests are sent to it over and over in its mode, each pass on a
// connection of its own.
// It returns the passes sent whole while the profile ran, for a figure
// per item.
func profile(s *server, sig otlpclient.Signal, reqs [][]byte, cfg config, file string) (passes int, err error) {
	if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() {
		done <- fetchProfile(s.admin, cfg.profileType, cfg.profileSec, file)
	}()
	var wire atomic.Int64
	for {
		snd, err := open(s, sig, cfg.concurrency, &wire)
		if err == nil {
			err = snd.send(reqs)
			if cerr := snd.close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return passes, fmt.Errorf("%s, profile: %w", s.label(), err)
		}
		select {
		case err := <-done:
			return passes, err
		default:
			passes++
		}
	}
}

func fetchProfile(addr, typ string, seconds int, file string) error {
	if typ != "profile" && typ != "allocs" {
		return fmt.Errorf("-profile-type %q: want profile or allocs", typ)
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	defer out.Close()
	resp, err := httpGet(fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", addr, typ, seconds))
	if err != nil {
		return fmt.Errorf("cannot profile: %w", err)
	}
	defer resp.Close()
	_, err = io.Copy(out, resp)
	return err
}

// spread describes per-round ratios: their median, and the quartiles
// and extremes around it (how far two runs can be expected to disagree).
func spread(xs []float64) string {
	if len(xs) == 0 {
		return "no rounds"
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	q := func(p float64) float64 { return s[int(p*float64(len(s)-1)+0.5)] }
	return fmt.Sprintf("median %.2fx, quartiles %.2f-%.2f, range %.2f-%.2f", median(s), q(0.25), q(0.75), s[0], s[len(s)-1])
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// lockedBuffer is a server's stderr, written by os/exec's copier and read
// for error messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.b) < 64<<10 { // enough to say why; a chatty server is not kept whole
		l.b = append(l.b, p...)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// httpGet returns the body of a 200 answer to GET url.
func httpGet(url string) (io.ReadCloser, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return resp.Body, nil
}
