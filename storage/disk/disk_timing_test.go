package disk

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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

// realTraces is a real ExportTraceServiceRequest: 500 spans under 10
// resources, about 210 KB.
func realTraces(b *testing.B) ([]byte, int) {
	p, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", "traces_500x10.pb"))
	if err != nil {
		b.Fatal(err)
	}
	return p, 500
}

// BenchmarkDurableIngest and BenchmarkRawWriteFsync are a pair, to be run
// together on the same disk:
//
//	go test -run '^$' -bench 'DurableIngest|RawWriteFsync' -benchtime 3s ./storage/disk/
//
// DurableIngest is what the receiver does with sync=always: 16 concurrent
// clients each store a real 500-span request and wait for its fsync.
// RawWriteFsync is the disk's own ceiling for the same promise: one writer
// appending the same bytes to a file and fsyncing after each write, with
// no framing, CRC or coordination, once per request-sized block and once
// with 1 and 4 MiB blocks (the disk's sequential fsync bandwidth, which
// group commit approaches by syncing many requests at once). The MB/s
// ratios are the store's efficiency.
func BenchmarkDurableIngest(b *testing.B) {
	for _, c := range []Compression{CompressionNone, CompressionZstd} {
		b.Run(c.String(), func(b *testing.B) {
			payload, spans := realTraces(b)
			s, err := Open(b.TempDir(), Options{Sync: SyncAlways, Compression: c})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.SetBytes(int64(len(payload)))
			b.SetParallelism(8) // 16 writers on 2 cores
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.Write(context.Background(), storage.Traces, payload, spans); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N*spans)/b.Elapsed().Seconds(), "spans/s")
			// The process's CPU (user and system) per span: what the
			// durable write costs, less sensitive than the time to a
			// disk shared with others.
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N*spans), "cpu-ns/span")
		})
	}
}

func BenchmarkRawWriteFsync(b *testing.B) {
	payload, spans := realTraces(b)
	for _, block := range []struct {
		name string
		n    int
	}{{"request", len(payload)}, {"1MiB", 1 << 20}, {"4MiB", 4 << 20}} {
		b.Run(block.name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "raw"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, block.n)
			for i := 0; i < len(buf); i += len(payload) {
				copy(buf[i:], payload)
			}
			b.SetBytes(int64(len(buf)))
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.Write(buf); err != nil {
					b.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(len(buf))/float64(len(payload))*float64(spans)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}

// BenchmarkRawWriteDirect is RawWriteFsync for the way SyncAlways writes
// on Linux (direct.go): one writer, O_DIRECT|O_DSYNC, whole blocks into
// zeros written ahead, so that a write is durable when it returns and
// changes no metadata; the disk's ceiling for DurableIngest's writes.
func BenchmarkRawWriteDirect(b *testing.B) {
	if directFlags == 0 {
		b.Skip("no O_DIRECT here")
	}
	payload, spans := realTraces(b)
	for _, block := range []struct {
		name string
		n    int
	}{{"request", alignUp(len(payload))}, {"1MiB", 1 << 20}, {"4MiB", 4 << 20}} {
		b.Run(block.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "raw")
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|directFlags, 0o644)
			if err != nil {
				b.Skipf("no O_DIRECT on this filesystem: %v", err)
			}
			defer f.Close()
			buf := alignedBytes(block.n)
			for i := 0; i < len(buf); i += len(payload) {
				copy(buf[i:], payload)
			}
			zero := alignedBytes(4 << 20)
			var off, alloc int64
			b.SetBytes(int64(len(buf)))
			b.ResetTimer()
			for b.Loop() {
				for off+int64(len(buf)) > alloc {
					if _, err := f.WriteAt(zero, alloc); err != nil {
						b.Fatal(err)
					}
					alloc += int64(len(zero))
				}
				if _, err := f.WriteAt(buf, off); err != nil {
					b.Fatal(err)
				}
				off += int64(len(buf))
			}
			b.ReportMetric(float64(b.N)*float64(len(buf))/float64(len(payload))*float64(spans)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}

// processCPU returns the CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
