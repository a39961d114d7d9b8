package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// Tests of what ends a replay: a signal while the target refuses or is
// down, a record too large for the target. Each runs the otlp-lite binary,
// so the signals are real ones and the exit status is the process's.

// cmdProc is an otlp-lite child process other than serve (replay,
// loadgen), with its output captured.
type cmdProc struct {
	cmd    *exec.Cmd
	stdout syncBuffer
	stderr syncBuffer
	lines  chan string // stderr, line by line, for waitStderr
	done   chan struct{}
}

// startCmd starts `otlp-lite args...` and kills it when the test ends if it
// still runs.
func startCmd(t *testing.T, args ...string) *cmdProc {
	t.Helper()
	p := &cmdProc{cmd: exec.Command(otlpLiteBinary(t), args...), lines: make(chan string, 4096), done: make(chan struct{})}
	p.cmd.Stdout = &p.stdout
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.stderr.Write([]byte(sc.Text() + "\n"))
			select {
			case p.lines <- sc.Text():
			default: // nobody waits for that many lines; the log keeps them
			}
		}
		io.Copy(io.Discard, stderr)
		p.cmd.Wait() // after the pipe is drained, as exec requires
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	})
	return p
}

// waitStderr waits until the process writes a line containing substr.
func (p *cmdProc) waitStderr(t *testing.T, substr string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line := <-p.lines:
			if strings.Contains(line, substr) {
				return
			}
		case <-p.done:
			t.Fatalf("%s exited before writing %q:\n%s", p.cmd.Args[1], substr, p.stderr.String())
		case <-timeout:
			t.Fatalf("%s did not write %q:\n%s", p.cmd.Args[1], substr, p.stderr.String())
		}
	}
}

// requireSaid fails unless the process wrote each of substrs to stderr.
func (p *cmdProc) requireSaid(t *testing.T, substrs ...string) {
	t.Helper()
	for _, s := range substrs {
		if !strings.Contains(p.stderr.String(), s) {
			t.Fatalf("%s did not say %q:\n%s", p.cmd.Args[1], s, p.stderr.String())
		}
	}
}

// exitCode waits for the process to end and returns its exit status.
func (p *cmdProc) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not exit:\n%s", p.cmd.Args[1], p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// gateSink is the store of a test target: it accepts its first accept
// writes, then refuses every write with storage.ErrUnavailable (the
// handler answers UNAVAILABLE with RetryInfo, or HTTP 503) until open is
// called. It keeps a copy of each record it accepts.
type gateSink struct {
	mu      sync.Mutex
	accept  int
	opened  bool
	records map[storage.Signal][][]byte
	refused map[storage.Signal]int
	changed chan struct{} // a token after each refusal
}

func newGateSink(accept int) *gateSink {
	return &gateSink{accept: accept, records: map[storage.Signal][][]byte{}, refused: map[storage.Signal]int{}, changed: make(chan struct{}, 1)}
}

func (s *gateSink) Write(_ context.Context, sig storage.Signal, data []byte, _ int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.opened {
		if s.accept == 0 {
			s.refused[sig]++
			select {
			case s.changed <- struct{}{}:
			default:
			}
			return storage.ErrUnavailable
		}
		s.accept--
	}
	s.records[sig] = append(s.records[sig], bytes.Clone(data))
	return nil
}

func (s *gateSink) Close() error { return nil }

func (s *gateSink) open() {
	s.mu.Lock()
	s.opened = true
	s.mu.Unlock()
}

// waitRefused waits until each of sigs had n writes refused: its replay is
// retrying a record, every record before it acknowledged.
func (s *gateSink) waitRefused(t *testing.T, n int, sigs ...storage.Signal) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		ok := true
		for _, sig := range sigs {
			ok = ok && s.refused[sig] >= n
		}
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-s.changed:
		case <-timeout:
			t.Fatalf("the target never refused %d writes of each of %v", n, sigs)
		}
	}
}

// ids returns how often the target stored each item id of sig.
func (s *gateSink) ids(t *testing.T, sig storage.Signal) map[string]int {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	got := map[string]int{}
	for _, data := range s.records[sig] {
		for _, id := range itemIDs(t, sig, data) {
			got[id]++
		}
	}
	return got
}

// startGateTarget serves the OTLP handler on sink over h2c and HTTP/1.1 on
// a free loopback port, asking for retries after 20ms.
func startGateTarget(t *testing.T, sink storage.Sink) string {
	t.Helper()
	h := handler.New(handler.Config{Sink: sink, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RetryDelay: 20 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// sourceRecords returns the records of sig stored in dataDir, each as its
// item ids.
func sourceRecords(t *testing.T, dataDir string, sig storage.Signal) [][]string {
	t.Helper()
	var recs [][]string
	if err := disk.Scan(dataDir, sig, func(r disk.Record) error {
		recs = append(recs, itemIDs(t, sig, r.Data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestReplayResumesAfterInterrupt: a replay with -cursor is stopped by
// SIGINT or SIGTERM while the target refuses the records it is retrying.
// It exits 1 naming what is left and the last error, and a second replay
// with the same cursor delivers everything the first did not: every
// record arrives, and over the unary protocols none twice (the cursor
// stopped exactly after the acknowledged ones).
func TestReplayResumesAfterInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	src := t.TempDir()
	fillSource(t, src, "r", 30, 10)
	want := map[storage.Signal][][]string{
		storage.Traces: sourceRecords(t, src, storage.Traces),
		storage.Logs:   sourceRecords(t, src, storage.Logs),
	}
	total := len(want[storage.Traces]) + len(want[storage.Logs])
	for _, tc := range []struct {
		protocol string
		sig      os.Signal
	}{
		{"grpc", os.Interrupt},
		{"grpc", syscall.SIGTERM},
		{"http", syscall.SIGTERM},
		{"stream", os.Interrupt},
		{"stream", syscall.SIGTERM},
	} {
		t.Run(fmt.Sprintf("%s-%v", tc.protocol, tc.sig), func(t *testing.T) {
			// 7 records get through, fewer than either signal has, so
			// both are retrying when the signal comes.
			sink := newGateSink(7)
			addr := startGateTarget(t, sink)
			args := []string{"replay", "-data-dir", src, "-endpoint", addr, "-insecure", "-protocol", tc.protocol,
				"-cursor", fmt.Sprintf("resume-%s-%d", tc.protocol, tc.sig)}
			first := startCmd(t, args...)
			sink.waitRefused(t, 2, storage.Traces, storage.Logs)
			first.cmd.Process.Signal(tc.sig)
			if code := first.exitCode(t); code != 1 {
				t.Fatalf("stopped replay exited %d, want 1:\n%s", code, first.stderr.String())
			}
			first.requireSaid(t, "stopped with", "last error:", "storage is unavailable")

			sink.open()
			second := startCmd(t, args...)
			if code := second.exitCode(t); code != 0 {
				t.Fatalf("resumed replay exited %d:\n%s", code, second.stderr.String())
			}
			delivered, dups := 0, 0 // records, items stored more than once
			for sig, recs := range want {
				got := sink.ids(t, sig)
				for _, ids := range recs {
					if !slices.ContainsFunc(ids, func(id string) bool { return got[id] == 0 }) {
						delivered++
					}
				}
				items := 0
				for _, ids := range recs {
					items += len(ids)
				}
				for _, n := range got {
					dups += max(n-1, 0)
				}
				if len(got) != items {
					t.Errorf("%s: the target holds %d distinct items, the source %d", sig, len(got), items)
				}
			}
			t.Logf("records delivered by an interrupted-and-resumed replay: %d of %d (%d items delivered twice)", delivered, total, dups)
			if delivered != total {
				t.Fatalf("records delivered by an interrupted-and-resumed replay: %d of %d\nfirst run:\n%s\nsecond run:\n%s",
					delivered, total, first.stderr.String(), second.stderr.String())
			}
			if tc.protocol != "stream" && dups != 0 {
				// One record at a time: the cursor was committed right
				// after the last acknowledged record.
				t.Fatalf("%d items delivered twice", dups)
			}
		})
	}
}

// TestReplayResumesAfterTargetDown: the target is not running; a replay
// says why its sends fail, and SIGTERM stops it with status 1. Started once
// the target is, the same cursor delivers every record exactly once.
func TestReplayResumesAfterTargetDown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	src := t.TempDir()
	traces, logs := fillSource(t, src, "d", 12, 5)
	for _, protocol := range []string{"grpc", "stream"} {
		t.Run(protocol, func(t *testing.T) {
			dstDir, dstAddr := t.TempDir(), freeAddr(t)
			args := []string{"replay", "-data-dir", src, "-endpoint", dstAddr, "-insecure", "-protocol", protocol, "-cursor", "down-" + protocol}
			first := startCmd(t, args...)
			first.waitStderr(t, "connection refused (is the receiver running")
			first.cmd.Process.Signal(syscall.SIGTERM)
			if code := first.exitCode(t); code != 1 {
				t.Fatalf("stopped replay exited %d, want 1:\n%s", code, first.stderr.String())
			}
			first.requireSaid(t, "stopped with")
			dst := startServe(t, dstDir, dstAddr)
			second := startCmd(t, args...)
			if code := second.exitCode(t); code != 0 {
				t.Fatalf("resumed replay exited %d:\n%s", code, second.stderr.String())
			}
			dst.stop(t)
			requireExactly(t, storedIDs(t, dstDir, storage.Traces), traces)
			requireExactly(t, storedIDs(t, dstDir, storage.Logs), logs)
		})
	}
}

// TestReplayStreamOversizeFailsAlone: one record of 20 is 2 MiB, the
// target takes at most 1 MiB per message and ends the stream when one is
// larger. Over -protocol stream the 19 others arrive, the big one is logged
// by signal, segment and offset and counted in the summary, and the exit
// status is 1. With gzip and an incompressible record the status names its
// wire length; with gzip and zeros, only the limit once decompressed.
func TestReplayStreamOversizeFailsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	for _, tc := range []struct {
		name        string
		compression string
		random      bool
	}{
		{"gzip incompressible", "gzip", true},
		{"none", "none", true},
		{"gzip zeros", "gzip", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			srv := startServe(t, src, "")
			pad := make([]byte, 2<<20)
			if tc.random {
				rand.Read(pad)
			}
			var ids []string
			for i := range 20 {
				id := fmt.Sprintf("o%d", i)
				var p []byte
				if i == 9 {
					p = pad
				}
				if err := sendIDs(context.Background(), srv.client(), storage.Traces, p, id); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			srv.stop(t)
			big := ids[9]
			var where string
			if err := disk.Scan(src, storage.Traces, func(r disk.Record) error {
				if slices.Contains(itemIDs(t, storage.Traces, r.Data), big) {
					where = fmt.Sprintf("%s:%d", r.Segment, r.Offset)
				}
				return nil
			}); err != nil || where == "" {
				t.Fatalf("the big record is not in the source (%v)", err)
			}

			dstDir := t.TempDir()
			dst := startServe(t, dstDir, "", "-grpc-max-recv-msg-size", "1048576")
			p := startCmd(t, "replay", "-data-dir", src, "-endpoint", dst.addr, "-insecure", "-protocol", "stream",
				"-signal", "traces", "-cursor", "oversize", "-compression", tc.compression)
			code := p.exitCode(t)
			dst.stop(t)
			stored := storedIDs(t, dstDir, storage.Traces)
			t.Logf("valid records delivered past an oversize one: %d of %d", len(stored), len(ids)-1)
			requireExactly(t, stored, slices.Delete(slices.Clone(ids), 9, 10))
			if code != 1 {
				t.Fatalf("replay exited %d, want 1 (a record was refused):\n%s", code, p.stderr.String())
			}
			if s := "traces: record at " + where + " refused for good"; !strings.Contains(p.stderr.String(), s) {
				t.Fatalf("the big record is not logged as %q:\n%s", s, p.stderr.String())
			}
			if s := "replayed 19 records"; !strings.Contains(p.stdout.String(), s) || !strings.Contains(p.stdout.String(), "(1 records failed)") {
				t.Fatalf("summary %q: want 19 replayed and 1 failed", p.stdout.String())
			}
		})
	}
}

// TestReplayTLSToPlaintext: without -insecure against a plaintext
// receiver, replay says to add -insecure, and stopping it exits 1.
func TestReplayTLSToPlaintext(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	src := t.TempDir()
	fillSource(t, src, "tls", 1, 0)
	dst := startServe(t, t.TempDir(), "")
	p := startCmd(t, "replay", "-data-dir", src, "-endpoint", dst.addr, "-signal", "traces")
	p.waitStderr(t, "add -insecure")
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.exitCode(t); code != 1 {
		t.Fatalf("replay exited %d, want 1:\n%s", code, p.stderr.String())
	}
}

// TestLoadgenLastError: loadgen against nothing says why, in every mode,
// and exits 1; interrupted with batches left, it says so and exits 1.
func TestLoadgenLastError(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	addr := freeAddr(t)
	for _, mode := range []string{"unary", "unary-async", "stream"} {
		var stdout, stderr bytes.Buffer
		code := loadgen([]string{"-endpoint", addr, "-mode", mode, "-batches", "2", "-spans-per-batch", "1", "-request-timeout", "2s"}, &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "last error:") || !strings.Contains(stderr.String(), "connection refused") {
			t.Fatalf("%s: exit %d:\n%s", mode, code, stderr.String())
		}
	}
	p := startCmd(t, "loadgen", "-endpoint", addr, "-mode", "stream", "-batches", "1000000", "-spans-per-batch", "1")
	p.waitStderr(t, "acknowledged=0") // the first progress line: running, signals handled
	p.cmd.Process.Signal(os.Interrupt)
	if code := p.exitCode(t); code != 1 {
		t.Fatalf("interrupted loadgen exited %d:\n%s", code, p.stderr.String())
	}
	p.requireSaid(t, "interrupted with 0 of 1000000 batches acknowledged", "last error:", "connection refused")
}

// TestEndpointChecks: a URL or a bare host where host:port is wanted is a
// usage error that says what to write instead.
func TestEndpointChecks(t *testing.T) {
	for _, tc := range []struct {
		cmd      func([]string, io.Writer, io.Writer) int
		args     []string
		wantText string
	}{
		{replayContextBackground, []string{"-endpoint", "http://localhost:4317"}, "use -endpoint localhost:4317 -insecure"},
		{replayContextBackground, []string{"-endpoint", "https://collector:4317/v1/traces"}, "use -endpoint collector:4317\n"},
		{replayContextBackground, []string{"-endpoint", "localhost"}, "is not host:port"},
		{loadgen, []string{"-endpoint", "http://localhost:4317"}, "use -endpoint localhost:4317\n"},
	} {
		var stdout, stderr bytes.Buffer
		if code := tc.cmd(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.wantText) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.wantText)
		}
	}
}

func replayContextBackground(args []string, stdout, stderr io.Writer) int {
	return replayContext(context.Background(), args, stdout, stderr)
}

// A target that refuses the client, not the data (here: it requires a
// bearer token replay does not send), stops the replay without skipping a
// record; the next run, against a target that accepts, delivers them all.
func TestReplayStopsWhenTargetRefusesEveryRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	src := t.TempDir()
	traces, logs := fillSource(t, src, "r", 6, 3)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, protocol := range []string{"grpc", "http", "stream"} {
		t.Run(protocol, func(t *testing.T) {
			dstDir := t.TempDir()
			locked := startServe(t, dstDir, "", "-auth-token-file", tokens)
			cursor := "refused-" + protocol
			args := func(addr string) []string {
				return []string{"replay", "-data-dir", src, "-endpoint", addr, "-insecure", "-protocol", protocol, "-cursor", cursor}
			}
			first := startCmd(t, args(locked.addr)...)
			if code := first.exitCode(t); code != 1 {
				t.Fatalf("replay against a target refusing every record exited %d, want 1:\n%s", code, first.stderr.String())
			}
			if protocol == "stream" {
				// The exporter cannot open a stream at all: replay stops
				// with the records unacknowledged and says why.
				first.requireSaid(t, "not acknowledged", "UNAUTHENTICATED")
			} else {
				first.requireSaid(t, "as it would refuse every record", "nothing was skipped")
			}
			if strings.Contains(first.stderr.String(), "skipped:") {
				t.Fatalf("records were skipped:\n%s", first.stderr.String())
			}
			locked.stop(t)
			open := startServe(t, dstDir, "")
			second := startCmd(t, args(open.addr)...)
			if code := second.exitCode(t); code != 0 {
				t.Fatalf("resumed replay exited %d:\n%s", code, second.stderr.String())
			}
			open.stop(t)
			requireExactly(t, storedIDs(t, dstDir, storage.Traces), traces)
			requireExactly(t, storedIDs(t, dstDir, storage.Logs), logs)
		})
	}
}
