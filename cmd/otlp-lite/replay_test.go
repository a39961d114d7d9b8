package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fillSource stores traces requests of 1 to 3 spans and logs requests of one
// record through a server on dir, and returns the ids it stored.
func fillSource(t *testing.T, dir, prefix string, traces, logs int) (traceIDs, logIDs []string) {
	t.Helper()
	srv := startServe(t, dir, "")
	c := srv.client()
	for i := range traces {
		ids := make([]string, 1+i%3)
		for j := range ids {
			ids[j] = fmt.Sprintf("%s-t%d-%d", prefix, i, j)
		}
		if err := sendIDs(context.Background(), c, storage.Traces, nil, ids...); err != nil {
			t.Fatal(err)
		}
		traceIDs = append(traceIDs, ids...)
	}
	for i := range logs {
		id := fmt.Sprintf("%s-l%d", prefix, i)
		if err := sendIDs(context.Background(), c, storage.Logs, nil, id); err != nil {
			t.Fatal(err)
		}
		logIDs = append(logIDs, id)
	}
	srv.stop(t)
	return traceIDs, logIDs
}

// requireExactly checks that the store holds each id once and nothing else.
func requireExactly(t *testing.T, got map[string]int, want []string) {
	t.Helper()
	for _, id := range want {
		if got[id] != 1 {
			t.Fatalf("%s stored %d times, want once", id, got[id])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("stored %d distinct items, want %d", len(got), len(want))
	}
}

// TestReplayEndToEnd replays one otlp-lite's store into a second otlp-lite
// over OTLP/gRPC: started before the target is up (so the first attempts
// fail and are retried), resumed from its durable cursor after more data
// arrives (sending only the new records), then over OTLP/HTTP without a
// cursor, and with -follow, tailing records as they are stored.
func TestReplayEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	src := t.TempDir()
	traces, logs := fillSource(t, src, "a", 30, 10)

	// 1. gRPC, target down at first.
	dstDir := t.TempDir()
	dstAddr := freeAddr(t)
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- replayContext(context.Background(), []string{"-data-dir", src, "-endpoint", dstAddr, "-insecure", "-cursor", "to-dst", "-compression", "gzip"}, &stdout, &stderr)
	}()
	time.Sleep(700 * time.Millisecond)
	dst := startServe(t, dstDir, dstAddr)
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("replay exited %d:\n%s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("replay did not finish:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "replayed 40 records (70 items)") {
		t.Fatalf("final count: %q", stdout.String())
	}
	if !strings.Contains(stdout.String(), "retries") {
		t.Fatalf("the replay never had to retry against a target that was down: %q", stdout.String())
	}

	// 2. More data; the same cursor sends only the new records.
	moreTraces, _ := fillSource(t, src, "b", 5, 0)
	stdout, stderr = syncBuffer{}, syncBuffer{}
	if code := replayContext(context.Background(), []string{"-data-dir", src, "-endpoint", dst.addr, "-insecure", "-cursor", "to-dst"}, &stdout, &stderr); code != 0 {
		t.Fatalf("second replay exited %d:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "replayed 5 records") {
		t.Fatalf("resumed replay: %q", stdout.String())
	}
	dst.stop(t)
	requireExactly(t, storedIDs(t, dstDir, storage.Traces), append(traces, moreTraces...))
	requireExactly(t, storedIDs(t, dstDir, storage.Logs), logs)

	// 3. OTLP/HTTP, one signal, no cursor.
	httpDir := t.TempDir()
	httpDst := startServe(t, httpDir, "")
	stdout, stderr = syncBuffer{}, syncBuffer{}
	if code := replayContext(context.Background(), []string{"-data-dir", src, "-endpoint", httpDst.addr, "-insecure", "-protocol", "http", "-compression", "none", "-signal", "logs"}, &stdout, &stderr); code != 0 {
		t.Fatalf("HTTP replay exited %d:\n%s", code, stderr.String())
	}
	httpDst.stop(t)
	requireExactly(t, storedIDs(t, httpDir, storage.Logs), logs)
	requireExactly(t, storedIDs(t, httpDir, storage.Traces), nil)

	// 4. -follow: records stored while the replay runs are sent too; an
	// interrupt ends it cleanly.
	followDir := t.TempDir()
	followDst := startServe(t, followDir, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr = syncBuffer{}, syncBuffer{}
	go func() {
		done <- replayContext(ctx, []string{"-data-dir", src, "-endpoint", followDst.addr, "-insecure", "-follow", "-signal", "traces", "-cursor", "follower"}, &stdout, &stderr)
	}()
	lateTraces, _ := fillSource(t, src, "c", 3, 0)
	want := append(append(append([]string(nil), traces...), moreTraces...), lateTraces...)
	deadline := time.Now().Add(30 * time.Second)
	for len(storedIDs(t, followDir, storage.Traces)) < len(want) {
		if time.Now().After(deadline) {
			t.Fatalf("follow: the late records never arrived:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("follow replay exited %d:\n%s", code, stderr.String())
	}
	followDst.stop(t)
	requireExactly(t, storedIDs(t, followDir, storage.Traces), want)
}

func TestReplayFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-endpoint", "x:1", "-protocol", "carrier-pigeon"},
		{"-endpoint", "x:1", "-signal", "events"},
		{"-endpoint", "x:1", "-compression", "br"},
		{"-endpoint", "x:1", "extra"},
		{"-endpoint", "x:1", "-cursor", "./to-other.cursor"},
	} {
		var out, errb bytes.Buffer
		if code := replayContext(context.Background(), args, &out, &errb); code != 2 {
			t.Errorf("replay %q exited %d, want 2 (usage)", args, code)
		}
	}
	var out, errb bytes.Buffer
	if code := replayContext(context.Background(), []string{"-endpoint", "x:1", "-data-dir", "/nonexistent"}, &out, &errb); code != 1 {
		t.Errorf("missing data dir: exit %d", code)
	}
}

// TestReplayStream replays over the streaming mode, with a cursor: every
// item arrives exactly once, and a second run with the same cursor after
// more data sends only the new records.
func TestReplayStream(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	src := t.TempDir()
	traces, logs := fillSource(t, src, "s", 40, 12)
	dstDir := t.TempDir()
	dst := startServe(t, dstDir, "")
	var stdout, stderr syncBuffer
	args := []string{"-data-dir", src, "-endpoint", dst.addr, "-insecure", "-protocol", "stream", "-cursor", "streamer"}
	if code := replayContext(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("stream replay exited %d:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "replayed 52 records") {
		t.Fatalf("final count: %q", stdout.String())
	}
	more, _ := fillSource(t, src, "s2", 4, 0)
	stdout, stderr = syncBuffer{}, syncBuffer{}
	if code := replayContext(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("resumed stream replay exited %d:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "replayed 4 records") {
		t.Fatalf("resumed replay: %q", stdout.String())
	}
	dst.stop(t)
	requireExactly(t, storedIDs(t, dstDir, storage.Traces), append(traces, more...))
	requireExactly(t, storedIDs(t, dstDir, storage.Logs), logs)
}
