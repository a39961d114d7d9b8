package ingest

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

const dedupCrashChildEnv = "OTLP_LITE_DEDUP_CRASH_CHILD"

// TestDedupCrashChild is the receiver process of TestDedupSIGKILL; it does
// nothing in a normal run. Over the disk log in the directory its
// environment names (fsync before each answer), it exports requests k-0,
// k-1, ... with their names as keys, each a span named after it, from the
// first, as a client resending everything after a restart does, and
// prints each key once its Export has returned OK.
func TestDedupCrashChild(t *testing.T) {
	dir := os.Getenv(dedupCrashChildEnv)
	if dir == "" {
		t.Skip("the child process of TestDedupSIGKILL")
	}
	store, err := disk.Open(dir, disk.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	p := New(Config{Sink: store, Logger: quietLog()})
	for i := 0; ; i++ {
		key := fmt.Sprint("k-", i)
		if _, st := exportKeyed(p, context.Background(), key, spans(key)); st != nil {
			fmt.Fprintln(os.Stderr, st)
			os.Exit(4)
		}
		os.Stdout.WriteString(key + "\n")
	}
}

// TestDedupSIGKILL kills the receiver at random moments, round after round
// on the same log; each round resends every request of the rounds before
// under its key. Every key acknowledged is stored once, and no key twice:
// the answers lost to the kill (stored, never acknowledged) are stored
// once too, because the window rebuilt from the log answers their resend.
func TestDedupSIGKILL(t *testing.T) {
	if os.Getenv(dedupCrashChildEnv) != "" || testing.Short() {
		t.Skip("parent only; starts processes")
	}
	const rounds = 4
	dir := t.TempDir()
	acked := map[string]bool{}
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDedupCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), dedupCrashChildEnv+"="+dir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan []string, 1)
		started := make(chan struct{})
		go func() {
			var keys []string
			br := bufio.NewReader(out)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					break // a line cut by the kill was not acknowledged
				}
				if keys == nil {
					close(started)
				}
				keys = append(keys, strings.TrimSuffix(line, "\n"))
			}
			if keys == nil {
				close(started)
			}
			lines <- keys
		}()
		select {
		case <-started:
		case <-time.After(60 * time.Second):
		}
		// The kill's moment is the test's variable, not a wait for
		// anything: it lands among the resends or the new requests.
		time.Sleep(time.Duration(50+rand.IntN(200)) * time.Millisecond)
		cmd.Process.Kill()
		keys := <-lines
		cmd.Wait()
		if strings.Contains(stderr.String(), "FAIL") || cmd.ProcessState.ExitCode() > 0 {
			t.Fatalf("round %d: child failed:\n%s", round, stderr.String())
		}
		for _, k := range keys {
			acked[k] = true
		}
	}
	stored := map[string]int{}
	err := disk.Scan(dir, otlp.Traces, func(r disk.Record) error {
		k, ok := r.IdempotencyKey()
		if !ok {
			return fmt.Errorf("record at %s:%d has no key", r.Segment, r.Offset)
		}
		stored[k.Key]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range acked {
		if stored[k] != 1 {
			t.Errorf("acknowledged %s stored %d times", k, stored[k])
		}
	}
	for k, n := range stored {
		if n != 1 {
			t.Errorf("%s stored %d times", k, n)
		}
	}
	if len(acked) == 0 {
		t.Fatal("no request was acknowledged: the load did not run")
	}
	t.Logf("%d rounds: %d keys acknowledged, %d stored once each", rounds, len(acked), len(stored))
}
