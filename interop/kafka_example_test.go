package interop

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/storage"
)

// engineSink is an embedding storage engine's own storage.Sink: here it
// only reports what it is given.
type engineSink struct{ stored chan string }

func (s *engineSink) Write(_ context.Context, sig storage.Signal, data []byte, items int) error {
	s.stored <- fmt.Sprintf("stored %d %s (%d bytes of %s)", items, sig.Info().Items, len(data), sig.Info().Request)
	return nil
}

func (s *engineSink) Close() error { return nil }

// A storage engine consumes OTLP from Kafka into its own storage.Sink: the
// handler brings the receivers' validation and admission budget, the
// consumer the group membership and the at-least-once offset commits. The
// in-process kfake cluster stands in for the engine's brokers.
func Example_kafkaConsumerEmbedded() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation())
	if err != nil {
		panic(err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()

	// An edge (here: a franz-go producer) wrote one traces request.
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID([16]byte{1, 15: 1})
	sp.SetSpanID([8]byte{2, 7: 2})
	sp.SetName("checkout")
	value, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	pcl, _ := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation())
	if err := pcl.ProduceSync(context.Background(), &kgo.Record{Topic: "otlp_spans", Value: value}).FirstErr(); err != nil {
		panic(err)
	}
	pcl.Close()

	// The engine's side.
	sink := &engineSink{stored: make(chan string, 1)}
	quiet := slog.New(slog.DiscardHandler)
	h := handler.New(handler.Config{Sink: sink, Logger: quiet})
	c, err := kafkasource.NewConsumer(kafkasource.ConsumerConfig{Brokers: brokers, Group: "engine", Pipeline: h.Pipeline(), Logger: quiet})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	fmt.Println(<-sink.stored)
	stop() // commits what is stored, leaves the group
	fmt.Println("run:", <-done)
	// Output:
	// stored 1 spans (52 bytes of ExportTraceServiceRequest)
	// run: <nil>
}
