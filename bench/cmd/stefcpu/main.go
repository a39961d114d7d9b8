// Command stefcpu measures the server CPU per data point of otlp-lite's
// STEF/gRPC receiver against the Collector's own (contrib stefreceiver
// v0.148.0, run as a library with a consumer that counts points), fed the
// same STEF stream over gRPC in one run:
//
//	go run ./cmd/stefcpu -file ../../shared/datasets/hipstershop-otelmetrics.zst
//
// Each server runs in a process of its own (otlp-lite: the binary built
// from this tree with -storage discard; contrib: this command with
// -serve-contrib), so the CPU it spends is read from /proc alone, without
// the client's. The client cuts the dataset into requests as an SDK sends
// them (one resource's metrics per request), writes them with the STEF
// library's writer (otelstef, with its zstd unless -zstd=false) through the
// library's gRPC client, flushing after each request, and waits for the
// acknowledgement of the last record (with -backlog, it encodes every
// request first and sends them at once: the server finds frames waiting).
// Rounds alternate between the servers;
// the figure is the median per server.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	contribstef "github.com/open-telemetry/opentelemetry-collector-contrib/receiver/stefreceiver"
	stefgrpc "github.com/splunk/stef/go/grpc"
	"github.com/splunk/stef/go/grpc/stef_proto"
	"github.com/splunk/stef/go/otel/otelstef"
	stefmetrics "github.com/splunk/stef/go/pdata/metrics"
	"github.com/splunk/stef/go/pkg"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/otlp-lite/otlp-lite/bench/internal/benchnet"
	"github.com/otlp-lite/otlp-lite/bench/internal/cputime"
	"github.com/otlp-lite/otlp-lite/bench/internal/dataset"
)

func main() {
	file := flag.String("file", "../../shared/datasets/hipstershop-otelmetrics.zst", "metrics dataset file")
	rounds := flag.Int("rounds", 3, "rounds per server (alternating)")
	zstdOn := flag.Bool("zstd", true, "the STEF writer's zstd compression")
	repeat := flag.Int("repeat", 3, "send the dataset this many times per round")
	backlog := flag.Bool("backlog", false, "encode every request of a stream before sending any, then send them at once, as an exporter drains a queue that filled while its backend was away (the server finds frames waiting; default: each request is encoded and sent in turn, the client's pace)")
	batch := flag.Int("batch", 0, "cut the dataset into requests of this many points, as a batch processor sends them (0: one resource's metrics per request, as an SDK sends them)")
	serveContrib := flag.String("serve-contrib", "", "internal: serve the contrib receiver on this address until stdin closes")
	bin := flag.String("otlp-lite", "", "the otlp-lite binary (default: built from this tree)")
	rev := flag.String("otlplite-rev", "", "also build otlp-lite at this git revision of its repository (git archive) and run it as \"otlp-lite@REV\" in each round beside this tree's, e.g. main before a change")
	profile := flag.String("profile", "", "write a 10-second CPU profile of otlp-lite's first round to this file (its admin port serves /debug/pprof)")
	flag.Parse()
	if *serveContrib != "" {
		serveContribReceiver(*serveContrib)
		return
	}
	records, err := dataset.Read(*file)
	if err != nil {
		log.Fatal(err)
	}
	items, byResource, shape := 1<<30, true, "one resource's metrics"
	if *batch > 0 {
		items, byResource, shape = *batch, false, fmt.Sprintf("about %d points", *batch)
	}
	reqs, err := dataset.Cut(records, true, items, byResource)
	if err != nil {
		log.Fatal(err)
	}
	total := 0
	var mds []pmetric.Metrics
	for _, r := range reqs {
		total += r.Items
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(r.Proto)
		if err != nil {
			log.Fatal(err)
		}
		mds = append(mds, md)
	}
	dir, err := os.MkdirTemp("", "stefcpu")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if *bin == "" {
		*bin = filepath.Join(dir, "otlp-lite")
		if err := build(*bin, ".."); err != nil {
			log.Fatal(err)
		}
	}
	revBin := ""
	if *rev != "" {
		// The revision's tree, unpacked beside the binary, built as this
		// tree's is.
		src := filepath.Join(dir, "src")
		if err := os.MkdirAll(src, 0o755); err != nil {
			log.Fatal(err)
		}
		archive := exec.Command("sh", "-c", `git -C .. archive "$1" | tar -x -C "$2"`, "sh", *rev, src)
		archive.Stderr = os.Stderr
		if err := archive.Run(); err != nil {
			log.Fatalf("cannot unpack otlp-lite at %s: %v", *rev, err)
		}
		revBin = filepath.Join(dir, "otlp-lite-rev")
		if err := build(revBin, src); err != nil {
			log.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	comp := pkg.CompressionNone
	if *zstdOn {
		comp = pkg.CompressionZstd
	}
	serveArgs := func(bin string) func(addr, admin string) []string {
		return func(addr, admin string) []string {
			return []string{bin, "serve", "-grpc-addr", addr, "-http-addr", "", "-admin-addr", admin, "-admin-pprof",
				"-storage", "discard", "-log-level", "warn"}
		}
	}
	type server struct {
		name    string
		args    func(addr, admin string) []string
		profile string
	}
	servers := []server{
		{"contrib stefreceiver v0.148.0", func(addr, _ string) []string {
			return []string{self, "-serve-contrib", addr}
		}, ""},
		{"otlp-lite", serveArgs(*bin), *profile},
	}
	if revBin != "" {
		servers = append(servers, server{"otlp-lite@" + *rev, serveArgs(revBin), ""})
	}
	samples := make([][]float64, len(servers))
	points := int64(total) * int64(*repeat)
	for round := range *rounds {
		for i, s := range servers {
			prof := s.profile
			if round > 0 {
				prof = ""
			}
			us, requests, err := measure(s.args, mds, comp, *repeat, prof, *backlog)
			if err != nil {
				log.Fatalf("%s: %v", s.name, err)
			}
			nsPerPoint := us * 1e3 / float64(points)
			samples[i] = append(samples[i], nsPerPoint)
			if i == 0 {
				log.Printf("round %d %s: %.0f ns/point", round+1, s.name, nsPerPoint)
			} else {
				// How many frames each pipeline request carried: the
				// per-request work (admission, the sink) is paid per request.
				log.Printf("round %d %s: %.0f ns/point, %d pipeline requests for %d frames", round+1, s.name, nsPerPoint, requests, len(mds)*(*repeat))
			}
		}
	}
	fmt.Printf("Command: `cd bench && go run ./cmd/stefcpu %s`\n\n", strings.Join(os.Args[1:], " "))
	pace := "each encoded and sent in turn"
	if *backlog {
		pace = "all encoded, then sent at once (a backlog)"
	}
	fmt.Printf("%s, %d requests of %s (%d points), %s, sent %d times per round on one STEF stream (zstd: %v), %d rounds; server CPU per point (user+system, /proc), median:\n\n",
		filepath.Base(*file), len(reqs), shape, total, pace, *repeat, *zstdOn, *rounds)
	fmt.Printf("| server | CPU ns/point | vs contrib |\n|---|---|---|\n")
	base := median(samples[0])
	for i, s := range servers {
		fmt.Printf("| %s | %.0f | %.2fx |\n", s.name, median(samples[i]), median(samples[i])/base)
	}
	if revBin != "" {
		// Round by round: the rounds share the machine's state.
		fmt.Printf("\notlp-lite against otlp-lite@%s, round by round:", *rev)
		for r := range samples[1] {
			fmt.Printf(" %.2fx", samples[1][r]/samples[2][r])
		}
		fmt.Println()
	}
}

// build builds otlp-lite from the module in dir to bin.
func build(bin, dir string) error {
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/otlp-lite")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

// measure starts a server, sends the requests on one STEF stream, waits
// for the last record's acknowledgement, and returns the server's CPU
// microseconds from before the stream to after it, and (otlp-lite) the
// STEF requests its pipeline answered, read from its admin port's
// /metrics after the CPU.
func measure(args func(addr, admin string) []string, mds []pmetric.Metrics, comp pkg.Compression, repeat int, profile string, backlog bool) (us float64, requests int64, err error) {
	port, err := benchnet.FreePort()
	if err != nil {
		return 0, 0, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if port, err = benchnet.FreePort(); err != nil {
		return 0, 0, err
	}
	admin := fmt.Sprintf("127.0.0.1:%d", port)
	a := args(addr, admin)
	cmd := exec.Command(a[0], a[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		stdin.Close()
		cmd.Process.Signal(os.Interrupt)
		<-exited
	}()
	if err := benchnet.WaitListening(addr, exited, 20*time.Second); err != nil {
		return 0, 0, err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	profiled := make(chan error, 1)
	before, err := cpuMicros(cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	if profile != "" {
		go func() { profiled <- fetchProfile(admin, 10, profile) }()
	} else {
		profiled <- nil
	}
	for range repeat {
		if err := sendStream(ctx, conn, mds, comp, backlog); err != nil {
			return 0, 0, err
		}
	}
	after, err := cpuMicros(cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	if err := <-profiled; err != nil {
		return 0, 0, err
	}
	return after - before, stefRequests(admin), nil
}

// sendStream sends the requests on one STEF stream (a server rotates a
// stream after its bound of decoded bytes, so each repeat has its own) and
// waits for the last record's acknowledgement.
func sendStream(ctx context.Context, conn *grpc.ClientConn, mds []pmetric.Metrics, comp pkg.Compression, backlog bool) error {
	var acked atomic.Uint64
	ackCh := make(chan struct{}, 1)
	ws, err := otelstef.MetricsWireSchema()
	if err != nil {
		return err
	}
	client, err := stefgrpc.NewClient(stefgrpc.ClientSettings{
		GrpcClient:   stef_proto.NewSTEFDestinationClient(conn),
		ClientSchema: stefgrpc.ClientSchema{RootStructName: otelstef.MetricsStructName, WireSchema: &ws},
		Callbacks: stefgrpc.ClientCallbacks{
			OnAck: func(id uint64) error {
				acked.Store(id)
				select {
				case ackCh <- struct{}{}:
				default:
				}
				return nil
			},
		},
	})
	if err != nil {
		return err
	}
	defer client.Disconnect(ctx)
	cw, opts, err := client.Connect(ctx)
	if err != nil {
		return err
	}
	opts.Compression = comp
	dst := pkg.ChunkWriter(cw)
	var held heldChunks
	if backlog {
		dst = &held
	}
	w, err := otelstef.NewMetricsWriter(dst, opts)
	if err != nil {
		return err
	}
	conv := stefmetrics.OtlpToStefUnsorted{}
	for _, md := range mds {
		if err := conv.Convert(md, w); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	for _, c := range held {
		if err := cw.WriteChunk(nil, c); err != nil {
			return err
		}
	}
	last := w.RecordCount()
	for acked.Load() < last {
		select {
		case <-ackCh:
		case <-ctx.Done():
			return fmt.Errorf("acknowledged %d of %d records", acked.Load(), last)
		}
	}
	return nil
}

// heldChunks keeps the chunks a writer makes (-backlog), each a header or
// a frame, to be sent later in order.
type heldChunks [][]byte

func (h *heldChunks) WriteChunk(header, content []byte) error {
	*h = append(*h, append(append([]byte(nil), header...), content...))
	return nil
}

// stefRequests reads the STEF requests otlp-lite's pipeline answered from
// its admin port's /metrics (0 where there is none: contrib).
func stefRequests(admin string) int64 {
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var n int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "otlplite_requests_total{") && strings.Contains(line, `transport="stef"`) {
			var v float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			n += int64(v)
		}
	}
	return n
}

func fetchProfile(addr string, seconds int, file string) error {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds))
	if err != nil {
		return fmt.Errorf("cannot profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("cannot profile: %s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// cpuMicros reads a process's user+system CPU, in µs.
func cpuMicros(pid int) (float64, error) {
	s, err := cputime.ProcessSeconds(pid)
	return s * 1e6, err
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// serveContribReceiver runs the contrib stefreceiver with a consumer that
// counts points, until stdin closes, then prints the count.
func serveContribReceiver(addr string) {
	var n atomic.Int64
	sink, err := consumer.NewMetrics(func(_ context.Context, md pmetric.Metrics) error {
		n.Add(int64(md.DataPointCount()))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	f := contribstef.NewFactory()
	cfg := f.CreateDefaultConfig().(*contribstef.Config)
	cfg.NetAddr.Endpoint = addr
	ctx := context.Background()
	r, err := f.CreateMetrics(ctx, receivertest.NewNopSettings(component.MustNewType("stef")), cfg, sink)
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Start(ctx, componenttest.NewNopHost()); err != nil {
		log.Fatal(err)
	}
	bufio.NewReader(os.Stdin).ReadString(0) // until stdin closes
	r.Shutdown(ctx)
	fmt.Fprintf(os.Stderr, "contrib stefreceiver: %d points\n", n.Load())
}
