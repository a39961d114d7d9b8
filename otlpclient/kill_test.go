package otlpclient

import (
	"context"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// buildBinary builds cmd/otlp-lite into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	bin := filepath.Join(t.TempDir(), "otlp-lite")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/otlp-lite")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func startBinary(t *testing.T, bin, addr, dataDir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "serve", "-grpc-addr", addr, "-http-addr", "", "-admin-addr", "", "-storage", "disk", "-data-dir", dataDir, "-log-level", "error")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// TestStreamServerKilled kills the server (SIGKILL) in the middle of a
// stream and restarts it on the same port and data directory. The exporter
// reconnects with back-off and resends every request that was not
// acknowledged; afterwards every request has been acknowledged exactly once
// to the caller, and the disk store holds every one of them (a resent
// request may be stored twice: at-least-once, as stream.proto says for a
// broken connection).
func TestStreamServerKilled(t *testing.T) {
	bin := buildBinary(t)
	addr := freePort(t)
	dataDir := t.TempDir()
	srv := startBinary(t, bin, addr, dataDir)

	e := NewStreamExporter(StreamConfig{
		Config:     Config{Endpoint: addr, RequestTimeout: time.Minute, Backoff: Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond}},
		MaxPending: 64,
	})
	o := newOutcomes()
	const n = 400
	reqs := make([][]byte, n+1)
	for i := uint64(1); i <= n; i++ {
		reqs[i] = testRequest(i, 50)
	}
	sendDone := make(chan struct{})
	go func() {
		defer close(sendDone)
		for i := uint64(1); i <= n; i++ {
			if err := e.Send(context.Background(), reqs[i], o.done(i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	waitFor(t, "100 acknowledgements", func() bool { return e.Stats().Acknowledged >= 100 })
	if err := srv.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	pendingAtKill := e.Pending()
	time.Sleep(200 * time.Millisecond) // the exporter retries against a closed port meanwhile
	startBinary(t, bin, addr, dataDir)
	<-sendDone
	closeExporter(t, e)

	o.requireAllAcked(t, n)
	st := e.Stats()
	if st.Acknowledged != n || st.Dropped != 0 || st.Failed != 0 || st.Streams < 2 {
		t.Fatalf("stats %+v", st)
	}
	if pendingAtKill > 0 && st.Retried == 0 {
		t.Fatalf("%d requests were pending at the kill and none was resent", pendingAtKill)
	}
	t.Logf("%d pending at the kill; stats %+v", pendingAtKill, st)

	// Every request is in the store.
	out, err := exec.Command(bin, "export", "-data-dir", dataDir, "-signal", "traces").Output()
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	stored := map[uint64]int{}
	for _, m := range regexp.MustCompile(`"traceId":"([0-9a-f]{32})"`).FindAllSubmatch(out, -1) {
		b, _ := hex.DecodeString(string(m[1]))
		num, _ := strconv.ParseUint(hex.EncodeToString(b[8:]), 16, 64)
		stored[num]++
	}
	for i := uint64(1); i <= n; i++ {
		if stored[i] == 0 {
			t.Fatalf("request %d acknowledged but not in the store", i)
		}
	}
}
