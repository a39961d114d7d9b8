package kafkasource_test

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// A storage engine that brings its own storage.Sink consumes the
// Collector's topics (otlp_spans, otlp_metrics, otlp_logs) through an
// ingest pipeline (no HTTP), which validates each record and applies the
// admission budget as for a received request. Offsets are committed only once the sink has
// returned nil for the records they cover. (A runnable version with an
// in-process cluster is Example_kafkaConsumerEmbedded in the interop
// module.)
func ExampleConsumer() {
	var sink discard.Sink // the engine's storage.Sink
	p := ingest.New(ingest.Config{Sink: &sink})
	c, err := kafkasource.NewConsumer(kafkasource.ConsumerConfig{
		Brokers:  []string{"kafka-1:9092", "kafka-2:9092"},
		Group:    "my-engine",
		Pipeline: p,
	})
	if err != nil {
		panic(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := c.Run(ctx); err != nil { // until SIGTERM
		panic(err)
	}
}
