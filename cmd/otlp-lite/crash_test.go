package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// crashRounds is how many times TestCrashConsistency SIGKILLs the server:
// 20 by default (a few seconds), OTLP_LITE_SOAK_ROUNDS for a soak.
func crashRounds(t *testing.T) int {
	if s := os.Getenv("OTLP_LITE_SOAK_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("bad OTLP_LITE_SOAK_ROUNDS %q", s)
		}
		return n
	}
	return 20
}

// TestCrashConsistency is the disk store's durability promise end to end:
// an Export answered OK is stored. Writers send requests with unique item
// ids to a real `otlp-lite serve` while it is SIGKILLed at a random moment,
// round after round, on the same data directory, each restart recovering
// whatever the kill left. Then:
//   - every item of every acknowledged request is stored (zero loss);
//   - every stored record parses, holds as many items as its header says,
//     and the scan reports no damage (zero corrupt records served);
//   - nothing is stored that was never sent.
//
// Requests cut off by the kill may or may not be stored (the client was not
// told either way), but a request is stored whole or not at all.
//
// A SIGKILL tests process crashes, not power loss: the page cache survives.
// The fsync half of the promise rests on sync=always's fsync before the OK.
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a server repeatedly")
	}
	rounds := crashRounds(t)
	dataDir := t.TempDir()
	const writers = 4
	var (
		mu    sync.Mutex
		sent  = map[string]bool{} // id -> sent at least once
		acked = map[string]bool{}
		calls int
	)
	// Once serve takes the -storage-* flags, every other round runs with
	// zstd and small segments, so that kills also land in segment rolls and
	// in segments of both compressions.
	variants := [][]string{nil}
	if help, _ := exec.Command(otlpLiteBinary(t), "serve", "-h").CombinedOutput(); strings.Contains(string(help), "-storage-compression") {
		variants = append(variants, []string{"-storage-compression", "zstd", "-storage-max-segment-size", "16KiB"})
	}
	for round := range rounds {
		srv := startServe(t, dataDir, "", variants[round%len(variants)]...)
		c := srv.client()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for seq := 0; ; seq++ {
					select {
					case <-stop:
						return
					default:
					}
					// 1 to 20 spans per request, so records have varied sizes
					// and a torn record can hold several ids.
					n := 1 + (seq*7+w)%20
					ids := make([]string, n)
					for i := range ids {
						ids[i] = fmt.Sprintf("r%d-w%d-s%d-i%d", round, w, seq, i)
					}
					mu.Lock()
					for _, id := range ids {
						sent[id] = true
					}
					mu.Unlock()
					err := sendIDs(context.Background(), c, storage.Traces, nil, ids...)
					mu.Lock()
					calls++
					if err == nil {
						for _, id := range ids {
							acked[id] = true
						}
					}
					mu.Unlock()
					if err != nil {
						// The server is gone; the round is ending.
						<-stop
						return
					}
				}
			}()
		}
		time.Sleep(time.Duration(50+rand.IntN(250)) * time.Millisecond)
		srv.kill()
		close(stop)
		wg.Wait()
	}
	// A last clean start recovers the last kill's tail; a clean stop leaves
	// the store closed.
	startServe(t, dataDir, "").stop(t)

	stored := storedIDs(t, dataDir, storage.Traces)
	lost := map[string]int{}
	for id := range acked {
		if stored[id] == 0 {
			lost[id] = 1
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d acknowledged items lost:%s", len(lost), joinIDs(lost))
	}
	for id, n := range stored {
		if !sent[id] {
			t.Fatalf("stored item %q was never sent", id)
		}
		if n != 1 {
			t.Fatalf("item %q stored %d times (each request was sent once)", id, n)
		}
	}
	if len(acked) < rounds*writers {
		t.Fatalf("only %d items acknowledged in %d rounds: the load did not run", len(acked), rounds)
	}
	t.Logf("%d rounds, %d requests, %d items acknowledged, %d stored (the rest were cut off by the kill)", rounds, calls, len(acked), len(stored))
}
