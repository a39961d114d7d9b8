package interop

import (
	"fmt"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestDataDirExclusive: the disk store is a log with one writer; a second
// server started on a data directory that a running server holds must
// refuse to start. If it starts anyway, the test shows what that costs:
// both processes append to the same segments, each with its own idea of
// their end, and acknowledged requests vanish.
func TestDataDirExclusive(t *testing.T) {
	dataDir := t.TempDir()
	a := startServer(t, dataDir)
	b, err := tryStartServer(t, dataDir, nil)
	if err != nil {
		t.Logf("second server on the same data directory refused to start: %v", err)
		a.stop()
		return
	}

	acked := map[string]bool{}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for i, s := range []*server{a, b, a, b} {
		client := coltracepb.NewTraceServiceClient(s.dial(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; seq < 100; seq++ {
				id := fmt.Sprintf("s%d-%d", i, seq)
				if _, err := client.Export(callCtx(t), crashRequest(id, seq)); err == nil {
					mu.Lock()
					acked[id] = true
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	a.stop()
	b.stop()
	seen := map[string]bool{}
	for _, req := range scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }) {
		seen[crashID(req)] = true
	}
	lost := 0
	for id := range acked {
		if !seen[id] {
			lost++
		}
	}
	t.Errorf("a second server started on data directory %s while the first held it (no lock); with both serving, %d of %d acknowledged requests are not in the store", dataDir, lost, len(acked))
}
