package disk

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestDirectCommitAsync: where the system has AIO, a directly written
// log commits through it (aio_linux.go), and where it has none (noAIO)
// through pwrite; either way every acknowledged record is read back, in
// the order of its writer, and nothing else. Concurrent writers make
// group commits of several records, each laid out for its block.
func TestDirectCommitAsync(t *testing.T) {
	for _, async := range []bool{true, false} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			dir := t.TempDir()
			s := openDirect(t, dir, Options{})
			l := s.logs[storage.Traces]
			if !async {
				l.noAIO = true // before the first commit, which sets up AIO
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			var acked []string
			for w := range 4 {
				wg.Go(func() {
					for i := range 40 {
						id := fmt.Sprintf("w%d-%03d", w, i)
						if err := s.Write(context.Background(), storage.Traces, []byte(id+" "+strings.Repeat("z", (i*1237+w*71)%20000)), 1); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						acked = append(acked, id)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if async && l.aio == nil && !l.noAIO {
				t.Fatal("a direct commit neither set up AIO nor recorded that it has none")
			}
			if async && l.aio == nil {
				t.Logf("no AIO here: the commits went through pwrite")
			}
			if !async && l.aio != nil {
				t.Fatal("AIO set up although noAIO")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if l.aio != nil {
				t.Fatal("Close left the AIO context open")
			}
			got := scanIDs(t, dir, storage.Traces)
			sameSet(t, got, acked)
			// Each writer's records in the order it wrote them.
			last := map[byte]string{}
			for _, id := range got {
				if prev := last[id[1]]; prev > id {
					t.Fatalf("%s after %s", id, prev)
				}
				last[id[1]] = id
			}
		})
	}
}
