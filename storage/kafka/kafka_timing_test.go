package kafka_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// BenchmarkWrite measures acknowledged writes (acks=all) of a 12.5 KB traces
// request to a real broker, from concurrent writers as the handler calls
// it. Like the tests it needs OTLP_LITE_KAFKA_BROKERS (scripts/kafka/test.sh
// -run '^$' -bench Write).
func BenchmarkWrite(b *testing.B) {
	env := os.Getenv("OTLP_LITE_KAFKA_BROKERS")
	if env == "" {
		b.Skip("OTLP_LITE_KAFKA_BROKERS not set")
	}
	for _, keyed := range []bool{false, true} {
		name := "unkeyed"
		if keyed {
			name = "by-trace-id"
		}
		b.Run(name, func(b *testing.B) {
			s, err := kafka.Open(kafka.Config{Brokers: strings.Split(env, ","), PartitionTracesByID: keyed,
				TracesTopic: "otlp_spans_bench"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			msg := payload(b, "traces_all_fields.pb")
			n := items(b, storage.Traces, msg)
			if err := s.Write(context.Background(), storage.Traces, msg, n); err != nil {
				b.Fatal(err) // creates the topic
			}
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.Write(context.Background(), storage.Traces, msg, n); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}
