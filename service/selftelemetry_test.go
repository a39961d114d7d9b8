package service_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/admin"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/otlpview"
	"github.com/otlp-lite/otlp-lite/service"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// metricValue sums the series of set that a selector list picks.
func metricValue(t *testing.T, set *metrics.Set, sel string) float64 {
	t.Helper()
	e, err := admin.Scrape(set)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Sum(sel)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitFor polls cond (a server's state, seen through its metrics) until
// it holds, or fails after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling a server's state, not synchronising with it
	}
}

// storedRecords reads every record of a signal of the disk log in dir.
func storedRecords(t *testing.T, dir string, sig storage.Signal) [][]byte {
	t.Helper()
	r := disk.NewReader(dir, sig, disk.Position{})
	defer r.Close()
	var out [][]byte
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(rec.Data))
	}
}

// selfMetric is what the test checks of a metric read back.
type selfMetric struct {
	typ       otlpview.MetricType
	monotonic bool
	temporal  otlpview.AggregationTemporality
	bounds    int
	service   string
}

// readSelfTelemetry decodes the metrics and logs stored in dir with our
// view decoder: metrics by name, log records as "SEVERITY body".
func readSelfTelemetry(t *testing.T, dir string) (map[string]selfMetric, []string) {
	t.Helper()
	got := map[string]selfMetric{}
	var md otlpview.MetricsDecoder
	for _, rec := range storedRecords(t, dir, storage.Metrics) {
		err := md.Decode(rec, func(res *otlpview.Resource, _ *otlpview.Scope, m *otlpview.Metric) error {
			sm := selfMetric{typ: m.Type, monotonic: m.IsMonotonic, temporal: m.AggregationTemporality}
			for it := res.Attributes.Iter(); it.Next(); {
				if kv := it.KeyValue(); kv.Key == "service.name" {
					sm.service = kv.Value.Str()
				}
			}
			if m.Type == otlpview.MetricTypeHistogram {
				for it := m.HistogramDataPoints(); it.Next(); {
					sm.bounds = len(it.Point().ExplicitBounds)
					if n := len(it.Point().BucketCounts); n != sm.bounds+1 {
						return fmt.Errorf("%s: %d bucket counts for %d bounds", m.Name, n, sm.bounds)
					}
				}
			}
			got[m.Name] = sm
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var logs []string
	var ld otlpview.LogsDecoder
	for _, rec := range storedRecords(t, dir, storage.Logs) {
		err := ld.Decode(rec, func(_ *otlpview.Resource, _ *otlpview.Scope, r *otlpview.LogRecord) error {
			logs = append(logs, r.SeverityText+" "+r.Body.Str())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return got, logs
}

// checkSelfTelemetry: the receiver's metrics arrived with their types,
// and the refusal warning.
func checkSelfTelemetry(t *testing.T, got map[string]selfMetric, logs []string) {
	t.Helper()
	for name, want := range map[string]selfMetric{
		"otlplite_requests_total":            {typ: otlpview.MetricTypeSum, monotonic: true, temporal: otlpview.AggregationTemporalityCumulative, service: "otlp-lite"},
		"otlplite_admission_bytes_in_flight": {typ: otlpview.MetricTypeGauge, service: "otlp-lite"},
		"otlplite_request_duration_seconds":  {typ: otlpview.MetricTypeHistogram, temporal: otlpview.AggregationTemporalityCumulative, bounds: 14, service: "otlp-lite"},
		"go_gc_duration_seconds":             {typ: otlpview.MetricTypeSummary, service: "otlp-lite"},
	} {
		if g, ok := got[name]; !ok || g != want {
			t.Errorf("%s read back as %+v (found %v), want %+v", name, g, ok, want)
		}
	}
	found := false
	for _, l := range logs {
		found = found || l == "WARN request refused"
	}
	if !found {
		t.Errorf("no WARN \"request refused\" among the %d log records read back: %q", len(logs), logs)
	}
}

// badRequest sends an undecodable OTLP/HTTP logs request: INVALID_ARGUMENT,
// logged at WARN ("request refused").
func badRequest(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/v1/logs", "application/x-protobuf", bytes.NewReader([]byte{0xff, 0xff}))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("undecodable request: HTTP %d", resp.StatusCode)
	}
}

// TestSelfTelemetryFullPipeline: with -self-telemetry-endpoint self, the
// receiver's own metrics and warnings are stored through its own
// pipeline even while a flood of stalled uploads holds the whole user
// admission budget (and an honest user request cannot get in): they are
// charged to the self tenant's reserve. Read back from the disk log, the
// metrics have their names and OTLP types, and the warning is there.
func TestSelfTelemetryFullPipeline(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.HTTPAddr = ""
	const limit = 256 << 10
	cfg.Admission.RequestLimit = limit
	cfg.BodyReadTimeout = time.Minute
	cfg.SelfTelemetry = service.SelfTelemetryConfig{Endpoint: "self", Interval: 50 * time.Millisecond}
	cfg.Metrics = metrics.NewSet()
	svc := start(t, cfg)
	addr := svc.GRPCAddr()
	badRequest(t, addr)

	// The flood: two uploads that declare 200 KiB, send 124 KiB each and
	// stall: 248 KiB of the 256 KiB budget held, for as long as they
	// like (-body-read-timeout).
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n", 200<<10)
		if _, err := c.Write(make([]byte, 124<<10)); err != nil {
			t.Fatal(err)
		}
	}
	set := svc.Metrics()
	full := func() bool { return metricValue(t, set, "otlplite_admission_bytes_in_flight") >= 248<<10 }
	waitFor(t, "the flood to hold the budget", full)
	// An honest request (about 30 KB) cannot get in now.
	honest := otlpclient.NewUnaryExporter(otlpclient.Config{Endpoint: addr, RequestTimeout: 300 * time.Millisecond})
	if err := honest.Export(context.Background(), otlpclient.NewSpanGenerator(200, 4, 1).AppendBatch(nil)); err == nil {
		t.Fatal("an honest request got in while the flood held the budget")
	}
	// Self-telemetry is stored meanwhile: metrics twice, and the logs.
	ok0 := metricValue(t, set, `otlplite_self_telemetry_exports_total{signal="metrics",result="ok"}`)
	waitFor(t, "self-telemetry stored with the budget full", func() bool {
		return metricValue(t, set, `otlplite_self_telemetry_exports_total{signal="metrics",result="ok"}`) >= ok0+2 &&
			metricValue(t, set, `otlplite_self_telemetry_exports_total{signal="logs",result="ok"}`) >= 1
	})
	if !full() {
		t.Fatal("the flood no longer holds the budget: the test proved nothing")
	}
	for _, c := range conns {
		c.Close()
	}
	shutdown(t, svc)
	got, logs := readSelfTelemetry(t, dir)
	checkSelfTelemetry(t, got, logs)
}

// TestSelfTelemetryToAnotherReceiver: self-telemetry over OTLP/HTTP and
// OTLP/gRPC (otlpclient) arrives in a second otlp-lite, which stores it
// like any client's.
func TestSelfTelemetryToAnotherReceiver(t *testing.T) {
	for _, scheme := range []string{"http", "grpc"} {
		t.Run(scheme, func(t *testing.T) {
			dirB := t.TempDir()
			b := start(t, testConfig(dirB))
			cfg := testConfig(t.TempDir())
			cfg.SelfTelemetry = service.SelfTelemetryConfig{Endpoint: scheme + "://" + b.GRPCAddr(), Interval: 50 * time.Millisecond}
			selfTelemetryArrives(t, start(t, cfg), b, dirB)
		})
	}
}

// selfTelemetryArrives makes a, which pushes its self-telemetry to b (whose
// data directory is dirB), log a warning, waits for a push of each signal,
// stops both and checks what b stored.
func selfTelemetryArrives(t *testing.T, a, b *service.Service, dirB string) {
	t.Helper()
	badRequest(t, a.GRPCAddr())
	set := a.Metrics()
	waitFor(t, "self-telemetry sent", func() bool {
		return metricValue(t, set, `otlplite_self_telemetry_exports_total{signal="metrics",result="ok"}`) >= 1 &&
			metricValue(t, set, `otlplite_self_telemetry_exports_total{signal="logs",result="ok"}`) >= 1
	})
	shutdown(t, a)
	shutdown(t, b)
	got, logs := readSelfTelemetry(t, dirB)
	checkSelfTelemetry(t, got, logs)
}

// TestSelfTelemetryOverSocketWithToken: the endpoint is a destination URL
// as -forward's: self-telemetry reaches a receiver that listens on a Unix
// socket and wants a bearer token, sending it in a header= parameter, and
// no output shows the token.
func TestSelfTelemetryOverSocketWithToken(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("self-secret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "b.sock")
	dirB := filepath.Join(dir, "b")
	cfgB := testConfig(dirB)
	cfgB.GRPCAddr, cfgB.AuthTokenFile = "unix:"+sock, tokens
	b := start(t, cfgB)
	var logs syncBuffer
	cfg := testConfig(filepath.Join(dir, "a"))
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.SelfTelemetry = service.SelfTelemetryConfig{Endpoint: "grpc://unix:" + sock + "?header=Authorization:Bearer%20self-secret-token&compression=zstd", Interval: 50 * time.Millisecond}
	selfTelemetryArrives(t, start(t, cfg), b, dirB)
	if strings.Contains(logs.String(), "self-secret-token") {
		t.Errorf("the token is in the sender's logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "grpc://unix:"+sock) {
		t.Errorf("the endpoint is not in the sender's logs:\n%s", logs.String())
	}
}

// TestSelfTelemetryEndpointChecked: a bad endpoint is refused before
// anything starts, naming the flag and no secret of the URL.
func TestSelfTelemetryEndpointChecked(t *testing.T) {
	for _, bad := range []string{"ftp://x:1", "localhost:4317", "http://", "stream://x:1", "grpc://x:1?signals=logs",
		"grpc://x:1?inflight=2", "http://x:1?header=Authorization:Bearer%20hush&bogus=1", "grpc://x:1?tls-ca=/nonexistent"} {
		cfg := testConfig(t.TempDir())
		cfg.SelfTelemetry.Endpoint = bad
		_, err := service.New(cfg)
		if err == nil || !strings.Contains(err.Error(), "-self-telemetry-endpoint") {
			t.Errorf("%q: %v", bad, err)
		} else if strings.Contains(err.Error(), "hush") {
			t.Errorf("%q: the error shows the token: %v", bad, err)
		}
	}
}

// TestSelfTelemetryTenant: with tenancy on, what self-telemetry stores
// through the pipeline is the reserved tenant _self's.
func TestSelfTelemetryTenant(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.Tenants.Header = "X-Scope-OrgID"
	cfg.SelfTelemetry = service.SelfTelemetryConfig{Endpoint: "self", Interval: 50 * time.Millisecond}
	svc := start(t, cfg)
	set := svc.Metrics()
	waitFor(t, "self-telemetry stored", func() bool {
		return metricValue(t, set, `otlplite_self_telemetry_exports_total{signal="metrics",result="ok"}`) >= 1
	})
	shutdown(t, svc)
	ts, err := disk.ReadTenantStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ts["_self"][storage.Metrics].Records == 0 || len(ts) != 1 {
		t.Fatalf("tenants stored: %v, want _self's metrics only", ts)
	}
}
