package interop

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
)

// selfSink keeps what the Collector's receiver delivers: each metric's
// type (and for sums, whether cumulative and monotonic; for histograms,
// the bounds of a point), and the log records as "SEVERITY body".
type selfSink struct {
	mu      sync.Mutex
	metrics map[string]string
	service string
	logs    []string
}

func (s *selfSink) consumeMetrics(_ context.Context, md pmetric.Metrics) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rm := range md.ResourceMetrics().All() {
		if v, ok := rm.Resource().Attributes().Get("service.name"); ok {
			s.service = v.Str()
		}
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				desc := m.Type().String()
				switch m.Type() {
				case pmetric.MetricTypeSum:
					desc += " " + m.Sum().AggregationTemporality().String()
					if m.Sum().IsMonotonic() {
						desc += " monotonic"
					}
				case pmetric.MetricTypeHistogram:
					desc += " " + m.Histogram().AggregationTemporality().String()
					if dps := m.Histogram().DataPoints(); dps.Len() > 0 {
						p := dps.At(0)
						if p.BucketCounts().Len() != p.ExplicitBounds().Len()+1 {
							desc += " bad-buckets"
						}
					}
				}
				s.metrics[m.Name()] = desc
			}
		}
	}
	return nil
}

func (s *selfSink) consumeLogs(_ context.Context, ld plog.Logs) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, r := range sl.LogRecords().All() {
				s.logs = append(s.logs, r.SeverityNumber().String()+" "+r.Body().Str())
			}
		}
	}
	return nil
}

// complete reports whether the sink has the metrics and the warning the
// test looks for.
func (s *selfSink) complete() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	for _, l := range s.logs {
		found = found || l == "Warn request refused"
	}
	return found && s.metrics["otlplite_requests_total"] != "" && s.metrics["otlplite_request_duration_seconds"] != ""
}

// startSelfCollector starts the Collector's OTLP receiver for metrics and
// logs on free ports, delivering to sink.
func startSelfCollector(t *testing.T, sink *selfSink) (grpcAddr, httpAddr string) {
	t.Helper()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	grpcAddr, httpAddr = freeAddr(t), freeAddr(t)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = grpcAddr
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = httpAddr
	set := receiver.Settings{ID: component.NewID(f.Type()), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo()}
	mc, err := consumer.NewMetrics(sink.consumeMetrics)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := consumer.NewLogs(sink.consumeLogs)
	if err != nil {
		t.Fatal(err)
	}
	mr, err := f.CreateMetrics(context.Background(), set, cfg, mc)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := f.CreateLogs(context.Background(), set, cfg, lc)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []component.Component{mr, lr} {
		if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			t.Fatalf("cannot start the Collector's OTLP receiver: %v", err)
		}
		t.Cleanup(func() { r.Shutdown(context.Background()) })
	}
	return grpcAddr, httpAddr
}

// TestSelfTelemetryToCollector: `otlp-lite serve -self-telemetry-endpoint`
// pushes its own metrics and its warnings to the Collector's OTLP
// receiver, over OTLP/gRPC and OTLP/HTTP; pdata reads every metric with
// its type (counters cumulative monotonic sums, histograms with one bucket
// more than bounds) and the refusal warning.
func TestSelfTelemetryToCollector(t *testing.T) {
	for _, scheme := range []string{"grpc", "http"} {
		t.Run(scheme, func(t *testing.T) {
			sink := &selfSink{metrics: map[string]string{}}
			grpcAddr, httpAddr := startSelfCollector(t, sink)
			endpoint := "grpc://" + grpcAddr
			if scheme == "http" {
				endpoint = "http://" + httpAddr
			}
			srv := startServer(t, t.TempDir(), "-self-telemetry-endpoint", endpoint, "-self-telemetry-interval", "100ms")
			// An undecodable request: a WARN "request refused".
			resp, err := http.Post("http://"+srv.addr+"/v1/logs", "application/x-protobuf", bytes.NewReader([]byte{0xff, 0xff}))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			deadline := time.Now().Add(20 * time.Second)
			for !sink.complete() {
				if time.Now().After(deadline) {
					sink.mu.Lock()
					t.Fatalf("the Collector did not get the self-telemetry: %d metrics, logs %q", len(sink.metrics), sink.logs)
				}
				time.Sleep(20 * time.Millisecond) // polling the sink
			}
			sink.mu.Lock()
			defer sink.mu.Unlock()
			for name, want := range map[string]string{
				"otlplite_requests_total":            "Sum Cumulative monotonic",
				"otlplite_admission_bytes_in_flight": "Gauge",
				"otlplite_request_duration_seconds":  "Histogram Cumulative",
				"go_gc_duration_seconds":             "Summary",
			} {
				if got := sink.metrics[name]; got != want {
					t.Errorf("%s arrived as %q, want %q", name, got, want)
				}
			}
			if sink.service != "otlp-lite" {
				t.Errorf("service.name %q", sink.service)
			}
			t.Logf("%d metrics and %d log records arrived", len(sink.metrics), len(sink.logs))
		})
	}
}
