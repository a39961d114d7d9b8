package interop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// TestKafkaProducerMetadataMatchesCollector: the options that read client
// metadata, on the Collector's kafkaexporter (v0.155.0, as a library, its
// metadata in client.Info) and on otlp-lite's Kafka sink (its metadata in
// storage.WithMetadata, as the receiver passes it): include_metadata_keys
// with record_headers, traces:: and logs::topic_from_metadata_key (before
// topic_from_attribute, which still routes the metrics),
// traces:: and metrics::message_key_from_metadata_key, and gzip at
// compression_params.level 9. Ten requests per signal, each with its own
// metadata: the same topics get the same items, every record the same
// headers in the same order, the same keys land in the same partitions,
// and every batch is gzip.
func TestKafkaProducerMetadataMatchesCollector(t *testing.T) {
	td, md, ld := producerTestData()
	brokers := newKfake(t)
	const requests = 10
	// Resources 0 and 2 of the metrics name a topic by attribute, per side.
	tagged := func(prefix string) pmetric.Metrics {
		m := pmetric.NewMetrics()
		md.CopyTo(m)
		for i := range m.ResourceMetrics().Len() {
			if i%2 == 0 && i < 4 {
				m.ResourceMetrics().At(i).Resource().Attributes().PutStr("kafka.topic", fmt.Sprintf("%s_attr_%d", prefix, i))
			}
		}
		return m
	}
	// The traces carry the attribute too: the metadata topic wins.
	tdAttr := ptrace.NewTraces()
	td.CopyTo(tdAttr)
	tdAttr.ResourceSpans().At(0).Resource().Attributes().PutStr("kafka.topic", "never_used")
	meta := func(prefix string, i int) map[string][]string {
		return map[string][]string{
			"x-team":  {"checkout", "cart"},
			"X-Route": {"eu-1"},
			"x-topic": {fmt.Sprintf("%s_meta_%d", prefix, i%3), "ignored"},
			"x-key":   {fmt.Sprintf("key-%d", i)},
			"x-other": {"not copied"},
		}
	}

	te, me, le := collectorExporters(t, brokers, func(c *kafkaexporter.Config) {
		c.Traces.Topic, c.Metrics.Topic, c.Logs.Topic = "c_spans", "c_metrics", "c_logs"
		c.Traces.TopicFromMetadataKey, c.Logs.TopicFromMetadataKey = "x-topic", "x-topic"
		c.Traces.MessageKeyFromMetadataKey, c.Metrics.MessageKeyFromMetadataKey = "x-key", "x-key"
		c.TopicFromAttribute = "kafka.topic"
		c.IncludeMetadataKeys = []string{"X-Team", "x-absent", "x-route"}
		c.Producer.Compression = "gzip"
		c.Producer.CompressionParams.Level = 9
		setRecordHeaders(t, c)
	})
	cmd := tagged("c")
	for i := range requests {
		ctx := client.NewContext(context.Background(), client.Info{Metadata: client.NewMetadata(meta("c", i))})
		if err := te.ConsumeTraces(ctx, tdAttr); err != nil {
			t.Fatal(err)
		}
		if err := me.ConsumeMetrics(ctx, cmd); err != nil {
			t.Fatal(err)
		}
		if err := le.ConsumeLogs(ctx, ld); err != nil {
			t.Fatal(err)
		}
	}

	var ps [5]kafka.SignalConfig
	ps[storage.Traces] = kafka.SignalConfig{TopicFromMetadataKey: "x-topic", MessageKeyFromMetadataKey: "x-key"}
	ps[storage.Metrics] = kafka.SignalConfig{MessageKeyFromMetadataKey: "x-key"}
	ps[storage.Logs] = kafka.SignalConfig{TopicFromMetadataKey: "x-topic"}
	s, err := kafka.Open(kafka.Config{Brokers: brokers, TracesTopic: "l_spans", MetricsTopic: "l_metrics", LogsTopic: "l_logs",
		PerSignal: ps, TopicFromAttribute: "kafka.topic", IncludeMetadataKeys: []string{"X-Team", "x-absent", "x-route"},
		Headers:     []kafka.Header{{Key: "origin", Value: "edge-1"}, {Key: "env", Value: "test"}},
		Compression: "gzip", CompressionLevel: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lmd := tagged("l")
	tb, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(tdAttr)
	mb, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(lmd)
	lb, _ := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	for i := range requests {
		// As the handler passes them: the request's header values
		// under the configured names.
		var smd storage.Metadata
		for _, k := range []string{"X-Team", "x-route", "x-topic", "x-key"} {
			smd = append(smd, storage.MetadataEntry{Key: k, Values: client.NewMetadata(meta("l", i)).Get(k)})
		}
		ctx := storage.WithMetadata(context.Background(), smd)
		for _, w := range []struct {
			sig   storage.Signal
			data  []byte
			items int
		}{{storage.Traces, tb, td.SpanCount()}, {storage.Metrics, mb, md.DataPointCount()}, {storage.Logs, lb, ld.LogRecordCount()}} {
			if err := s.Write(ctx, w.sig, w.data, w.items); err != nil {
				t.Fatalf("otlp-lite %v: %v", w.sig, err)
			}
		}
	}

	topicsOf := func(prefix string) (traces, metrics, logs []string) {
		for i := range 3 {
			traces = append(traces, fmt.Sprintf("%s_meta_%d", prefix, i))
		}
		return traces, []string{prefix + "_metrics", prefix + "_attr_0", prefix + "_attr_2"}, traces
	}
	lt, lm, _ := topicsOf("l")
	ct, cm, _ := topicsOf("c")
	// Traces and logs share the metadata topics.
	all := func(r *kgo.Record) int { return spansIn(r) + logsIn(r) }
	n := requests * (td.SpanCount() + ld.LogRecordCount())
	liteTL, collTL := readTopics(t, brokers, lt, n, all), readTopics(t, brokers, ct, n, all)
	nm := requests * md.DataPointCount()
	liteM, collM := readTopics(t, brokers, lm, nm, pointsIn), readTopics(t, brokers, cm, nm, pointsIn)

	const wantHeaders = "[origin=edge-1 env=test X-Team=checkout X-Team=cart x-route=eu-1]"
	summary := func(side string, recs []keyedRecord) map[string]int {
		items := map[string]int{} // topic without prefix → items
		for _, r := range recs {
			var hs []string
			for _, h := range r.headers {
				hs = append(hs, h.Key+"="+string(h.Value))
			}
			if fmt.Sprint(hs) != wantHeaders {
				t.Errorf("%s record on %s: headers %v, want %s", side, r.topic, hs, wantHeaders)
			}
			if r.codec != 1 {
				t.Errorf("%s record on %s: compression type %d, want 1 (gzip)", side, r.topic, r.codec)
			}
			items[r.topic[2:]] += spansIn(&kgo.Record{Value: r.value}) + pointsIn(&kgo.Record{Value: r.value}) + logsIn(&kgo.Record{Value: r.value})
		}
		return items
	}
	for _, pair := range []struct {
		what       string
		lite, coll []keyedRecord
	}{{"traces and logs", liteTL, collTL}, {"metrics", liteM, collM}} {
		li, ci := summary("otlp-lite", pair.lite), summary("Collector", pair.coll)
		if fmt.Sprint(li) != fmt.Sprint(ci) {
			t.Errorf("%s: items per topic: otlp-lite %v, Collector %v", pair.what, li, ci)
		}
		t.Logf("%s: items per topic %v on both sides", pair.what, ci)
	}
	// The metadata keys: traces (on the metadata topics) and metrics.
	// Logs have no message key: their records are unkeyed on both sides.
	keyed := func(recs []keyedRecord, withKey bool) (out []keyedRecord) {
		for _, r := range recs {
			if (r.key != nil) == withKey {
				out = append(out, r)
			}
		}
		return out
	}
	for _, r := range keyed(append(liteTL, collTL...), true) {
		if logsIn(&kgo.Record{Value: r.value}) > 0 {
			t.Errorf("a logs record on %s has key %q; logs have no message_key_from_metadata_key here", r.topic, r.key)
		}
	}
	compareKeys(t, "traces message key", keyed(liteTL, true), keyed(collTL, true))
	compareKeys(t, "metrics message key", liteM, collM)
}

// TestKafkaMetadataFromClients: otlp-lite serving with -storage kafka and
// the metadata options, the OpenTelemetry Go SDK as the client (gRPC and
// OTLP/HTTP exporters, their headers being the metadata). Headers named in
// -kafka-include-metadata-keys reach every record; the topic comes from
// the x-topic header. The attacker's view: a client naming an illegal
// topic, or one more topic than -kafka-max-client-topics, is refused with
// INVALID_ARGUMENT (gRPC) or 400 (HTTP), not retried by the SDK, and
// counted in otlplite_kafka_produce_refusals_total; nothing is produced
// for it.
func TestKafkaMetadataFromClients(t *testing.T) {
	brokers, _, sfx := kafkaForTest(t)
	base := "md" + sfx
	admin := freeAddr(t)
	srv := startServerHTTP(t, t.TempDir(), "-storage", "kafka", "-kafka-brokers", strings.Join(brokers, ","),
		"-kafka-produce-timeout", "30s", "-kafka-topic-traces", base, "-admin-addr", admin,
		"-kafka-include-metadata-keys", "X-Team", "-kafka-topic-from-metadata-key-traces", "x-topic",
		"-kafka-max-client-topics", "2")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	type send struct {
		http  bool
		topic string
		ok    bool
	}
	sends := []send{
		{false, base + "_one", true},
		{true, base + "_two", true},
		{false, "bad/topic", false},     // illegal name
		{true, base + "_three", false},  // a third client topic
		{false, base + "_three", false}, // still refused
		{true, base + "_one", true},     // known: still fine
		{false, strings.Repeat("x", 250), false},
	}
	sent := map[string]int{} // topic → spans acknowledged
	for i, sd := range sends {
		hdr := map[string]string{"X-Team": fmt.Sprintf("team-%d", i), "x-topic": sd.topic}
		var err error
		if sd.http {
			exp, e := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(srv.httpAddr), otlptracehttp.WithInsecure(),
				otlptracehttp.WithHeaders(hdr), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
			if e != nil {
				t.Fatal(e)
			}
			err = exp.ExportSpans(ctx, tenantSpans(i, 0, 5))
			exp.Shutdown(ctx)
			if !sd.ok && (err == nil || !strings.Contains(err.Error(), fmt.Sprint(http.StatusBadRequest))) {
				t.Errorf("send %d (HTTP, topic %.20q): err = %v, want a 400", i, sd.topic, err)
			}
		} else {
			exp, e := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(srv.addr), otlptracegrpc.WithInsecure(),
				otlptracegrpc.WithHeaders(hdr), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
			if e != nil {
				t.Fatal(e)
			}
			err = exp.ExportSpans(ctx, tenantSpans(i, 0, 5))
			exp.Shutdown(ctx)
			if !sd.ok {
				st, _ := status.FromError(errors.Unwrap(err))
				if err == nil || st.Code() != codes.InvalidArgument && !strings.Contains(err.Error(), "InvalidArgument") {
					t.Errorf("send %d (gRPC, topic %.20q): err = %v, want INVALID_ARGUMENT", i, sd.topic, err)
				}
			}
		}
		if sd.ok {
			if err != nil {
				t.Fatalf("send %d (topic %s): %v", i, sd.topic, err)
			}
			sent[sd.topic] += 5
		} else if err != nil && !strings.Contains(err.Error(), "topic") {
			t.Errorf("send %d: the refusal does not say what is wrong: %v", i, err)
		}
	}
	if got := scrape(t, admin, `otlplite_kafka_produce_refusals_total{reason="client_topic_invalid"}`); got != "2" {
		t.Errorf("client_topic_invalid refusals = %q, want 2", got)
	}
	if got := scrape(t, admin, `otlplite_kafka_produce_refusals_total{reason="client_topic_limit"}`); got != "2" {
		t.Errorf("client_topic_limit refusals = %q, want 2", got)
	}
	srv.stop()

	var topics []string
	total := 0
	for tp, n := range sent {
		topics = append(topics, tp)
		total += n
	}
	sort.Strings(topics)
	got := map[string]int{}
	for _, r := range readTopics(t, brokers, topics, total, spansIn) {
		team := ""
		for _, h := range r.headers {
			if h.Key == "X-Team" {
				team = string(h.Value)
			}
		}
		if !strings.HasPrefix(team, "team-") {
			t.Errorf("record on %s has headers %v, want X-Team", r.topic, r.headers)
		}
		got[r.topic] += spansIn(&kgo.Record{Value: r.value})
	}
	if fmt.Sprint(got) != fmt.Sprint(sent) {
		t.Errorf("spans per topic %v, want %v", got, sent)
	}
}

// TestKafkaRoundRobinMatchesCollector: record_partitioner round_robin on
// both sides, with partition_metrics_by_resource_attributes (one keyed
// record per resource on both sides): keys no longer choose the
// partition, records are dealt out in turn from partition 0 (franz-go's
// RoundRobinPartitioner, which both use), so each partition gets the same
// number of records from otlp-lite as from the Collector, the counts
// differing by at most one.
func TestKafkaRoundRobinMatchesCollector(t *testing.T) {
	_, md, _ := producerTestData()
	brokers := newKfake(t)
	_, me, _ := collectorExporters(t, brokers, func(c *kafkaexporter.Config) {
		c.Metrics.Topic = "c_metrics"
		c.PartitionMetricsByResourceAttributes = true
		if err := confmap.NewFromStringMap(map[string]any{"record_partitioner": map[string]any{"round_robin": map[string]any{}}}).Unmarshal(c); err != nil {
			t.Fatal(err)
		}
		if c.RecordPartitioner.RoundRobin == nil || c.RecordPartitioner.StickyKey != nil {
			t.Fatalf("record_partitioner not round_robin: %+v", c.RecordPartitioner)
		}
	})
	s, err := kafka.Open(kafka.Config{Brokers: brokers, MetricsTopic: "l_metrics", PartitionMetricsByResourceAttributes: true,
		Partitioner: kafka.PartitionerRoundRobin})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mb, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	const requests = 3
	for range requests {
		if err := me.ConsumeMetrics(context.Background(), md); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(context.Background(), storage.Metrics, mb, md.DataPointCount()); err != nil {
			t.Fatal(err)
		}
	}
	perPartition := func(recs []keyedRecord) [kfakePartitions]int {
		var n [kfakePartitions]int
		for _, r := range recs {
			n[r.partition]++
		}
		return n
	}
	n := requests * md.DataPointCount()
	l := perPartition(readTopics(t, brokers, []string{"l_metrics"}, n, pointsIn))
	c := perPartition(readTopics(t, brokers, []string{"c_metrics"}, n, pointsIn))
	if l != c {
		t.Fatalf("records per partition: otlp-lite %v, Collector %v", l, c)
	}
	if lo, hi := slices.Min(c[:]), slices.Max(c[:]); hi-lo > 1 {
		t.Fatalf("records per partition %v: not dealt out in turn", c)
	}
	t.Logf("records per partition on both sides: %v", c)
}
