package interop

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/testdata"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// startServerAt starts `otlp-lite serve` with args (its listeners among
// them) and waits until the gRPC health check at target (a grpc-go
// target: host:port or unix:///path) answers SERVING.
func startServerAt(t *testing.T, dataDir, target string, args ...string) *server {
	t.Helper()
	s := &server{t: t, addr: target, dataDir: dataDir, stderr: &syncBuffer{}, done: make(chan struct{})}
	args = append([]string{"serve", "-http-addr", "", "-admin-addr", "", "-data-dir", dataDir, "-storage", "disk"}, args...)
	s.cmd = exec.Command(serverBin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.stderr, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("otlp-lite %s stderr:\n%s", strings.Join(args, " "), s.stderr.String())
		}
	})
	if err := s.waitReady(); err != nil {
		t.Fatal(err)
	}
	return s
}

// socketPath is a Unix socket path short enough for sun_path (t.TempDir()
// can be long), removed with the test.
func socketPath(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "otlp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, name)
}

// TestGoSDKOverUnixSocket: the OpenTelemetry Go SDK's gRPC exporters reach
// otlp-lite on a Unix socket (grpc-go's unix:// target), and its OTLP/HTTP
// exporter on another one through an http.Client that dials it; every
// request is stored as sent and every value set through the API is found.
// The sockets have -unix-socket-mode and are gone after a clean stop.
func TestGoSDKOverUnixSocket(t *testing.T) {
	dataDir := t.TempDir()
	sock, httpSock := socketPath(t, "grpc.sock"), socketPath(t, "http.sock")
	srv := startServerAt(t, dataDir, "unix://"+sock, "-grpc-addr", "unix:"+sock, "-http-addr", "unix:"+httpSock,
		"-unix-socket-mode", "0600", "-log-level", "debug")
	for _, p := range []string{sock, httpSock} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
			t.Fatalf("%s: %v %v, want a socket with mode 0600", p, fi, err)
		}
	}
	run := fmt.Sprintf("go-unix-%d", time.Now().UnixNano())
	res := resource.NewSchemaless(attribute.String("service.name", "otlp-lite-interop-go"), attribute.String("interop.run", run),
		attribute.Int64("interop.pid", 4242))
	capt := newCapture()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := sendGoTraces(ctx, t, srv.addr, "gzip", res, capt)
	sendGoMetrics(ctx, t, srv.addr, "none", res, capt)
	sendGoLogs(ctx, t, srv.addr, "none", res, capt, want)

	// OTLP/HTTP on the other socket: the exporter's client dials it.
	httpClient := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", httpSock)
	}}}
	hexp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint("localhost"), otlptracehttp.WithInsecure(),
		otlptracehttp.WithHTTPClient(httpClient), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	httpWant := emitGoTraces(ctx, t, hexp, res)
	srv.stop()

	if len(capt.failures) > 0 || len(capt.partial) > 0 || len(capt.traces) == 0 {
		t.Fatalf("exports over the socket: %s", capt.summary())
	}
	storedTraces := scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	storedMetrics := scanStore(t, dataDir, storage.Metrics, func() *colmetricspb.ExportMetricsServiceRequest { return new(colmetricspb.ExportMetricsServiceRequest) })
	storedLogs := scanStore(t, dataDir, storage.Logs, func() *collogspb.ExportLogsServiceRequest { return new(collogspb.ExportLogsServiceRequest) })
	// The gRPC requests are stored as sent, then the HTTP ones.
	matchMessages(t, "traces", capt.traces, storedTraces[:len(capt.traces)])
	matchMessages(t, "metrics", capt.metrics, storedMetrics)
	matchMessages(t, "logs", capt.logs, storedLogs)
	checkGoTraces(t, run, want, storedTraces[:len(capt.traces)])
	checkGoTraces(t, run, httpWant, storedTraces[len(capt.traces):])
	checkGoMetrics(t, run, storedMetrics)
	checkGoLogs(t, run, want, storedLogs)

	// The request log names each client by its process and connection.
	peer := regexp.MustCompile(`peer=unix:pid:` + fmt.Sprint(os.Getpid()) + `,uid:\d+,conn:\d+ transport=(grpc|http)`)
	if n := len(peer.FindAllString(srv.stderr.String(), -1)); n < len(capt.traces)+len(capt.metrics)+len(capt.logs) {
		t.Errorf("%d request log lines name the Unix client by its process, want one per request", n)
	}
	for _, p := range []string{sock, httpSock} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s after a clean stop: %v, want it removed", p, err)
		}
	}
}

// collectorExporter starts the Collector's otlphttp or otlp exporter for
// every signal towards endpoint with compression comp, without a sending
// queue (Consume* returns once the receiver answered).
func collectorExporter(t *testing.T, kind, endpoint string, comp configcompression.Type) (exporter.Traces, exporter.Metrics, exporter.Logs, error) {
	t.Helper()
	var f exporter.Factory
	var cfg component.Config
	switch kind {
	case "otlphttp":
		f = otlphttpexporter.NewFactory()
		c := f.CreateDefaultConfig().(*otlphttpexporter.Config)
		c.ClientConfig.Endpoint = "http://" + endpoint
		c.ClientConfig.Compression = comp
		c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
		cfg = c
	case "otlp":
		f = otlpexporter.NewFactory()
		c := f.CreateDefaultConfig().(*otlpexporter.Config)
		c.ClientConfig.Endpoint = endpoint
		c.ClientConfig.TLS.Insecure = true
		c.ClientConfig.Compression = comp
		c.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
		cfg = c
	}
	ctx := context.Background()
	set := exporter.Settings{ID: component.NewID(f.Type()), TelemetrySettings: collectorTelemetry(), BuildInfo: component.NewDefaultBuildInfo()}
	te, err := f.CreateTraces(ctx, set, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	me, err := f.CreateMetrics(ctx, set, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	le, err := f.CreateLogs(ctx, set, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, c := range []component.Component{te, me, le} {
		if err := c.Start(ctx, nopHost{}); err != nil {
			return nil, nil, nil, err
		}
		t.Cleanup(func() { c.Shutdown(context.Background()) })
	}
	return te, me, le, nil
}

// TestCollectorLZ4: the Collector's otlphttpexporter with compression: lz4
// (confighttp's LZ4 frames, pierrec/lz4) sends traces, metrics and logs;
// every request is stored exactly as pdata marshals it. Its otlpexporter
// refuses lz4 itself (configgrpc has no lz4), as otlp-lite refuses
// grpc-encoding lz4.
func TestCollectorLZ4(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServerHTTP(t, dataDir)
	te, me, le, err := collectorExporter(t, "otlphttp", srv.httpAddr, configcompression.TypeLz4)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var sentT []*coltracepb.ExportTraceServiceRequest
	var sentM []*colmetricspb.ExportMetricsServiceRequest
	var sentL []*collogspb.ExportLogsServiceRequest
	for _, n := range []int{1, 50, 2000} { // 2000 spans: several LZ4 blocks' worth of matches
		td, md, ld := validTraces(n), testdata.GenerateMetrics(n), testdata.GenerateLogs(n)
		sentT = append(sentT, asProto(t, td, (&ptrace.ProtoMarshaler{}).MarshalTraces, new(coltracepb.ExportTraceServiceRequest)))
		sentM = append(sentM, asProto(t, md, (&pmetric.ProtoMarshaler{}).MarshalMetrics, new(colmetricspb.ExportMetricsServiceRequest)))
		sentL = append(sentL, asProto(t, ld, (&plog.ProtoMarshaler{}).MarshalLogs, new(collogspb.ExportLogsServiceRequest)))
		if err := te.ConsumeTraces(ctx, td); err != nil {
			t.Fatalf("lz4 traces (%d): %v", n, err)
		}
		if err := me.ConsumeMetrics(ctx, md); err != nil {
			t.Fatalf("lz4 metrics (%d): %v", n, err)
		}
		if err := le.ConsumeLogs(ctx, ld); err != nil {
			t.Fatalf("lz4 logs (%d): %v", n, err)
		}
	}
	srv.stop()
	matchMessages(t, "lz4 traces", sentT, scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }))
	matchMessages(t, "lz4 metrics", sentM, scanStore(t, dataDir, storage.Metrics, func() *colmetricspb.ExportMetricsServiceRequest { return new(colmetricspb.ExportMetricsServiceRequest) }))
	matchMessages(t, "lz4 logs", sentL, scanStore(t, dataDir, storage.Logs, func() *collogspb.ExportLogsServiceRequest { return new(collogspb.ExportLogsServiceRequest) }))

	if _, _, _, err := collectorExporter(t, "otlp", srv.addr, configcompression.TypeLz4); err == nil {
		t.Log("the Collector's otlpexporter accepted compression lz4: grpc-encoding lz4 may now be worth serving")
	}
}

// asProto marshals pdata with marshal and parses it into m with the
// official generated types.
func asProto[P any, M proto.Message](t *testing.T, pd P, marshal func(P) ([]byte, error), m M) M {
	t.Helper()
	b, err := marshal(pd)
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// validTraces is pdata's test traces with every span given a trace and a
// span ID, and every link too (the generator leaves some empty, which
// otlp-lite refuses as invalid items and the comparison would miss).
func validTraces(n int) ptrace.Traces {
	td := testdata.GenerateTraces(n)
	k := 0
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				k++
				sp.SetTraceID(pcommon.TraceID{1, 2, 3, byte(k >> 8), byte(k)})
				sp.SetSpanID(pcommon.SpanID{4, 5, byte(k >> 8), byte(k)})
				for _, l := range sp.Links().All() {
					l.SetTraceID(pcommon.TraceID{6, 7})
					l.SetSpanID(pcommon.SpanID{8, 9})
				}
			}
		}
	}
	return td
}

// TestUnixSocketAfterCrash: a binary killed with SIGKILL leaves its socket
// file; the next start takes it over (nobody answers on it), while a
// second binary started beside a live one is refused, naming the socket.
func TestUnixSocketAfterCrash(t *testing.T) {
	sock := socketPath(t, "otlp.sock")
	first := startServerAt(t, t.TempDir(), "unix://"+sock, "-grpc-addr", "unix:"+sock)
	first.kill()
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("after SIGKILL: %v, %v; want the stale socket left behind", fi, err)
	}
	second := startServerAt(t, t.TempDir(), "unix://"+sock, "-grpc-addr", "unix:"+sock)
	out, err := exec.Command(serverBin, "serve", "-grpc-addr", "unix:"+sock, "-http-addr", "", "-admin-addr", "",
		"-data-dir", t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use") {
		t.Fatalf("a second server on a live socket: %v\n%s", err, out)
	}
	second.stop()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("after a clean stop: %v, want the socket removed", err)
	}
}
