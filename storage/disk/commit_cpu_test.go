package disk

import (
	"context"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// BenchmarkDurableCommitOne is one writer storing a real 500-span request
// at a time with SyncAlways: every commit holds one record, so the CPU
// per commit (cpu-ns/op: the process's, user and system) does not depend
// on how the disk's latency groups concurrent writers, as
// DurableIngest's does. It compares builds of the commit path:
//
//	go test -run '^$' -bench DurableCommitOne -count 6 ./storage/disk/
func BenchmarkDurableCommitOne(b *testing.B) {
	payload, spans := realTraces(b)
	s, err := Open(b.TempDir(), Options{Sync: SyncAlways})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	ctx := context.Background()
	if err := s.Write(ctx, storage.Traces, payload, spans); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := processCPU(b)
	for b.Loop() {
		if err := s.Write(ctx, storage.Traces, payload, spans); err != nil {
			b.Fatal(err)
		}
	}
	cpu := processCPU(b) - cpu0
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(cpu)/float64(b.N*spans), "cpu-ns/span")
}
