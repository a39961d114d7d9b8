package disk

import (
	"context"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestWriteAllocs bounds the allocations of one Write on the hot path. A
// lone writer gets a batch of its own, whose done channel and struct are
// the only allocations (the record is appended into a reused buffer);
// under concurrency they are shared by every writer in the batch. zstd
// compresses into a pooled buffer with a shared encoder.
func TestWriteAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("fsyncs")
	}
	payload := make([]byte, 4096)
	for i := range payload {
		payload[i] = byte(i * 31)
	}
	for _, tt := range []struct {
		c    Compression
		want float64
	}{{CompressionNone, 2}, {CompressionZstd, 2}} {
		t.Run(tt.c.String(), func(t *testing.T) {
			s, err := Open(t.TempDir(), Options{Compression: tt.c, Sync: SyncNone})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			s.Write(ctx, storage.Traces, payload, 1) // warm the pools
			allocs := testing.AllocsPerRun(200, func() {
				if err := s.Write(ctx, storage.Traces, payload, 1); err != nil {
					t.Fatal(err)
				}
			})
			if allocs > tt.want {
				t.Fatalf("Write allocates %.1f times, want <= %.0f", allocs, tt.want)
			}
			t.Logf("%s: %.1f allocs per Write", tt.c, allocs)
		})
	}
}
