package interop

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// startForwarder starts otlp-lite with its admin listener on (for the
// otlplite_forward_* metrics) and the given -forward flags.
func startForwarder(t *testing.T, dataDir string, forwards ...string) (*server, string) {
	t.Helper()
	admin := freeAddr(t)
	args := []string{"-admin-addr", admin}
	for _, f := range forwards {
		args = append(args, "-forward", f)
	}
	return startServer(t, dataDir, args...), admin
}

// storedItems counts the spans in the data directory's traces log.
func storedItems(t *testing.T, dataDir string) int {
	t.Helper()
	n := 0
	if err := disk.Scan(dataDir, storage.Traces, func(r disk.Record) error { n += r.Items; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestForwardCollectorOutage: otlp-lite forwards to the Collector's OTLP
// receiver (over OTLP/gRPC, then OTLP/HTTP) while a client sends; the
// Collector is stopped under load and started again. Every acknowledged
// span reaches it, the lag is zero at the end, and the Collector received
// exactly what otlp-lite stored (no loss; with a clean stop, no
// duplicates either).
func TestForwardCollectorOutage(t *testing.T) {
	for _, proto := range []string{"grpc", "http"} {
		t.Run(proto, func(t *testing.T) {
			grpcAddr, httpAddr := freeAddr(t), freeAddr(t)
			sink := newSpanCounter()
			col := startCollector(t, grpcAddr, httpAddr, sink)
			target := "grpc://" + grpcAddr
			if proto == "http" {
				target = "http://" + httpAddr
			}
			dataDir := t.TempDir()
			srv, admin := startForwarder(t, dataDir, "col="+target+"?signals=traces&retry-initial-backoff=50ms&retry-max-backoff=500ms")

			stop := make(chan struct{})
			result := make(chan map[string]bool)
			go func() { result <- load(t, srv, "o", 5, stop) }()
			waitSome(t, sink, 200)
			col.stop() // the destination goes away under load
			waitScrape(t, admin, `otlplite_forward_state{destination="col",state="backing_off"}`, "1")
			// Load keeps arriving while it is down: wait for a backlog.
			waitMetricAbove(t, admin, `otlplite_forward_lag_records{destination="col",signal="traces"}`, 50)
			col = startCollector(t, grpcAddr, httpAddr, sink)
			close(stop)
			acked := <-result
			waitAll(t, sink, acked, "after the outage")
			waitScrape(t, admin, `otlplite_forward_lag_records{destination="col",signal="traces"}`, "0")
			srv.stop()
			distinct, total := sink.counts()
			if stored := storedItems(t, dataDir); stored != distinct {
				t.Fatalf("otlp-lite stored %d spans, the Collector received %d distinct: stored minus forwarded must be 0", stored, distinct)
			}
			t.Logf("%s: %d spans acknowledged by otlp-lite, %d distinct at the Collector, %d deliveries", proto, len(acked), distinct, total)
		})
	}
}

// waitSome waits until sink has at least n spans: forwarding is under way.
func waitSome(t *testing.T, sink *spanCounter, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if d, _ := sink.counts(); d >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d spans reached the Collector", n)
		}
		time.Sleep(20 * time.Millisecond) // polling
	}
}

// TestForwardTwoDestinationsOneDown: two Collectors; the second is down
// for the whole load. The first receives everything as it arrives; the
// second, started afterwards, catches up with all of it.
func TestForwardTwoDestinationsOneDown(t *testing.T) {
	upGRPC, upHTTP := freeAddr(t), freeAddr(t)
	downGRPC, downHTTP := freeAddr(t), freeAddr(t)
	upSink, downSink := newSpanCounter(), newSpanCounter()
	startCollector(t, upGRPC, upHTTP, upSink)
	dataDir := t.TempDir()
	srv, admin := startForwarder(t, dataDir,
		"up=grpc://"+upGRPC+"?signals=traces",
		"down=http://"+downHTTP+"?signals=traces&retry-initial-backoff=50ms&retry-max-backoff=500ms")
	stop := make(chan struct{})
	result := make(chan map[string]bool)
	go func() { result <- load(t, srv, "t", 5, stop) }()
	waitSome(t, upSink, 500)
	close(stop)
	acked := <-result
	waitAll(t, upSink, acked, "the destination that is up")
	if d, _ := downSink.counts(); d != 0 {
		t.Fatalf("the down destination received %d spans", d)
	}
	if v := scrape(t, admin, `otlplite_forward_lag_records{destination="down",signal="traces"}`); v == "0" || v == "" {
		t.Fatalf("lag of the down destination = %q, want its backlog", v)
	}
	startCollector(t, downGRPC, downHTTP, downSink)
	waitAll(t, downSink, acked, "the destination that was down")
	waitScrape(t, admin, `otlplite_forward_lag_records{destination="down",signal="traces"}`, "0")
	srv.stop()
}

// killRounds is how many times TestForwardKill SIGKILLs otlp-lite: 5 by
// default (CI), more with OTLP_LITE_FORWARD_KILL_ROUNDS.
func killRounds(t *testing.T) int {
	if v := os.Getenv("OTLP_LITE_FORWARD_KILL_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("OTLP_LITE_FORWARD_KILL_ROUNDS=%q: want a positive number", v)
		}
		return n
	}
	return 5
}

// TestForwardKill: otlp-lite is SIGKILLed while it forwards, round after
// round, and restarted on the same data directory. Every span it
// acknowledged reaches the Collector, and the duplicates (records sent
// again after a restart) stay within the in-flight window per kill, as
// the issue promises: a record counts against the window until a commit
// of the cursor covers it, so a kill can leave at most inflight records
// delivered (or not) and uncommitted.
func TestForwardKill(t *testing.T) {
	grpcAddr, httpAddr := freeAddr(t), freeAddr(t)
	sink := newSpanCounter()
	startCollector(t, grpcAddr, httpAddr, sink)
	dataDir := t.TempDir()
	const inflight, spansPer = 8, 5
	fwd := fmt.Sprintf("col=grpc://%s?signals=traces&inflight=%d", grpcAddr, inflight)
	acked := map[string]bool{}
	rounds := killRounds(t)
	for round := range rounds {
		srv, _ := startForwarder(t, dataDir, fwd)
		stop := make(chan struct{})
		result := make(chan map[string]bool)
		go func() { result <- load(t, srv, fmt.Sprintf("k%d", round), spansPer, stop) }()
		before, _ := sink.counts()
		waitSome(t, sink, before+100) // forwarding is under way
		srv.kill()
		close(stop)
		for id := range <-result {
			acked[id] = true
		}
	}
	srv, admin := startForwarder(t, dataDir, fwd)
	waitAll(t, sink, acked, fmt.Sprintf("after %d kills", rounds))
	waitScrape(t, admin, `otlplite_forward_lag_records{destination="col",signal="traces"}`, "0")
	srv.stop()
	distinct, total := sink.counts()
	dups := (total - distinct) / spansPer // in records
	t.Logf("%d kills: %d spans acknowledged, %d distinct forwarded, %d records sent twice", rounds, len(acked), distinct, dups)
	// What a kill may resend: the in-flight window, inflight records of
	// spansPer spans each, however slow the machine (the bound does not
	// depend on timing: the window waits for the commit). One more window
	// of slack covers a retry inside a run: an attempt that passed its
	// timeout on a stalled CI machine is sent again, and the destination
	// may have stored the first one (at-least-once, not a restart's
	// resend).
	if limit := (rounds + 1) * inflight; dups > limit {
		t.Fatalf("%d records (%d spans) sent twice over %d kills, more than the in-flight window allows: %d records ((%d + 1) × inflight %d, of %d spans each)",
			dups, total-distinct, rounds, limit, rounds, inflight, spansPer)
	}
}

// TestForwardDeadLetterCollector: the Collector refuses one request for
// good (its consumer returns a permanent error: INVALID_ARGUMENT over
// gRPC, 400 over HTTP). otlp-lite writes that record to the destination's
// dead-letter store, counts it, forwards the rest, and `otlp-lite export`
// reads the dead letter.
func TestForwardDeadLetterCollector(t *testing.T) {
	for _, proto := range []string{"grpc", "http"} {
		t.Run(proto, func(t *testing.T) {
			grpcAddr, httpAddr := freeAddr(t), freeAddr(t)
			sink := newSpanCounter()
			startCollector(t, grpcAddr, httpAddr, sink)
			target := "grpc://" + grpcAddr
			if proto == "http" {
				target = "http://" + httpAddr
			}
			dataDir := t.TempDir()
			srv, admin := startForwarder(t, dataDir, "col="+target+"?signals=traces")
			good := map[string]bool{}
			client := srv.dial(t)
			for i := range 20 {
				prefix := fmt.Sprintf("g%d", i)
				if i == 10 {
					prefix = "poison"
				}
				if err := exportTraces(client, fwdRequest(prefix, 2)); err != nil {
					t.Fatal(err)
				}
				if i != 10 {
					good[prefix+"-0"], good[prefix+"-1"] = true, true
				}
			}
			waitAll(t, sink, good, "the records around the refused one")
			waitScrape(t, admin, `otlplite_forward_dead_lettered_records_total{destination="col",signal="traces"}`, "1")
			waitScrape(t, admin, `otlplite_forward_lag_records{destination="col",signal="traces"}`, "0")
			srv.stop()
			out, err := exec.Command(serverBin, "export", "-data-dir", filepath.Join(dataDir, "forward", "col", "dead-letter"), "-signal", "traces").CombinedOutput()
			if err != nil {
				t.Fatalf("otlp-lite export of the dead letters: %v\n%s", err, out)
			}
			if lines := strings.Count(strings.TrimSpace(string(out)), "\n") + 1; lines != 1 || !strings.Contains(string(out), "poison-0") {
				t.Fatalf("dead letters exported as:\n%s\nwant the one poison record", out)
			}
		})
	}
}

// waitMetricAbove waits until series reads more than n.
func waitMetricAbove(t *testing.T, adminAddr, series string, n float64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if v, err := strconv.ParseFloat(scrape(t, adminAddr, series), 64); err == nil && v > n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never exceeded %v", series, n)
		}
		time.Sleep(20 * time.Millisecond) // polling
	}
}
