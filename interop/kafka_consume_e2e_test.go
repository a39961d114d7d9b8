package interop

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
)

// kafkaForTest returns the brokers of the real broker scripts/kafka/test.sh
// started (OTLP_LITE_KAFKA_BROKERS), or of an in-process kfake cluster
// without it; the session timeout consumers should use (a real broker's
// group.min.session.timeout.ms is 6 s); and a suffix that makes topic and
// group names unique to this run, as a real broker keeps earlier runs'.
func kafkaForTest(t testing.TB) (brokers []string, session time.Duration, suffix string) {
	t.Helper()
	suffix = fmt.Sprintf("_%d", time.Now().UnixNano())
	if env := os.Getenv("OTLP_LITE_KAFKA_BROKERS"); env != "" {
		return strings.Split(env, ","), 6 * time.Second, suffix
	}
	return newKfake(t, kfake.GroupMinSessionTimeout(time.Second)), 2 * time.Second, suffix
}

// waitCommitted waits until group has committed every record of topics
// (the committed offsets reach the end offsets).
func waitCommitted(t *testing.T, brokers []string, group string, topics []string, timeout time.Duration) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.After(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ends, err1 := adm.ListEndOffsets(ctx, topics...)
		offs, err2 := adm.FetchOffsets(ctx, group)
		cancel()
		if err1 == nil && err2 == nil {
			behind := 0
			ends.Each(func(o kadm.ListedOffset) {
				c, _ := offs.Lookup(o.Topic, o.Partition)
				if o.Offset > 0 && c.At < o.Offset {
					behind += int(o.Offset - max(c.At, 0))
				}
			})
			if behind == 0 {
				return
			}
			last = fmt.Sprintf("%d records not committed", behind)
		} else {
			last = fmt.Sprintf("%v %v", err1, err2)
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("group %s did not commit %v within %v: %s", group, topics, timeout, last)
		}
	}
}

// TestKafkaEdgeToStore: the OpenTelemetry Go SDK sends traces, metrics and
// logs to an edge otlp-lite (-storage kafka); a store otlp-lite
// (-kafka-consume) reads them from Kafka into its disk log. Every request
// the edge acknowledged is stored once, field for field, and the item
// counts are exact. With scripts/kafka/test.sh (make kafka-test) the broker
// is a real Kafka; otherwise kfake.
func TestKafkaEdgeToStore(t *testing.T) {
	brokers, session, sfx := kafkaForTest(t)
	topics := map[string]string{"traces": "e2e_spans" + sfx, "metrics": "e2e_metrics" + sfx, "logs": "e2e_logs" + sfx}
	group := "e2e" + sfx
	bs := strings.Join(brokers, ",")
	edge := startServerHTTP(t, t.TempDir(), "-storage", "kafka", "-kafka-brokers", bs, "-kafka-produce-timeout", "30s",
		"-kafka-topic-traces", topics["traces"], "-kafka-topic-metrics", topics["metrics"], "-kafka-topic-logs", topics["logs"],
		"-kafka-partition-traces-by-id")
	storeDir := t.TempDir()
	store := startServer(t, storeDir, "-kafka-consume", bs, "-kafka-consume-group", group,
		"-kafka-consume-topic-traces", topics["traces"], "-kafka-consume-topic-metrics", topics["metrics"], "-kafka-consume-topic-logs", topics["logs"],
		"-kafka-consume-session-timeout", session.String())

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	capt := newCapture()
	res := kafkaResource("edge" + sfx)
	want := sendGoTraces(ctx, t, edge.addr, "gzip", res, capt)
	sendGoMetrics(ctx, t, edge.addr, "gzip", res, capt)
	sendGoLogs(ctx, t, edge.addr, "gzip", res, capt, want)
	if s := capt.summary(); len(capt.failures) > 0 || len(capt.partial) > 0 || len(capt.traces) == 0 || len(capt.metrics) == 0 || len(capt.logs) == 0 {
		t.Fatalf("exports to the edge were not all fully successful: %s", s)
	}
	edge.stop()
	waitCommitted(t, brokers, group, []string{topics["traces"], topics["metrics"], topics["logs"]}, 90*time.Second)
	store.stop()

	// Traces were split per trace id at the edge: compare spans.
	var sentSpans, storedSpans []*tracepb.Span
	for _, r := range capt.traces {
		sentSpans = append(sentSpans, spansOf(r)...)
	}
	storedTraces := scanStore(t, storeDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	for _, r := range storedTraces {
		storedSpans = append(storedSpans, spansOf(r)...)
	}
	if len(sentSpans) != len(storedSpans) {
		t.Errorf("spans: %d acknowledged by the edge, %d stored", len(sentSpans), len(storedSpans))
	}
	matchMessages(t, "spans", sentSpans, storedSpans)
	matchMessages(t, "metrics", capt.metrics, scanStore(t, storeDir, storage.Metrics, func() *colmetricspb.ExportMetricsServiceRequest { return new(colmetricspb.ExportMetricsServiceRequest) }))
	matchMessages(t, "logs", capt.logs, scanStore(t, storeDir, storage.Logs, func() *collogspb.ExportLogsServiceRequest { return new(collogspb.ExportLogsServiceRequest) }))
	t.Logf("edge → Kafka → store: %d spans, %d metrics requests, %d logs requests", len(storedSpans), len(capt.metrics), len(capt.logs))
}

// spansOf lists the spans of a request.
func spansOf(r *coltracepb.ExportTraceServiceRequest) []*tracepb.Span {
	var out []*tracepb.Span
	for _, rs := range r.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			out = append(out, ss.GetSpans()...)
		}
	}
	return out
}

// seqRequest is request number seq of the group test: spansPer spans whose
// span ids encode (seq, i).
func seqRequest(seq, spansPer int) []byte {
	ss := &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: "kill-test"}}
	for i := range spansPer {
		id := uint64(seq)<<16 | uint64(i)
		var tid [16]byte
		var sid [8]byte
		for b := range 8 {
			tid[b] = byte(id >> (8 * b))
			sid[b] = byte(id >> (8 * b))
		}
		tid[15], sid[7] = 1, 1 // never all zero, which OTLP forbids
		ss.Spans = append(ss.Spans, &tracepb.Span{TraceId: tid[:], SpanId: sid[:], Name: "s", StartTimeUnixNano: 1, EndTimeUnixNano: 2})
	}
	b, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "kill"}}}}},
		ScopeSpans: []*tracepb.ScopeSpans{ss},
	}}})
	if err != nil {
		panic(err)
	}
	return b
}

// TestKafkaConsumerGroupKill: two otlp-lite instances consume one topic in
// one group while records are produced; each round one of them is
// SIGKILLed mid-load. The survivor takes over its partitions and catches up
// alone, then the killed one is restarted on its data directory. At the
// end every produced span is stored, in one data directory or the other,
// and the duplicates (records stored but not committed when their consumer
// died) are at most one poll per kill. OTLP_LITE_KAFKA_KILL_ROUNDS sets the
// rounds (default 3).
func TestKafkaConsumerGroupKill(t *testing.T) {
	rounds := 3
	if v := os.Getenv("OTLP_LITE_KAFKA_KILL_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("bad OTLP_LITE_KAFKA_KILL_ROUNDS %q", v)
		}
		rounds = n
	}
	const (
		perRound = 400 // requests produced per round
		spansPer = 5
		maxPoll  = 50
	)
	brokers, session, sfx := kafkaForTest(t)
	topic, group := "kill_spans"+sfx, "kill"+sfx
	bs := strings.Join(brokers, ",")
	dirs := []string{t.TempDir(), t.TempDir()}
	start := func(i int) *server {
		return startServer(t, dirs[i], "-kafka-consume", bs, "-kafka-consume-group", group,
			"-kafka-consume-topic-traces", topic, "-kafka-consume-topic-metrics", "", "-kafka-consume-topic-logs", "",
			"-kafka-consume-session-timeout", session.String(), "-kafka-consume-max-poll-records", strconv.Itoa(maxPoll))
	}
	servers := []*server{start(0), start(1)}

	pcl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer pcl.Close()
	seq := 0
	produce := func(n int) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var first error
		for range n {
			wg.Add(1)
			pcl.Produce(context.Background(), &kgo.Record{Topic: topic, Value: seqRequest(seq, spansPer)}, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
				}
				wg.Done()
			})
			seq++
		}
		wg.Wait()
		if first != nil {
			t.Fatalf("produce: %v", first)
		}
	}
	for round := range rounds {
		victim := round % 2
		// Half the round's records, the victim dies with the consumers
		// busy, then the other half for the survivor alone.
		produce(perRound / 2)
		servers[victim].kill()
		produce(perRound / 2)
		waitCommitted(t, brokers, group, []string{topic}, 120*time.Second)
		servers[victim] = start(victim)
	}
	produce(perRound)
	waitCommitted(t, brokers, group, []string{topic}, 120*time.Second)
	for _, s := range servers {
		s.stop()
	}

	counts := map[string]int{}
	stored := 0
	for _, d := range dirs {
		for _, r := range scanStore(t, d, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }) {
			for _, sp := range spansOf(r) {
				counts[string(sp.GetSpanId())]++
				stored++
			}
		}
	}
	total := seq * spansPer
	if len(counts) != total {
		t.Fatalf("%d distinct spans stored, %d produced: lost %d", len(counts), total, total-len(counts))
	}
	dups := stored - total
	bound := rounds * maxPoll * spansPer
	t.Logf("%d rounds: %d spans produced, %d stored, %d duplicates (bound %d: one poll of %d records per kill)", rounds, total, stored, dups, bound, maxPoll)
	if dups > bound {
		t.Errorf("%d duplicate spans, more than the uncommitted window allows (%d)", dups, bound)
	}
}
