// Command arrowcpu measures the server CPU per item of OTel-Arrow in:
// otlp-lite built with -tags otelarrow (-storage discard) against the
// Collector's otelarrowreceiver (contrib v0.148.0 as a library, its
// default configuration, a consumer that counts), each in a process of its
// own, fed the same BatchArrowRecords (otel-arrow's producer, one stream
// per signal) by this process; CPU is the server process's user+system
// time (/proc/PID/stat) while it is fed.
//
//	cd bench/arrowcpu && go run . -rounds 3
//
// Each signal is measured on its own (a server is started per signal, so
// its CPU is that signal's), and -otlplite-rev REV also measures
// otlp-lite built at a git revision (git archive, no worktree touched)
// beside the working tree's build, in the same run.
//
// It is a module of its own: the Collector's components fight the
// versions of bench/.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	contrib := flag.String("serve-contrib", "", "run the Collector's otelarrowreceiver on this address (the child)")
	rounds := flag.Int("rounds", 3, "times the data is sent to each server")
	data := flag.String("datasets", "../../../shared/datasets", "the demo datasets")
	per := flag.Int("resources", 10, "resources per request")
	rev := flag.String("otlplite-rev", "", "also measure otlp-lite built at this git revision (e.g. main)")
	signals := flag.String("signals", "traces,metrics,logs", "the signals measured, in order")
	extra := flag.String("otlplite-args", "", "more arguments for otlp-lite serve (e.g. \"-admin-addr 127.0.0.1:18888 -admin-pprof\" to profile it)")
	target := flag.String("feed", "", "only feed the -signals to a server already listening on this address, -rounds times (to profile it)")
	flag.Parse()
	sigList, extraArgs = strings.Split(*signals, ","), strings.Fields(*extra)
	if *target != "" {
		if err := feedOnly(*target, *data, *per, *rounds); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if *contrib != "" {
		if err := serveContrib(*contrib); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(*data, *per, *rounds, *rev); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// streams are the batches of each signal, produced in order by one
// producer per signal, and the items they hold.
type streams struct {
	traces, metrics, logs             []*arrowpb.BatchArrowRecords
	traceItems, metricItems, logItems int
}

// only returns the streams of one signal.
func (s *streams) only(sig string) (*streams, int) {
	switch sig {
	case "traces":
		return &streams{traces: s.traces}, s.traceItems
	case "metrics":
		return &streams{metrics: s.metrics}, s.metricItems
	}
	return &streams{logs: s.logs}, s.logItems
}

// buildAt builds otlp-lite with -tags otelarrow at a git revision into
// bin, from a git archive of it in dir.
func buildAt(rev, dir, bin string) error {
	src := filepath.Join(dir, "src-"+rev)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	arch := exec.Command("sh", "-c", "git archive --format=tar "+rev+" | tar -x -C "+src)
	arch.Dir = "../.."
	if out, err := arch.CombinedOutput(); err != nil {
		return fmt.Errorf("git archive %s: %v\n%s", rev, err, out)
	}
	build := exec.Command("go", "build", "-tags", "otelarrow", "-o", bin, "./cmd/otlp-lite")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", rev, err, out)
	}
	return nil
}

// feedOnly feeds the -signals to a server at addr, rounds times.
func feedOnly(addr, data string, per, rounds int) error {
	s, err := load(data, per)
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	for range rounds {
		for _, sig := range sigList {
			one, _ := s.only(sig)
			if err := feed(conn, one); err != nil {
				return err
			}
		}
	}
	return nil
}

// sigList and extraArgs are the -signals and -otlplite-args flags.
var sigList, extraArgs []string

func run(data string, per, rounds int, rev string) error {
	s, err := load(data, per)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "arrowcpu-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "otlp-lite")
	build := exec.Command("go", "build", "-tags", "otelarrow", "-o", bin, "./cmd/otlp-lite")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Printf("data: %s, %d resources a request; %d traces, %d metrics, %d logs batches; %d spans, %d points, %d logs a round, %d rounds\n",
		data, per, len(s.traces), len(s.metrics), len(s.logs), s.traceItems, s.metricItems, s.logItems, rounds)
	type server struct {
		name string
		args func(addr string) *exec.Cmd
	}
	otlplite := func(bin string) func(string) *exec.Cmd {
		return func(addr string) *exec.Cmd {
			args := []string{"serve", "-grpc-addr", addr, "-http-addr", "", "-admin-addr", "", "-storage", "discard", "-log-level", "warn"}
			return exec.Command(bin, append(args, extraArgs...)...)
		}
	}
	servers := []server{
		{"otlp-lite", otlplite(bin)},
		{"contrib", func(addr string) *exec.Cmd { return exec.Command(self, "-serve-contrib", addr) }},
	}
	if rev != "" {
		old := filepath.Join(dir, "otlp-lite-"+rev)
		if err := buildAt(rev, dir, old); err != nil {
			return err
		}
		servers = append(servers, server{"otlp-lite@" + rev, otlplite(old)})
	}
	fmt.Println("servers: otlp-lite (this tree, -tags otelarrow -storage discard); contrib otelarrowreceiver v0.148.0 (default config, counting consumer)")
	fmt.Printf("%-8s", "signal")
	for _, srv := range servers {
		fmt.Printf("  %20s", srv.name+" ns/item")
	}
	fmt.Printf("  %s\n", "ratio to contrib")
	var total = make([]float64, len(servers))
	var all int
	for _, sig := range sigList {
		one, items := s.only(sig)
		all += items
		per := make([]float64, len(servers))
		// Servers alternate within each round, so a shift of the
		// machine's load falls on all of them.
		for range rounds {
			for i, srv := range servers {
				cpu, err := measure(srv.args, one, 1)
				if err != nil {
					return fmt.Errorf("%s %s: %w", srv.name, sig, err)
				}
				per[i] += float64(cpu.Nanoseconds())
				total[i] += float64(cpu.Nanoseconds())
			}
		}
		fmt.Printf("%-8s", sig)
		for i := range servers {
			fmt.Printf("  %20.0f", per[i]/float64(items*rounds))
		}
		for i := range servers {
			if i != 1 {
				fmt.Printf("  %s %.2fx", servers[i].name, per[i]/per[1])
			}
		}
		fmt.Println()
	}
	items := float64(all * rounds)
	fmt.Printf("%-8s", "all")
	for i := range servers {
		fmt.Printf("  %20.0f", total[i]/items)
	}
	for i := range servers {
		if i != 1 {
			fmt.Printf("  %s %.2fx", servers[i].name, total[i]/total[1])
		}
	}
	fmt.Println()
	return nil
}

// measure starts a server, waits for it to listen, sends every stream
// rounds times, and returns the CPU the server spent meanwhile.
func measure(cmdFor func(string) *exec.Cmd, s *streams, rounds int) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := cmdFor(addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("not listening on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	// A warm-up round, not measured.
	if err := feed(conn, s); err != nil {
		return 0, err
	}
	before, err := cpuOf(cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	for range rounds {
		if err := feed(conn, s); err != nil {
			return 0, err
		}
	}
	after, err := cpuOf(cmd.Process.Pid)
	return after - before, err
}

type arrowStream interface {
	Send(*arrowpb.BatchArrowRecords) error
	Recv() (*arrowpb.BatchStatus, error)
	CloseSend() error
}

// feed sends each signal's batches on a new stream of its own, the three
// at once, each with up to 8 batches unanswered, and requires OK for all.
func feed(conn *grpc.ClientConn, s *streams) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	errc := make(chan error, 3)
	n := 0
	for _, sig := range []struct {
		open func() (arrowStream, error)
		b    []*arrowpb.BatchArrowRecords
	}{
		{func() (arrowStream, error) { return arrowpb.NewArrowTracesServiceClient(conn).ArrowTraces(ctx) }, s.traces},
		{func() (arrowStream, error) { return arrowpb.NewArrowMetricsServiceClient(conn).ArrowMetrics(ctx) }, s.metrics},
		{func() (arrowStream, error) { return arrowpb.NewArrowLogsServiceClient(conn).ArrowLogs(ctx) }, s.logs},
	} {
		if len(sig.b) == 0 {
			continue
		}
		n++
		go func() {
			st, err := sig.open()
			if err != nil {
				errc <- err
				return
			}
			errc <- sendAll(st, sig.b)
		}()
	}
	for range n {
		if err := <-errc; err != nil {
			return err
		}
	}
	return nil
}

func sendAll(st arrowStream, batches []*arrowpb.BatchArrowRecords) error {
	slots := make(chan struct{}, 8)
	done := make(chan error, 1)
	go func() {
		for range batches {
			s, err := st.Recv()
			<-slots
			if err != nil {
				done <- err
				return
			}
			if s.StatusCode != arrowpb.StatusCode_OK {
				done <- fmt.Errorf("batch %d: %v %s", s.BatchId, s.StatusCode, s.StatusMessage)
				return
			}
		}
		done <- nil
	}()
	for _, b := range batches {
		select {
		case slots <- struct{}{}:
		case err := <-done:
			return err
		}
		if err := st.Send(b); err != nil {
			return err
		}
	}
	if err := <-done; err != nil {
		return err
	}
	st.CloseSend()
	if _, err := st.Recv(); err != io.EOF {
		return fmt.Errorf("stream end: %v", err)
	}
	return nil
}

// cpuOf returns a process's user+system CPU time.
func cpuOf(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100, nil // USER_HZ
}

func messages(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	br := bufio.NewReader(zr)
	var out [][]byte
	for {
		var n [4]byte
		if _, err := io.ReadFull(br, n[:]); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		buf := make([]byte, binary.BigEndian.Uint32(n[:]))
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, err
		}
		out = append(out, buf)
	}
}

// load cuts the demo traces and metrics into requests of per resources,
// makes logs of the spans, and produces each signal's stream.
func load(dir string, per int) (*streams, error) {
	s := &streams{}
	tm, err := messages(filepath.Join(dir, "hipstershop-oteltraces.zst"))
	if err != nil {
		return nil, err
	}
	tp, lp := arrow_record.NewProducer(), arrow_record.NewProducer()
	var tu ptrace.ProtoUnmarshaler
	for _, m := range tm {
		td, err := tu.UnmarshalTraces(m)
		if err != nil {
			return nil, err
		}
		for i := 0; i < td.ResourceSpans().Len(); i += per {
			req := ptrace.NewTraces()
			for j := i; j < min(i+per, td.ResourceSpans().Len()); j++ {
				td.ResourceSpans().At(j).CopyTo(req.ResourceSpans().AppendEmpty())
			}
			b, err := tp.BatchArrowRecordsFromTraces(req)
			if err != nil {
				return nil, err
			}
			s.traces = append(s.traces, b)
			ld := logsOf(req)
			lb, err := lp.BatchArrowRecordsFromLogs(ld)
			if err != nil {
				return nil, err
			}
			s.logs = append(s.logs, lb)
			s.traceItems += req.SpanCount()
			s.logItems += ld.LogRecordCount()
		}
	}
	mm, err := messages(filepath.Join(dir, "hipstershop-otelmetrics.zst"))
	if err != nil {
		return nil, err
	}
	mp := arrow_record.NewProducer()
	var mu pmetric.ProtoUnmarshaler
	for _, m := range mm {
		md, err := mu.UnmarshalMetrics(m)
		if err != nil {
			return nil, err
		}
		for i := 0; i < md.ResourceMetrics().Len(); i += per {
			req := pmetric.NewMetrics()
			for j := i; j < min(i+per, md.ResourceMetrics().Len()); j++ {
				md.ResourceMetrics().At(j).CopyTo(req.ResourceMetrics().AppendEmpty())
			}
			b, err := mp.BatchArrowRecordsFromMetrics(req)
			if err != nil {
				return nil, err
			}
			s.metrics = append(s.metrics, b)
			s.metricItems += req.DataPointCount()
		}
	}
	return s, nil
}

// logsOf makes one log record per span (the datasets have no logs).
func logsOf(td ptrace.Traces) plog.Logs {
	ld := plog.NewLogs()
	for i := range td.ResourceSpans().Len() {
		rs := td.ResourceSpans().At(i)
		rl := ld.ResourceLogs().AppendEmpty()
		rs.Resource().CopyTo(rl.Resource())
		for j := range rs.ScopeSpans().Len() {
			ss := rs.ScopeSpans().At(j)
			sl := rl.ScopeLogs().AppendEmpty()
			ss.Scope().CopyTo(sl.Scope())
			for k := range ss.Spans().Len() {
				sp := ss.Spans().At(k)
				lr := sl.LogRecords().AppendEmpty()
				lr.SetTimestamp(sp.EndTimestamp())
				lr.SetTraceID(sp.TraceID())
				lr.SetSpanID(sp.SpanID())
				lr.Body().SetStr(sp.Name())
				sp.Attributes().CopyTo(lr.Attributes())
			}
		}
	}
	return ld
}
