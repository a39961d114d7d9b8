//go:build !nokafka

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
)

// TestKafkaExactlyOnceConsumerKill: an SDK-like sender exports to
// otlp-lite A (-storage kafka), which produces to a real Kafka broker;
// otlp-lite B (-kafka-consume) reads the topic into its disk log and is
// SIGKILLed repeatedly mid-load, restarted on its data directory (static
// membership, so it gets its partitions back at once). Records B stored
// but had not committed when it died are read again; their keys (cluster,
// topic, partition, offset) make B store each once: every span
// acknowledged to the sender is in B exactly once.
//
// It needs the broker scripts/kafka/test.sh starts (make kafka-test), named
// by OTLP_LITE_KAFKA_BROKERS; without it it is skipped.
// OTLP_LITE_EXACTLY_ONCE_ROUNDS sets the kills (default 8).
func TestKafkaExactlyOnceConsumerKill(t *testing.T) {
	brokers := os.Getenv("OTLP_LITE_KAFKA_BROKERS")
	if brokers == "" {
		t.Skip("needs a Kafka broker: make kafka-test (OTLP_LITE_KAFKA_BROKERS)")
	}
	rounds := exactlyOnceRounds(t)
	sfx := fmt.Sprintf("_%d", time.Now().UnixNano()) // a real broker keeps earlier runs' topics
	topic, group := "exactly_once_spans"+sfx, "exactly_once"+sfx
	a := startServe(t, t.TempDir(), "", "-storage", "kafka", "-kafka-brokers", brokers, "-kafka-topic-traces", topic,
		"-kafka-produce-timeout", "30s")
	dirB := t.TempDir()
	startB := func() *serveProc {
		return startServe(t, dirB, "", "-kafka-consume", brokers, "-kafka-consume-group", group,
			"-kafka-consume-topic-traces", topic, "-kafka-consume-topic-metrics", "", "-kafka-consume-topic-logs", "",
			"-kafka-consume-session-timeout", "6s", "-kafka-consume-instance-id", "b", "-kafka-consume-max-poll-records", "50")
	}
	b := startB()
	exp := otlpclient.NewUnaryExporter(otlpclient.Config{
		Endpoint:        a.addr,
		IdempotencyKeys: true,
		RequestTimeout:  60 * time.Second,
		Backoff:         otlpclient.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond},
	})
	sender := startKeyedSender("kf", 4, 5, exp.Export)
	for range rounds {
		time.Sleep(time.Duration(200+rand.IntN(400)) * time.Millisecond) // the kill lands at a random moment of the load
		b.kill()
		b = startB()
	}
	acked := sender.finish(t)
	waitStored(t, dirB, storage.Traces, acked)
	// What B read last is committed on a clean stop; whatever it would
	// still read again arrives before then.
	a.stop(t)
	b.stop(t)
	stored := storedIDs(t, dirB, storage.Traces)
	dups := sender.duplicates(t, stored)
	t.Logf("%d kills of the consumer, %d spans acknowledged, %d stored, %d duplicates", rounds, len(acked), len(stored), dups)
	if dups > 0 {
		t.Errorf("%d spans stored more than once over %d kills", dups, rounds)
	}
}
