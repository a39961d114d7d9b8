package interop

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

var crashRounds = flag.Int("crash-rounds", 3, "rounds of TestCrashRecovery: each SIGKILLs the server under load and restarts it on the same data directory")

const (
	crashClients = 4
	crashIDKey   = "crash.id"
)

// TestCrashRecovery checks the receiver's durability promise: an Export
// answered OK is on disk (storage.Sink: "returns nil only once the data is
// stored as durably as the sink promises"). Several grpc-go clients send
// requests with unique ids while the server is SIGKILLed mid-load; the
// server is restarted on the same data directory (recovering whatever torn
// tail the kill left), stopped cleanly, and the store is read back. Every
// acknowledged id must be there, exactly once and byte-for-byte as sent;
// unacknowledged ones may or may not be; no record may fail to parse. The
// segments are small (crashSegmentSize) so that the store rolls to a new
// segment file every request or two while the kills land.
func TestCrashRecovery(t *testing.T) {
	dataDir := t.TempDir()
	sent := map[string]*coltracepb.ExportTraceServiceRequest{} // every id ever sent
	acked := map[string]bool{}
	for round := 0; round < *crashRounds; round++ {
		crashRound(t, dataDir, round, sent, acked)
		if t.Failed() {
			return
		}
	}
}

// crashSegmentSize is the -storage-max-segment-size of the crash test: the
// requests are up to ~64 KiB, so nearly every one starts a new segment and
// the kills land in segment rolls (new file, header, directory entry) as
// well as in the middle of records.
const crashSegmentSize = "64KiB"

func crashRound(t *testing.T, dataDir string, round int, sent map[string]*coltracepb.ExportTraceServiceRequest, acked map[string]bool) {
	srv := startServer(t, dataDir, "-storage-max-segment-size", crashSegmentSize)
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		stop  = make(chan struct{})
		calls int
		oks   int // acknowledged in this round
	)
	for c := 0; c < crashClients; c++ {
		client := coltracepb.NewTraceServiceClient(srv.dial(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("r%d-c%d-%d", round, c, seq)
				req := crashRequest(id, seq)
				mu.Lock()
				sent[id] = req
				mu.Unlock()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := client.Export(ctx, req)
				cancel()
				mu.Lock()
				calls++
				if err == nil {
					acked[id] = true
					oks++
				}
				mu.Unlock()
				if err != nil {
					// The server is gone; wait for the round to end
					// rather than spin on connection errors.
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		}()
	}
	// Kill after a second of load, but not before a few requests were
	// acknowledged (a loaded CI machine may need longer to get going).
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		enough := oks >= 20
		mu.Unlock()
		if enough && time.Since(start) >= time.Second {
			break
		}
	}
	srv.kill()
	close(stop)
	wg.Wait()
	t.Logf("round %d: %d Export calls, %d acknowledged before SIGKILL", round, calls, oks)
	if oks == 0 {
		t.Fatalf("round %d: no request was acknowledged in 10 s; server stderr:\n%s", round, srv.stderr.String())
	}

	// Restart on the same directory: recovery must cope with the torn tail
	// and the server must accept writes again.
	srv = startServer(t, dataDir, "-storage-max-segment-size", crashSegmentSize)
	afterID := fmt.Sprintf("r%d-after-restart", round)
	after := crashRequest(afterID, 0)
	sent[afterID] = after
	client := coltracepb.NewTraceServiceClient(srv.dial(t))
	if _, err := client.Export(callCtx(t), after); err != nil {
		t.Errorf("round %d: Export after restart: %v", round, err)
	} else {
		acked[afterID] = true
	}
	srv.stop()

	seen := map[string]int{}
	for _, req := range scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) }) {
		id := crashID(req)
		if id == "" {
			t.Errorf("round %d: stored request without a %s attribute", round, crashIDKey)
			continue
		}
		seen[id]++
		want, ok := sent[id]
		if !ok {
			t.Errorf("round %d: stored id %q was never sent", round, id)
			continue
		}
		if !proto.Equal(want, req) {
			t.Errorf("round %d: stored request %q differs from the one sent:\n%s", round, id, diffProto(want, req))
		}
	}
	lost := 0
	for id := range acked {
		if seen[id] == 0 {
			lost++
			if lost <= 10 {
				t.Errorf("round %d: acknowledged request %q is not in the store", round, id)
			}
		}
	}
	if lost > 0 {
		t.Errorf("round %d: %d of %d acknowledged requests lost", round, lost, len(acked))
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("round %d: request %q stored %d times (clients never retry)", round, id, n)
		}
	}
	t.Logf("round %d: %d distinct requests stored, %d acknowledged in total", round, len(seen), len(acked))
	// The kills must have had segment rolls to land in.
	st, err := disk.ReadStats(dataDir)
	if err != nil {
		t.Fatalf("round %d: disk.ReadStats: %v", round, err)
	}
	for _, ss := range st.Signals {
		if ss.Signal == storage.Traces && ss.Segments < 10*(round+1) {
			t.Errorf("round %d: %d traces segments after %d requests, want many (-storage-max-segment-size %s)", round, ss.Segments, len(seen), crashSegmentSize)
		} else if ss.Signal == storage.Traces {
			t.Logf("round %d: %d traces segments", round, ss.Segments)
		}
	}
}

// crashRequest builds a request identified by id, with between one and
// three spans and a payload whose size varies with seq (up to ~64 KiB) so
// that the kill can land inside records of different sizes.
func crashRequest(id string, seq int) *coltracepb.ExportTraceServiceRequest {
	pad := strings.Repeat("p", (seq*7919)%(64<<10))
	req := traceRequest(testSpan("crash", byte(seq), kv(crashIDKey, strV(id)), kv("pad", strV(pad))))
	spans := req.ResourceSpans[0].ScopeSpans[0]
	for i := 0; i < seq%3; i++ {
		spans.Spans = append(spans.Spans, testSpan(fmt.Sprintf("crash-extra-%d", i), byte(seq+i+1), kv(crashIDKey, strV(id))))
	}
	return req
}

// crashID returns the id carried by the first span of req.
func crashID(req *coltracepb.ExportTraceServiceRequest) string {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if id := attrString(s.GetAttributes(), crashIDKey); id != "" {
					return id
				}
			}
		}
	}
	return ""
}
