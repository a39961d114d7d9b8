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
// it, with and without an idempotency key (WriteKeyed). Like the tests it needs OTLP_LITE_KAFKA_BROKERS (scripts/kafka/test.sh
// -run '^$' -bench Write).
func BenchmarkWrite(b *testing.B) {
	env := os.Getenv("OTLP_LITE_KAFKA_BROKERS")
	if env == "" {
		b.Skip("OTLP_LITE_KAFKA_BROKERS not set")
	}
	for _, mode := range []string{"unkeyed", "by-trace-id", "idempotency-key"} {
		keyed, name := mode == "by-trace-id", mode
		write := func(s *kafka.Sink, msg []byte, n int) error {
			return s.Write(context.Background(), storage.Traces, msg, n)
		}
		if mode == "idempotency-key" {
			// WriteKeyed: the KeyHeader in the record (a UUID's length).
			write = func(s *kafka.Sink, msg []byte, n int) error {
				return s.WriteKeyed(context.Background(), storage.Traces, msg, n,
					storage.StoredKey{Key: "0190d9a2-7e1c-7b3e-9f0a-5c2d4e6f8a1b", Fingerprint: 1})
			}
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
					if err := write(s, msg, n); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}
