package disk

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// BenchmarkLargeGroupCommit is the unary server's disk log at its largest
// requests (issue 23's whole-server profiles, bench/cmd/streamcpu): ten
// writers each store a 2 MB record at once with SyncAlways and wait for
// it, so that one op is one group commit of about 20 MB (commits/op says
// how many it took). B/op and allocs/op are the batch buffers' churn;
// cpu-ns/op the process's CPU (user and system) for the op; direct is the
// O_DIRECT|O_DSYNC commit (direct.go), buffered a write and an fsync.
//
//	go test -run '^$' -bench LargeGroupCommit -benchmem -count 6 ./storage/disk/
func BenchmarkLargeGroupCommit(b *testing.B) {
	for _, mode := range []string{"direct", "buffered"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "buffered" {
				simulatedNoDirect.Store(1)
				defer simulatedNoDirect.Store(0)
			}
			benchGroupCommit(b, 10, 2<<20)
		})
	}
}

// benchGroupCommit is BenchmarkLargeGroupCommit's op: writers records of
// size bytes stored at once, each waiting for its commit.
func benchGroupCommit(b *testing.B, writers, size int) {
	var commits atomic.Int64
	s, err := Open(b.TempDir(), Options{Sync: SyncAlways, ObserveSync: func(storage.Signal, time.Duration) { commits.Add(1) }})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(i * 31)
	}
	ctx := context.Background()
	op := func() {
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				if err := s.Write(ctx, storage.Traces, payload, 1); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	op() // the segment's first commit and the first buffers
	b.SetBytes(int64(writers * size))
	b.ReportAllocs()
	b.ResetTimer()
	commits.Store(0)
	cpu0 := processCPU(b)
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(commits.Load())/float64(b.N), "commits/op")
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N*writers), "cpu-ns/record")
}

// BenchmarkCommitPerRecord is what a commit costs beside the records it
// carries: 2 MB records stored with SyncAlways by one writer at a time
// (one record per commit, as an export stream that decodes its requests
// one after the other commits) or by ten at once (about five per
// commit, as ten unary calls in flight share them). cpu-ns/record is the
// process's CPU per record; BenchmarkAppendRecord2MB is the part of it
// that copies the record into the batch and sums its CRC-32C, and
// writers=1/4KiB (a commit of one small record) the commit's own.
//
//	go test -run '^$' -bench 'CommitPerRecord|AppendRecord2MB' -benchmem -count 6 ./storage/disk/
func BenchmarkCommitPerRecord(b *testing.B) {
	for _, writers := range []int{1, 10} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			benchGroupCommit(b, writers, 2<<20)
		})
	}
	// A commit's own cost: one 4 KiB record each.
	b.Run("writers=1/4KiB", func(b *testing.B) { benchGroupCommit(b, 1, 4<<10) })
}

// BenchmarkAppendRecord2MB frames a 2 MB record into a batch buffer: the
// copy and the CRC every stored byte costs, whatever the commits.
func BenchmarkAppendRecord2MB(b *testing.B) {
	payload := make([]byte, 2<<20)
	for i := range payload {
		payload[i] = byte(i * 31)
	}
	buf := alignedBytes(len(payload) + 2*blockSize)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		buf = appendKeyedRecord(buf[:0], 1, 1, "", nil, payload)
	}
}
