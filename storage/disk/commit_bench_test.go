package disk

import (
	"context"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// BenchmarkConsumerCommit is one record read and committed: what a
// forwarder's cursor commit costs (one fsync of the cursor in place).
func BenchmarkConsumerCommit(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(dir, Options{Sync: SyncNone})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 200)
	for range b.N {
		if err := s.Write(context.Background(), storage.Traces, payload, 1); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	c, err := OpenConsumerAt(dir, "bench", storage.Traces, StartOldest)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Next(); err != nil {
			b.Fatal(err)
		}
		if err := c.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
