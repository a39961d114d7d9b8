package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// kafkaTopics are otlp-lite's default topics, those of the OpenTelemetry
// Collector's kafkareceiver.
var kafkaTopics = map[string]string{
	"traces":  "otlp_spans",
	"metrics": "otlp_metrics",
	"logs":    "otlp_logs",
}

// TestKafka runs the Go SDK (gRPC exporters, gzip) and the OTLP/HTTP
// exporters through `otlp-lite serve -storage kafka` and reads the default
// topics back with a franz-go consumer: every acknowledged request must be
// one record on its signal's topic, in the collector's otlp_proto encoding
// (the Export*ServiceRequest bytes), identical (proto.Equal) to what the
// exporter sent, and every value set through the API must be found in its
// OTLP field (TestGoSDK's checks). The broker is the one
// scripts/kafka/test.sh starts; without OTLP_LITE_KAFKA_BROKERS the test is
// skipped. Records of earlier runs on the same topics are told apart by the
// resource attribute interop.run.
func TestKafka(t *testing.T) {
	brokers := os.Getenv("OTLP_LITE_KAFKA_BROKERS")
	if brokers == "" {
		t.Skip("OTLP_LITE_KAFKA_BROKERS is not set; scripts/kafka/test.sh (make kafka-test) starts a broker and sets it")
	}
	// A long produce timeout: the first write to a topic on a broker
	// just started can take more than the 5 s default on a loaded CI
	// machine, and this test is about what arrives, not when.
	srv := startServerHTTP(t, t.TempDir(), "-storage", "kafka", "-kafka-brokers", brokers, "-kafka-produce-timeout", "30s")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// gRPC exporters.
	runGRPC := fmt.Sprintf("kafka-grpc-%d", time.Now().UnixNano())
	capt := newCapture()
	res := kafkaResource(runGRPC)
	want := sendGoTraces(ctx, t, srv.addr, "gzip", res, capt)
	sendGoMetrics(ctx, t, srv.addr, "gzip", res, capt)
	sendGoLogs(ctx, t, srv.addr, "gzip", res, capt, want)
	if s := capt.summary(); len(capt.failures) > 0 || len(capt.partial) > 0 || len(capt.traces) == 0 || len(capt.metrics) == 0 || len(capt.logs) == 0 {
		t.Fatalf("gRPC exports were not all fully successful: %s", s)
	}

	// OTLP/HTTP exporters, to the HTTP port.
	runHTTP := fmt.Sprintf("kafka-http-%d", time.Now().UnixNano())
	hcapt := newHTTPCapture()
	defer hcapt.close()
	wantHTTP := sendGoHTTP(ctx, t, srv.httpAddr, "gzip", false, kafkaResource(runHTTP), hcapt)
	if s := hcapt.summary(); len(hcapt.failures) > 0 || len(hcapt.partial) > 0 || len(hcapt.traces) == 0 || len(hcapt.metrics) == 0 || len(hcapt.logs) == 0 {
		t.Fatalf("OTLP/HTTP exports were not all fully successful: %s", s)
	}
	srv.stop()

	runs := map[string]bool{runGRPC: true, runHTTP: true}
	got := consumeRuns(t, strings.Split(brokers, ","), runs,
		len(capt.traces)+len(hcapt.traces), len(capt.metrics)+len(hcapt.metrics), len(capt.logs)+len(hcapt.logs))

	for _, c := range []struct {
		run string
		tw  goWant
		tr  []*coltracepb.ExportTraceServiceRequest
		me  []*colmetricspb.ExportMetricsServiceRequest
		lo  []*collogspb.ExportLogsServiceRequest
	}{
		{runGRPC, want, capt.traces, capt.metrics, capt.logs},
		{runHTTP, wantHTTP, hcapt.traces, hcapt.metrics, hcapt.logs},
	} {
		traces := filterRun(got.traces, c.run)
		metrics := filterRun(got.metrics, c.run)
		logs := filterRun(got.logs, c.run)
		matchMessages(t, c.run+" traces", c.tr, traces)
		matchMessages(t, c.run+" metrics", c.me, metrics)
		matchMessages(t, c.run+" logs", c.lo, logs)
		checkGoTraces(t, c.run, c.tw, traces)
		checkGoMetrics(t, c.run, metrics)
		checkGoLogs(t, c.run, c.tw, logs)
	}
}

func kafkaResource(run string) *resource.Resource {
	return resource.NewSchemaless(
		attribute.String("service.name", "otlp-lite-interop-go"),
		attribute.String("interop.run", run),
		attribute.Int64("interop.pid", 4242),
	)
}

// kafkaRecords are the records of this test's runs, parsed.
type kafkaRecords struct {
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricspb.ExportMetricsServiceRequest
	logs    []*collogspb.ExportLogsServiceRequest
}

// consumeRuns reads the three default topics from the start and keeps the
// records whose resources belong to runs, until it holds the number wanted
// of each signal, then reads two seconds more so that a duplicate would be
// seen too. Every record of the runs must parse and sit on its signal's
// topic.
func consumeRuns(t *testing.T, brokers []string, runs map[string]bool, nTraces, nMetrics, nLogs int) *kafkaRecords {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumeTopics(kafkaTopics["traces"], kafkaTopics["metrics"], kafkaTopics["logs"]),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := &kafkaRecords{}
	all := 0
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var extra context.Context
	for {
		pollCtx := ctx
		if extra != nil {
			pollCtx = extra
		}
		fs := cl.PollFetches(pollCtx)
		if pollCtx.Err() != nil {
			break
		}
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				t.Errorf("consume %s/%d: %v", topic, p, err)
			}
		})
		for _, r := range fs.Records() {
			all++
			var m proto.Message
			switch r.Topic {
			case kafkaTopics["traces"]:
				m = new(coltracepb.ExportTraceServiceRequest)
			case kafkaTopics["metrics"]:
				m = new(colmetricspb.ExportMetricsServiceRequest)
			default:
				m = new(collogspb.ExportLogsServiceRequest)
			}
			if err := proto.Unmarshal(r.Value, m); err != nil {
				// Records of earlier runs, or of other tests, are the
				// server's too: none may be damaged.
				t.Errorf("record %s/%d@%d does not parse as %T: %v", r.Topic, r.Partition, r.Offset, m, err)
				continue
			}
			if !runs[recordRun(m)] {
				continue
			}
			switch m := m.(type) {
			case *coltracepb.ExportTraceServiceRequest:
				got.traces = append(got.traces, m)
			case *colmetricspb.ExportMetricsServiceRequest:
				got.metrics = append(got.metrics, m)
			case *collogspb.ExportLogsServiceRequest:
				got.logs = append(got.logs, m)
			}
		}
		if extra == nil && len(got.traces) >= nTraces && len(got.metrics) >= nMetrics && len(got.logs) >= nLogs {
			var cancelExtra context.CancelFunc
			extra, cancelExtra = context.WithTimeout(ctx, 2*time.Second)
			defer cancelExtra()
		}
	}
	if extra == nil {
		t.Errorf("after 60 s the topics held %d/%d traces, %d/%d metrics, %d/%d logs requests of this run (%d records read)",
			len(got.traces), nTraces, len(got.metrics), nMetrics, len(got.logs), nLogs, all)
	}
	t.Logf("read %d records, %d traces, %d metrics and %d logs requests of this run", all, len(got.traces), len(got.metrics), len(got.logs))
	return got
}

// recordRun returns the interop.run resource attribute of the message's
// first resource.
func recordRun(m proto.Message) string {
	var attrs []*commonpb.KeyValue
	switch r := m.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		if len(r.ResourceSpans) > 0 {
			attrs = r.ResourceSpans[0].GetResource().GetAttributes()
		}
	case *colmetricspb.ExportMetricsServiceRequest:
		if len(r.ResourceMetrics) > 0 {
			attrs = r.ResourceMetrics[0].GetResource().GetAttributes()
		}
	case *collogspb.ExportLogsServiceRequest:
		if len(r.ResourceLogs) > 0 {
			attrs = r.ResourceLogs[0].GetResource().GetAttributes()
		}
	}
	return attrString(attrs, "interop.run")
}

func filterRun[M proto.Message](ms []M, run string) []M {
	var out []M
	for _, m := range ms {
		if recordRun(m) == run {
			out = append(out, m)
		}
	}
	return out
}
