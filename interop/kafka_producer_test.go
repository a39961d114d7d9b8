package interop

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/kafkaexporter"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// kfakePartitions is the partition count of the in-process cluster's
// topics: odd and not a power of two, so that a wrong hash shows.
const kfakePartitions = 7

// newKfake starts an in-process Kafka cluster (franz-go's kfake, a real
// implementation of the protocol) on loopback ports, its topics created on
// first use with kfakePartitions partitions.
func newKfake(t testing.TB, opts ...kfake.Opt) []string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(kfakePartitions)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// collectorExporters starts the Collector's kafkaexporter (traces, metrics,
// logs) on brokers with the default config changed by set, synchronous (no
// sending queue, no retries) so that a Consume call returns once Kafka has
// the records.
func collectorExporters(t *testing.T, brokers []string, set func(*kafkaexporter.Config)) (exporter.Traces, exporter.Metrics, exporter.Logs) {
	t.Helper()
	f := kafkaexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*kafkaexporter.Config)
	cfg.Brokers = brokers
	cfg.QueueBatchConfig = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.BackOffConfig.Enabled = false
	set(cfg)
	ctx := context.Background()
	es := exportertest.NewNopSettings(component.MustNewType("kafka"))
	te, err := f.CreateTraces(ctx, es, cfg)
	if err != nil {
		t.Fatal(err)
	}
	me, err := f.CreateMetrics(ctx, es, cfg)
	if err != nil {
		t.Fatal(err)
	}
	le, err := f.CreateLogs(ctx, es, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []component.Component{te, me, le} {
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Shutdown(context.Background()) })
	}
	return te, me, le
}

// producerTestData: several resources (attribute sets of every value kind,
// one empty, two differing only in order of their keys, which the hash
// sorts), several scopes, and many traces spread over them, some spans of
// one trace under different resources; log records with and without trace
// ids.
func producerTestData() (ptrace.Traces, pmetric.Metrics, plog.Logs) {
	attrSets := []func(m pcommon.Map){
		func(m pcommon.Map) { m.PutStr("service.name", "checkout"); m.PutStr("host.name", "a") },
		func(m pcommon.Map) { m.PutStr("host.name", "a"); m.PutStr("service.name", "checkout") }, // same map, other order
		func(m pcommon.Map) {
			m.PutStr("service.name", "cart")
			m.PutInt("pid", -42)
			m.PutDouble("load", 0.75)
			m.PutBool("canary", true)
			m.PutEmptyBytes("build").FromRaw([]byte{0xde, 0xad, 0xbe, 0xef})
			l := m.PutEmptySlice("tags")
			l.AppendEmpty().SetStr("x")
			l.AppendEmpty().SetInt(7)
			l.AppendEmpty().SetEmptyMap().PutStr("in", "list")
			n := m.PutEmptyMap("k8s")
			n.PutStr("pod", "p-1")
			n.PutStr("ns", "shop")
			n.PutEmpty("none")
		},
		func(pcommon.Map) {}, // no attributes
		func(m pcommon.Map) { m.PutStr("service.name", "ünïcode ✓"); m.PutBool("canary", false) },
	}
	td := ptrace.NewTraces()
	md := pmetric.NewMetrics()
	ld := plog.NewLogs()
	traceID := func(i int) pcommon.TraceID {
		var id pcommon.TraceID
		id[0], id[7], id[15] = byte(i), byte(i*31), byte(i*7+1)
		return id
	}
	for r, set := range attrSets {
		rs := td.ResourceSpans().AppendEmpty()
		set(rs.Resource().Attributes())
		rm := md.ResourceMetrics().AppendEmpty()
		set(rm.Resource().Attributes())
		rl := ld.ResourceLogs().AppendEmpty()
		set(rl.Resource().Attributes())
		for s := range 2 {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName(fmt.Sprintf("lib-%d", s))
			sm := rm.ScopeMetrics().AppendEmpty()
			sm.Scope().SetName(fmt.Sprintf("lib-%d", s))
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(fmt.Sprintf("lib-%d", s))
			for i := range 40 {
				// Trace ids shared across resources and scopes.
				tid := traceID((r*13 + s*5 + i) % 60)
				sp := ss.Spans().AppendEmpty()
				if r != 3 || s != 0 || i != 0 {
					// One span without a trace id: the Collector
					// keys it with the empty key.
					sp.SetTraceID(tid)
				}
				sp.SetSpanID(pcommon.SpanID{byte(r), byte(s), byte(i), 1, 2, 3, 4, 5})
				sp.SetName(fmt.Sprintf("op-%d", i))
				lr := sl.LogRecords().AppendEmpty()
				lr.Body().SetStr(fmt.Sprintf("log %d/%d/%d", r, s, i))
				if i%4 != 0 {
					lr.SetTraceID(tid)
				}
				g := sm.Metrics().AppendEmpty()
				g.SetName(fmt.Sprintf("m-%d", i))
				g.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(int64(i))
			}
		}
	}
	return td, md, ld
}

// keyedRecord is what the comparison needs of a record.
type keyedRecord struct {
	key       []byte
	partition int32
	topic     string
	value     []byte
	headers   []kgo.RecordHeader
	codec     uint8 // the record batch's compression (Attrs.CompressionType)
}

// readTopics reads every record of topics until n items (counted by count)
// have arrived.
func readTopics(t *testing.T, brokers []string, topics []string, n int, count func(*kgo.Record) int) []keyedRecord {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []keyedRecord
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d items from %v before the deadline", got, n, topics)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Errorf("consume %s/%d: %v", topic, p, err) })
		for _, r := range fs.Records() {
			got += count(r)
			out = append(out, keyedRecord{key: r.Key, partition: r.Partition, topic: r.Topic, value: r.Value, headers: r.Headers,
				codec: r.Attrs.CompressionType()})
		}
	}
	if got != n {
		t.Fatalf("read %d items from %v, want %d", got, topics, n)
	}
	return out
}

// keyPartitions maps each record key to its partition, failing on a key
// found in two partitions; a nil key is left out (no fixed partition), an
// empty one counts.
func keyPartitions(t *testing.T, what string, recs []keyedRecord) map[string]int32 {
	t.Helper()
	m := map[string]int32{}
	for _, r := range recs {
		if r.key == nil {
			continue
		}
		if p, ok := m[string(r.key)]; ok && p != r.partition {
			t.Errorf("%s: key %q in partitions %d and %d", what, r.key, p, r.partition)
		}
		m[string(r.key)] = r.partition
	}
	return m
}

// compareKeys checks that otlp-lite and the Collector used the same set of
// keys and put each in the same partition.
func compareKeys(t *testing.T, what string, lite, coll []keyedRecord) {
	t.Helper()
	l, c := keyPartitions(t, what+" (otlp-lite)", lite), keyPartitions(t, what+" (Collector)", coll)
	if len(c) == 0 {
		t.Fatalf("%s: the Collector wrote no keyed record", what)
	}
	var lk, ck []string
	for k := range l {
		lk = append(lk, k)
	}
	for k := range c {
		ck = append(ck, k)
	}
	sort.Strings(lk)
	sort.Strings(ck)
	if fmt.Sprint(lk) != fmt.Sprint(ck) {
		t.Fatalf("%s: keys differ:\notlp-lite %q\nCollector %q", what, lk, ck)
	}
	murmur := 0 // keys the Java client's hash would place elsewhere
	for k, p := range c {
		if l[k] != p {
			t.Errorf("%s: key %q: otlp-lite partition %d, Collector %d", what, k, l[k], p)
		}
		if mp, _ := kafka.Partition(kafka.HasherMurmur2, []byte(k), kfakePartitions); int32(mp) != p {
			murmur++
		}
	}
	if len(c) >= 10 && murmur == 0 {
		t.Errorf("%s: murmur2 places all %d keys as the Collector does: the comparison cannot tell hashes apart", what, len(c))
	}
	t.Logf("%s: %d keys, same partitions (%d records from otlp-lite, %d from the Collector)", what, len(c), len(lite), len(coll))
}

func spansIn(r *kgo.Record) int {
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(r.Value)
	if err != nil {
		if td, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(r.Value); err != nil {
			return 0
		}
	}
	return td.SpanCount()
}

func pointsIn(r *kgo.Record) int {
	md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(r.Value)
	if err != nil {
		if md, err = (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(r.Value); err != nil {
			return 0
		}
	}
	return md.DataPointCount()
}

func logsIn(r *kgo.Record) int {
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(r.Value)
	if err != nil {
		if ld, err = (&plog.JSONUnmarshaler{}).UnmarshalLogs(r.Value); err != nil {
			return 0
		}
	}
	return ld.LogRecordCount()
}

// writeLite writes the three signals through otlp-lite's Kafka sink.
func writeLite(t *testing.T, s *kafka.Sink, td ptrace.Traces, md pmetric.Metrics, ld plog.Logs) {
	t.Helper()
	ctx := context.Background()
	tb, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	mb, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	lb, _ := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
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

// TestKafkaProducerMatchesCollector writes the same traces, metrics and
// logs through the Collector's kafkaexporter (v0.155.0, as a library) and
// through otlp-lite's Kafka sink, with the options that key records
// (partition_traces_by_id, partition_metrics_by_resource_attributes,
// partition_logs_by_resource_attributes; then partition_logs_by_trace_id),
// to an in-process Kafka cluster, and reads both back: the same keys,
// byte for byte, and each key in the same partition.
func TestKafkaProducerMatchesCollector(t *testing.T) {
	td, md, ld := producerTestData()
	for _, mode := range []struct {
		name        string
		logsByTrace bool
	}{{"by resource attributes", false}, {"logs by trace id", true}} {
		t.Run(mode.name, func(t *testing.T) {
			brokers := newKfake(t)
			te, me, le := collectorExporters(t, brokers, func(c *kafkaexporter.Config) {
				c.Traces.Topic, c.Metrics.Topic, c.Logs.Topic = "c_spans", "c_metrics", "c_logs"
				c.PartitionTracesByID = true
				c.PartitionMetricsByResourceAttributes = true
				c.PartitionLogsByResourceAttributes = !mode.logsByTrace
				c.PartitionLogsByTraceID = mode.logsByTrace
			})
			ctx := context.Background()
			if err := te.ConsumeTraces(ctx, td); err != nil {
				t.Fatal(err)
			}
			if err := me.ConsumeMetrics(ctx, md); err != nil {
				t.Fatal(err)
			}
			if err := le.ConsumeLogs(ctx, ld); err != nil {
				t.Fatal(err)
			}
			s, err := kafka.Open(kafka.Config{Brokers: brokers, TracesTopic: "l_spans", MetricsTopic: "l_metrics", LogsTopic: "l_logs",
				PartitionTracesByID: true, PartitionMetricsByResourceAttributes: true,
				PartitionLogsByResourceAttributes: !mode.logsByTrace, PartitionLogsByTraceID: mode.logsByTrace})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			writeLite(t, s, td, md, ld)

			compareKeys(t, "traces",
				readTopics(t, brokers, []string{"l_spans"}, td.SpanCount(), spansIn),
				readTopics(t, brokers, []string{"c_spans"}, td.SpanCount(), spansIn))
			compareKeys(t, "metrics",
				readTopics(t, brokers, []string{"l_metrics"}, md.DataPointCount(), pointsIn),
				readTopics(t, brokers, []string{"c_metrics"}, md.DataPointCount(), pointsIn))
			compareKeys(t, "logs",
				readTopics(t, brokers, []string{"l_logs"}, ld.LogRecordCount(), logsIn),
				readTopics(t, brokers, []string{"c_logs"}, ld.LogRecordCount(), logsIn))
		})
	}
}

// TestKafkaProducerOptionsMatchCollector: topic_from_attribute,
// record_headers and the otlp_json encoding, on both sides: the same
// topics get the same data (compared through pdata), with the same
// headers, and otlp-lite's JSON reads back as the Collector's does.
func TestKafkaProducerOptionsMatchCollector(t *testing.T) {
	td, md, ld := producerTestData()
	brokers := newKfake(t)
	// Records of each side go to topics named after service.name with a
	// side prefix: the attribute carries the prefix per run.
	tag := func(prefix string) (ptrace.Traces, pmetric.Metrics, plog.Logs) {
		t2, m2, l2 := ptrace.NewTraces(), pmetric.NewMetrics(), plog.NewLogs()
		td.CopyTo(t2)
		md.CopyTo(m2)
		ld.CopyTo(l2)
		set := func(i int, m pcommon.Map) {
			if i%2 == 0 { // the others keep the signal's topic
				m.PutStr("kafka.topic", fmt.Sprintf("%s_topic_%d", prefix, i))
			}
		}
		for i := range t2.ResourceSpans().Len() {
			set(i, t2.ResourceSpans().At(i).Resource().Attributes())
			set(i, m2.ResourceMetrics().At(i).Resource().Attributes())
			set(i, l2.ResourceLogs().At(i).Resource().Attributes())
		}
		return t2, m2, l2
	}
	ctd, cmd, cld := tag("c")
	ltd, lmd, lld := tag("l")
	te, me, le := collectorExporters(t, brokers, func(c *kafkaexporter.Config) {
		c.Traces.Topic, c.Metrics.Topic, c.Logs.Topic = "c_spans", "c_metrics", "c_logs"
		c.Traces.Encoding, c.Metrics.Encoding, c.Logs.Encoding = "otlp_json", "otlp_json", "otlp_json"
		c.TopicFromAttribute = "kafka.topic"
		setRecordHeaders(t, c)
	})
	ctx := context.Background()
	if err := te.ConsumeTraces(ctx, ctd); err != nil {
		t.Fatal(err)
	}
	if err := me.ConsumeMetrics(ctx, cmd); err != nil {
		t.Fatal(err)
	}
	if err := le.ConsumeLogs(ctx, cld); err != nil {
		t.Fatal(err)
	}
	s, err := kafka.Open(kafka.Config{Brokers: brokers, TracesTopic: "l_spans", MetricsTopic: "l_metrics", LogsTopic: "l_logs",
		Encoding: kafka.EncodingJSON, TopicFromAttribute: "kafka.topic",
		Headers: []kafka.Header{{Key: "origin", Value: "edge-1"}, {Key: "env", Value: "test"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	writeLite(t, s, ltd, lmd, lld)

	var lTopics, cTopics []string
	for i := range td.ResourceSpans().Len() {
		if i%2 == 0 {
			lTopics = append(lTopics, fmt.Sprintf("l_topic_%d", i))
			cTopics = append(cTopics, fmt.Sprintf("c_topic_%d", i))
		}
	}
	all := func(r *kgo.Record) int { return spansIn(r) + pointsIn(r) + logsIn(r) }
	total := td.SpanCount() + md.DataPointCount() + ld.LogRecordCount()
	lite := readTopics(t, brokers, append(lTopics, "l_spans", "l_metrics", "l_logs"), total, all)
	coll := readTopics(t, brokers, append(cTopics, "c_spans", "c_metrics", "c_logs"), total, all)

	// Per topic (prefix removed): the same items, as pdata.
	byTopic := func(recs []keyedRecord) map[string][]string {
		m := map[string][]string{}
		for _, r := range recs {
			if !bytes.HasPrefix(bytes.TrimSpace(r.value), []byte("{")) {
				t.Errorf("record on %s is not otlp_json: %.40q", r.topic, r.value)
			}
			topic := r.topic[2:]
			var hs []string
			for _, h := range r.headers {
				hs = append(hs, h.Key+"="+string(h.Value))
			}
			if fmt.Sprint(hs) != "[origin=edge-1 env=test]" {
				t.Errorf("record on %s has headers %v", r.topic, hs)
			}
			m[topic] = append(m[topic], itemsOf(t, r.value)...)
		}
		for _, v := range m {
			sort.Strings(v)
		}
		return m
	}
	lm, cm := byTopic(lite), byTopic(coll)
	if len(cm) != len(lTopics)+3 {
		t.Errorf("the Collector wrote %d topics, want %d", len(cm), len(lTopics)+3)
	}
	for topic, want := range cm {
		if got := lm[topic]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("topic %s: otlp-lite wrote %d items, the Collector %d, or they differ", topic, len(got), len(want))
		}
	}
}

// setRecordHeaders sets the Collector's record_headers to origin=edge-1,
// env=test through its config unmarshalling, as a collector.yaml would
// (the element type is internal to the exporter).
func setRecordHeaders(t *testing.T, c *kafkaexporter.Config) {
	t.Helper()
	conf := confmap.NewFromStringMap(map[string]any{"record_headers": []any{
		map[string]any{"name": "origin", "value": "edge-1"},
		map[string]any{"name": "env", "value": "test"},
	}})
	if err := conf.Unmarshal(c); err != nil {
		t.Fatal(err)
	}
	if len(c.RecordHeaders) != 2 {
		t.Fatalf("record_headers not set: %+v", c.RecordHeaders)
	}
}

// itemsOf lists the items of an otlp_json record of any signal, each as
// its resource's attributes with its scope name and its own identity, so
// that two writers' records compare regardless of how they were split
// (the resource attribute kafka.topic, which differs by side, left out).
func itemsOf(t *testing.T, v []byte) []string {
	var out []string
	res := func(m pcommon.Map) string {
		c := pcommon.NewMap()
		m.CopyTo(c)
		c.Remove("kafka.topic")
		return fmt.Sprint(c.AsRaw())
	}
	if td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(v); err == nil && td.SpanCount() > 0 {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					out = append(out, fmt.Sprintf("span %s %s %s %s %s", res(rs.Resource().Attributes()), ss.Scope().Name(), sp.TraceID(), sp.SpanID(), sp.Name()))
				}
			}
		}
		return out
	}
	if md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(v); err == nil && md.DataPointCount() > 0 {
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					out = append(out, fmt.Sprintf("metric %s %s %s %d", res(rm.Resource().Attributes()), sm.Scope().Name(), m.Name(), m.Gauge().DataPoints().At(0).IntValue()))
				}
			}
		}
		return out
	}
	if ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(v); err == nil && ld.LogRecordCount() > 0 {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					out = append(out, fmt.Sprintf("log %s %s %s %s", res(rl.Resource().Attributes()), sl.Scope().Name(), lr.TraceID(), lr.Body().Str()))
				}
			}
		}
		return out
	}
	t.Errorf("record is none of traces, metrics, logs as otlp_json: %.60q", v)
	return nil
}
