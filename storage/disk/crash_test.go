package disk

import (
	"bufio"
	"context"
	"fmt"
	"io"
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

const crashChildEnv = "OTLP_LITE_DISK_CRASH_CHILD"

// TestCrashChild is the writer process of TestCrashSIGKILL; it does nothing
// in a normal run. It stores records from several goroutines, with zstd and
// small segments so that kills land in rolls too, and prints each record's
// id on stdout once Write has returned nil.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("the child process of TestCrashSIGKILL")
	}
	s, err := Open(dir, Options{Compression: CompressionZstd, MaxSegmentSize: 8 << 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	round := os.Getenv(crashChildEnv + "_ROUND")
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				id := fmt.Sprintf("r%s-w%d-%d", round, w, i)
				// Varied sizes: 0.1 to 4 KB of a compressible payload.
				p := id + " " + strings.Repeat("payload ", 10+(i*37)%500)
				if err := s.Write(context.Background(), storage.Logs, []byte(p), 1+i%5); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(4)
				}
				mu.Lock()
				os.Stdout.WriteString(id + "\n")
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestCrashSIGKILL kills a writing process at random moments, round after
// round on the same directory, while this process tails the log with a
// Reader. Every record whose Write returned nil must be stored, intact,
// exactly once; no reader may ever see damage, neither the live tail nor a
// final Scan. Rounds: 20, or OTLP_LITE_SOAK_ROUNDS.
func TestCrashSIGKILL(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" || testing.Short() {
		t.Skip("parent only; starts processes")
	}
	rounds := 20
	if s := os.Getenv("OTLP_LITE_SOAK_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("bad OTLP_LITE_SOAK_ROUNDS %q", s)
		}
		rounds = n
	}
	dir := t.TempDir()
	acked := map[string]bool{}

	// The live tail.
	stopTail := make(chan struct{})
	tailErr := make(chan error, 1)
	tailed := map[string]int{}
	go func() {
		r := NewReader(dir, storage.Logs, Position{})
		defer r.Close()
		for {
			rec, err := r.Next()
			if err == io.EOF {
				select {
				case <-stopTail:
					tailErr <- nil
					return
				case <-time.After(5 * time.Millisecond):
				}
				continue
			}
			if err != nil {
				tailErr <- err
				return
			}
			id, _, _ := strings.Cut(string(rec.Data), " ")
			tailed[id]++
		}
	}()

	loadedRounds := 0 // rounds killed during the load, after an acknowledgement
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashChildEnv+"_ROUND="+strconv.Itoa(round))
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
		started := make(chan struct{}) // closed at the child's first acknowledgement
		go func() {
			var ids []string
			br := bufio.NewReader(out)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					break // a line cut by the kill was not acknowledged
				}
				if ids == nil {
					close(started)
				}
				ids = append(ids, strings.TrimSuffix(line, "\n"))
			}
			if ids == nil {
				close(started)
			}
			lines <- ids
		}()
		// The kill lands at a random moment of the load, not of the
		// child's start: on a loaded machine the child may take longer to
		// open the store than the random delay.
		select {
		case <-started:
		case <-time.After(60 * time.Second):
		}
		time.Sleep(time.Duration(30+rand.IntN(200)) * time.Millisecond)
		cmd.Process.Kill()
		ids := <-lines
		cmd.Wait()
		if strings.Contains(stderr.String(), "FAIL") || cmd.ProcessState.ExitCode() > 0 {
			t.Fatalf("round %d: child failed:\n%s", round, stderr.String())
		}
		for _, id := range ids {
			acked[id] = true
		}
		if len(ids) > 0 {
			loadedRounds++
		}
	}
	// Recover the last kill's tail, as a restart would.
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	time.Sleep(50 * time.Millisecond)
	close(stopTail)
	if err := <-tailErr; err != nil {
		t.Fatalf("the live reader saw: %v", err)
	}

	stored := map[string]int{}
	err = Scan(dir, storage.Logs, func(r Record) error {
		id, rest, ok := strings.Cut(string(r.Data), " ")
		if !ok || !strings.HasPrefix(rest, "payload ") {
			return fmt.Errorf("record at %s:%d is not what was written: %.40q", r.Segment, r.Offset, r.Data)
		}
		stored[id]++
		return nil
	})
	if err != nil {
		t.Fatalf("final scan: %v", err)
	}
	var lost []string
	for id := range acked {
		if stored[id] != 1 {
			lost = append(lost, fmt.Sprintf("%s(x%d)", id, stored[id]))
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d acknowledged records not stored exactly once: %v", len(lost), lost[:min(len(lost), 10)])
	}
	for id, n := range stored {
		if n != 1 {
			t.Fatalf("%s stored %d times", id, n)
		}
		if tailed[id] != 1 {
			t.Fatalf("the live reader saw %s %d times", id, tailed[id])
		}
	}
	// The test means something only if the kills landed during the load:
	// most rounds must have acknowledged something before theirs (on a
	// machine too loaded to start a child within a minute, a round may
	// not; one such round must not fail the test).
	segs, _ := listSegments(dir + "/logs")
	if loadedRounds < rounds/2 {
		t.Fatalf("only %d of %d rounds acknowledged a record before the kill (%d records, %d segments): the load did not run", loadedRounds, rounds, len(acked), len(segs))
	}
	t.Logf("%d rounds: %d records acknowledged, %d stored, %d segments", rounds, len(acked), len(stored), len(segs))
}
