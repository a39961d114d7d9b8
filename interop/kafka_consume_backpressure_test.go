package interop

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// gateSink refuses every write as unavailable (retryable) until opened,
// remembering which requests were attempted.
type gateSink struct {
	mu       sync.Mutex
	open     bool
	attempts int
	seen     map[string]bool
	stored   int
	changed  chan struct{}
}

func (g *gateSink) Write(_ context.Context, _ storage.Signal, data []byte, items int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	defer func() {
		select {
		case g.changed <- struct{}{}:
		default:
		}
	}()
	g.attempts++
	g.seen[string(data)] = true
	if !g.open {
		return storage.ErrUnavailable
	}
	g.stored += items
	return nil
}

func (g *gateSink) Close() error { return nil }

// wait waits until cond holds under g.mu.
func (g *gateSink) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		g.mu.Lock()
		ok := cond()
		g.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-g.changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestKafkaConsumeBackpressure: while storage refuses writes as retryable,
// the consumer retries the records it holds (never skips them, never
// dead-letters them), holds no more than one poll of them, commits
// nothing, and reads nothing further; once storage recovers, every record
// is stored and committed.
func TestKafkaConsumeBackpressure(t *testing.T) {
	const (
		records = 200
		maxPoll = 10
	)
	brokers := newKfake(t)
	pcl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	for i := range records {
		if err := pcl.ProduceSync(context.Background(), &kgo.Record{Topic: "otlp_spans", Value: seqRequest(i, 1)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	pcl.Close()

	sink := &gateSink{seen: map[string]bool{}, changed: make(chan struct{}, 1)}
	set := metrics.NewSet()
	h := handler.New(handler.Config{Sink: sink, Logger: quietLogger(t)})
	c, err := kafkasource.NewConsumer(kafkasource.ConsumerConfig{Brokers: brokers, Group: "backpressure", Pipeline: h.Pipeline(), Metrics: set, Logger: quietLogger(t),
		Topics: map[otlp.Signal]string{otlp.Traces: "otlp_spans"}, MaxPollRecords: maxPoll, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- c.Run(ctx) }()
	defer func() {
		stop()
		<-ran
	}()

	// Every held record retried a few times.
	sink.wait(t, "retries", func() bool { return sink.attempts >= 3*maxPoll })
	sink.mu.Lock()
	held := len(sink.seen)
	sink.mu.Unlock()
	if held > maxPoll {
		t.Errorf("%d records handed to storage while it refused them all; the consumer should hold at most one poll (%d)", held, maxPoll)
	}
	if got := committedOffsets(t, brokers, "backpressure")["otlp_spans"]; got > 0 {
		t.Errorf("%d offsets committed while nothing was stored", got)
	}
	if n := metricValue(set, `otlplite_kafka_consume_dead_letter_records_total{topic="otlp_spans"}`); n != 0 {
		t.Errorf("%d records dead-lettered for a retryable refusal", n)
	}
	if n := metricValue(set, `otlplite_kafka_consume_retries_total{topic="otlp_spans"}`); n <= 0 {
		t.Errorf("retries counted: %d", n)
	}

	sink.mu.Lock()
	sink.open = true
	sink.mu.Unlock()
	sink.wait(t, "every record stored", func() bool { return sink.stored == records })
	waitCommitted(t, brokers, "backpressure", []string{"otlp_spans"}, 60*time.Second)
	t.Logf("%d records held while storage refused, %d write attempts, then all %d stored", held, sink.attempts, records)
}
