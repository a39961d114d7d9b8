package interop

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// TestKafkaConsumeTopicRegex: as with the Collector's kafkareceiver, a
// topic beginning with '^' is a regular expression: every matching topic
// is consumed as that signal, each with its own metrics, except those an
// exclude expression matches; a plain topic name beside it still works.
func TestKafkaConsumeTopicRegex(t *testing.T) {
	brokers := bigBrokers(t)
	per := map[string]int{"team-a.spans": 3, "team-b.spans": 2, "team-private.spans": 4, "logs-plain": 1}
	var recs []*kgo.Record
	seq := 0
	for topic, n := range per {
		for range n {
			recs = append(recs, &kgo.Record{Topic: topic, Value: seqRequest(seq, 1)})
			seq++
		}
	}
	produceTo(t, brokers, recs, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	hc := startHostileConsumer(t, brokers, "", nil, func(c *kafkasource.ConsumerConfig) {
		// Traces from every team's topic but the private one; the plain
		// name logs-plain is consumed as traces too (records are spans).
		c.Topics = map[otlp.Signal]string{otlp.Traces: `^team-.*\.spans$`, otlp.Metrics: "logs-plain"}
		c.ExcludeTopics = []string{`^team-private\.spans$`}
	})
	hc.sink.waitItems(t, [otlp.MaxSignal + 1]int{storage.Traces: per["team-a.spans"] + per["team-b.spans"], storage.Metrics: 0}, 60*time.Second)
	waitCommitted(t, brokers, "hostile", []string{"team-a.spans", "team-b.spans"}, 60*time.Second)
	// logs-plain holds spans under the metrics signal: dead-lettered.
	waitMetric(t, hc.set, `otlplite_kafka_consume_dead_letter_records_total{topic="logs-plain"}`, 1)
	hc.stop(t)
	for topic, want := range map[string]int{"team-a.spans": 3, "team-b.spans": 2, "team-private.spans": -1} {
		if got := metricValue(hc.set, `otlplite_kafka_consume_records_total{topic="`+topic+`"}`); got != want {
			t.Errorf("records of %s: %d, want %d (-1: not consumed)", topic, got, want)
		}
	}
	if got := committedOffsets(t, brokers, "hostile")["team-private.spans"]; got != 0 {
		t.Errorf("the excluded topic has %d committed records, want none", got)
	}
}
