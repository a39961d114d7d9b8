package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/testdata"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// countingSink counts the items stored through it, so a test can wait for
// them: an embedding engine's storage.Sink in miniature.
type countingSink struct {
	storage.Sink
	mu    sync.Mutex
	items [otlp.MaxSignal + 1]int
	recs  [otlp.MaxSignal + 1]int
	ch    chan struct{}
}

func newCountingSink(s storage.Sink) *countingSink {
	return &countingSink{Sink: s, ch: make(chan struct{}, 1)}
}

func (c *countingSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	if err := c.Sink.Write(ctx, sig, data, items); err != nil {
		return err
	}
	c.mu.Lock()
	c.items[sig] += items
	c.recs[sig]++
	c.mu.Unlock()
	select {
	case c.ch <- struct{}{}:
	default:
	}
	return nil
}

// waitItems waits until the sink holds want[sig] items of each signal.
func (c *countingSink) waitItems(t testing.TB, want [otlp.MaxSignal + 1]int, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		got := c.items
		c.mu.Unlock()
		if got == want {
			return
		}
		select {
		case <-c.ch:
		case <-deadline.C:
			t.Fatalf("stored items by signal %v, want %v", got, want)
		}
	}
}

// kafkaSent is what the Collector's exporter was given, in the official
// generated types, for matchMessages.
type kafkaSent struct {
	traces  []*coltracepb.ExportTraceServiceRequest
	metrics []*colmetricspb.ExportMetricsServiceRequest
	logs    []*collogspb.ExportLogsServiceRequest
	items   [otlp.MaxSignal + 1]int
}

func (s *kafkaSent) add(t *testing.T, td ptrace.Traces, md pmetric.Metrics, ld plog.Logs) {
	tb, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	mb, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	lb, _ := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	tr, me, lo := new(coltracepb.ExportTraceServiceRequest), new(colmetricspb.ExportMetricsServiceRequest), new(collogspb.ExportLogsServiceRequest)
	for _, u := range []struct {
		b []byte
		m proto.Message
	}{{tb, tr}, {mb, me}, {lb, lo}} {
		if err := proto.Unmarshal(u.b, u.m); err != nil {
			t.Fatal(err)
		}
	}
	s.traces, s.metrics, s.logs = append(s.traces, tr), append(s.metrics, me), append(s.logs, lo)
	s.items[storage.Traces] += td.SpanCount()
	s.items[storage.Metrics] += md.DataPointCount()
	s.items[storage.Logs] += ld.LogRecordCount()
}

// validIDs gives every span of td without one a trace and span id:
// pdata's test data leaves some empty, which OTLP forbids (the receiver
// rejects such spans; this test is about the ones it keeps).
func validIDs(td ptrace.Traces) {
	n := byte(0)
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				n++
				if sp.TraceID().IsEmpty() {
					sp.SetTraceID([16]byte{0xaa, n, 15: 1})
				}
				if sp.SpanID().IsEmpty() {
					sp.SetSpanID([8]byte{0xbb, n, 7: 1})
				}
				for _, l := range sp.Links().All() {
					if l.TraceID().IsEmpty() {
						l.SetTraceID([16]byte{0xcc, n, 15: 1})
					}
					if l.SpanID().IsEmpty() {
						l.SetSpanID([8]byte{0xdd, n, 7: 1})
					}
				}
			}
		}
	}
}

// quietLogger logs warnings and errors only, to stderr (not t.Log: the
// Kafka client may log from its goroutines after the test returned).
func quietLogger(*testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// TestKafkaConsumeFromCollector: the Collector's kafkaexporter (library)
// writes traces, metrics and logs, in otlp_proto and in otlp_json, to the
// default topics of an in-process Kafka cluster, with two records that are
// not OTLP among them; otlp-lite's consumer (library: a handler over the
// disk store) reads them. Every request the exporter sent is stored, equal
// field for field (proto.Equal on the generated types); the two bad
// records are dead-lettered in a store that `otlp-lite export` prints
// byte for byte; offsets are committed.
func TestKafkaConsumeFromCollector(t *testing.T) {
	brokers := newKfake(t)
	ctx := context.Background()
	var sent kafkaSent
	for _, enc := range []string{"otlp_proto", "otlp_json"} {
		te, me, le := collectorExporters(t, brokers, func(c *kafkaexporter.Config) {
			c.Traces.Encoding, c.Metrics.Encoding, c.Logs.Encoding = enc, enc, enc
		})
		for _, n := range []int{1, 5, 20} {
			td, md, ld := testdata.GenerateTraces(n), testdata.GenerateMetrics(n), testdata.GenerateLogs(n)
			validIDs(td)
			sent.add(t, td, md, ld)
			if err := te.ConsumeTraces(ctx, td); err != nil {
				t.Fatal(err)
			}
			if err := me.ConsumeMetrics(ctx, md); err != nil {
				t.Fatal(err)
			}
			if err := le.ConsumeLogs(ctx, ld); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Two records that are not OTLP: protobuf garbage, broken JSON.
	bad := map[string][]byte{"otlp_spans": {0x0a, 0xff, 0xff, 0x01}, "otlp_logs": []byte(`{"resourceLogs": [`)}
	pcl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	for topic, v := range bad {
		if err := pcl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	pcl.Close()

	dir := t.TempDir()
	dataDir, dlDir := filepath.Join(dir, "data"), filepath.Join(dir, "dead-letter")
	store, err := disk.Open(dataDir, disk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dl, err := disk.Open(dlDir, disk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink := newCountingSink(store)
	set := metrics.NewSet()
	h := handler.New(handler.Config{Sink: sink, Metrics: set, Logger: quietLogger(t)})
	c, err := kafkasource.NewConsumer(kafkasource.ConsumerConfig{Brokers: brokers, Pipeline: h.Pipeline(), DeadLetter: dl, Metrics: set, Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- c.Run(runCtx) }()
	sink.waitItems(t, sent.items, 60*time.Second)
	// The dead letters are written before the records after them are
	// committed; wait for the counter, then stop.
	waitMetric(t, set, `otlplite_kafka_consume_dead_letter_records_total{topic="otlp_spans"}`, 1)
	waitMetric(t, set, `otlplite_kafka_consume_dead_letter_records_total{topic="otlp_logs"}`, 1)
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := dl.Close(); err != nil {
		t.Fatal(err)
	}

	matchMessages(t, "traces", sent.traces, scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }))
	matchMessages(t, "metrics", sent.metrics, scanStore(t, dataDir, storage.Metrics, func() *colmetricspb.ExportMetricsServiceRequest { return new(colmetricspb.ExportMetricsServiceRequest) }))
	matchMessages(t, "logs", sent.logs, scanStore(t, dataDir, storage.Logs, func() *collogspb.ExportLogsServiceRequest { return new(collogspb.ExportLogsServiceRequest) }))
	for _, m := range []struct {
		name string
		want int
	}{
		{`otlplite_kafka_consume_records_total{topic="otlp_spans"}`, len(sent.traces)},
		{`otlplite_kafka_consume_items_total{topic="otlp_spans"}`, sent.items[storage.Traces]},
		{`otlplite_kafka_consume_items_total{topic="otlp_metrics"}`, sent.items[storage.Metrics]},
		{`otlplite_kafka_consume_items_total{topic="otlp_logs"}`, sent.items[storage.Logs]},
	} {
		if got := metricValue(set, m.name); got != m.want {
			t.Errorf("%s = %d, want %d", m.name, got, m.want)
		}
	}

	// The dead letters, as `otlp-lite export -format proto` prints them.
	for topic, sig := range map[string]string{"otlp_spans": "traces", "otlp_logs": "logs"} {
		out, err := exec.Command(serverBin, "export", "-data-dir", dlDir, "-signal", sig, "-format", "proto").Output()
		if err != nil {
			t.Fatalf("export of the dead letters: %v", err)
		}
		if len(out) < 4 || int(binary.BigEndian.Uint32(out)) != len(out)-4 || !bytes.Equal(out[4:], bad[topic]) {
			t.Errorf("dead letters of %s: export printed %q, want the record %q", topic, out, bad[topic])
		}
	}

	// Everything is committed: a new member of the group reads nothing.
	committed := committedOffsets(t, brokers, kafkasource.DefaultConsumerGroup)
	for _, topic := range []string{"otlp_spans", "otlp_metrics", "otlp_logs"} {
		if committed[topic] != endOffsets(t, brokers, topic) {
			t.Errorf("%s: committed %d, end %d", topic, committed[topic], endOffsets(t, brokers, topic))
		}
	}
}

// metricValue reads an integer series of set.
func metricValue(set *metrics.Set, name string) int {
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	for line := range bytes.Lines(buf.Bytes()) {
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte(name+" ")); ok {
			n := 0
			for _, c := range v {
				if c < '0' || c > '9' {
					break
				}
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	return -1
}

// waitMetric polls set until the series name reaches want.
func waitMetric(t *testing.T, set *metrics.Set, name string, want int) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for metricValue(set, name) < want {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s = %d, want %d", name, metricValue(set, name), want)
		}
	}
}

// committedOffsets sums, per topic, the group's committed offsets.
func committedOffsets(t *testing.T, brokers []string, group string) map[string]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	offs.Each(func(o kadm.OffsetResponse) { out[o.Topic] += o.At })
	return out
}

// endOffsets sums the end offsets of a topic's partitions.
func endOffsets(t *testing.T, brokers []string, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil && !errors.Is(o.Err, context.Canceled) {
			t.Errorf("end offset of %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		n += o.Offset
	})
	return n
}

// TestKafkaConsumeTenant: a record carrying the tenant header (what
// -storage kafka writes for a receiver with tenants) is stored under that
// tenant; one without it under none (the default tenant).
func TestKafkaConsumeTenant(t *testing.T) {
	brokers := newKfake(t)
	pcl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	for i, tenant := range []string{"acme", ""} {
		r := &kgo.Record{Topic: "otlp_spans", Value: seqRequest(i, 1)}
		if tenant != "" {
			r.Headers = []kgo.RecordHeader{{Key: kafka.TenantHeader, Value: []byte(tenant)}}
		}
		if err := pcl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	pcl.Close()
	dataDir := t.TempDir()
	store, err := disk.Open(dataDir, disk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sink := newCountingSink(store)
	h := handler.New(handler.Config{Sink: sink, Logger: quietLogger(t)})
	c, err := kafkasource.NewConsumer(kafkasource.ConsumerConfig{Brokers: brokers, Pipeline: h.Pipeline(), Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- c.Run(ctx) }()
	sink.waitItems(t, [otlp.MaxSignal + 1]int{storage.Traces: 2}, 60*time.Second)
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	tenants := map[string]int{}
	if err := disk.Scan(dataDir, storage.Traces, func(r disk.Record) error {
		tenants[r.Tenant]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if tenants["acme"] != 1 || len(tenants) != 2 {
		t.Errorf("stored tenants %v, want one record of acme and one without a tenant", tenants)
	}
}
