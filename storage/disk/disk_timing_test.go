package disk

import (
	"context"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// BenchmarkWriteParallel measures durable writes of 64 KiB requests from many
// goroutines: group commit shares each fsync among all waiting writers.
func BenchmarkWriteParallel(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	payload := make([]byte, 64<<10)
	b.SetBytes(int64(len(payload)))
	b.SetParallelism(16)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Write(context.Background(), storage.Traces, payload, 500); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
