package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/internal/hostiledest"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// hostileRecord is an ExportTraceServiceRequest with one span named
// "rec-N;".
func hostileRecord(n int) []byte {
	var m easyproto.Marshaler
	sp := m.MessageMarshaler().AppendMessage(1).AppendMessage(2).AppendMessage(2)
	sp.AppendBytes(1, bytes.Repeat([]byte{1}, 16))
	sp.AppendBytes(2, bytes.Repeat([]byte{2}, 8))
	sp.AppendString(5, fmt.Sprintf("rec-%d;", n))
	return m.Marshal(nil)
}

// receivedRecords counts the distinct records 0..n-1 srv acknowledged.
func receivedRecords(srv *hostiledest.Server, n int) int {
	seen := map[int]bool{}
	for _, req := range srv.Accepted() {
		i := bytes.Index(req, []byte("rec-"))
		if i < 0 {
			continue
		}
		j := bytes.IndexByte(req[i:], ';')
		if k, err := strconv.Atoi(string(req[i+4 : i+j])); err == nil && k < n {
			seen[k] = true
		}
	}
	return len(seen)
}

// TestReplayHostileDestination replays five records into a destination
// that answers garbage (finding 14: counted replayed), lies about its retry
// delay (finding 10: a flood), or stalls after its headers, over each
// protocol: for a second replay makes a few attempts, not thousands,
// and claims nothing replayed; interrupted, it resumes from its cursor
// against the destination turned honest, and every record arrives.
func TestReplayHostileDestination(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a destination")
	}
	const n = 5
	src := t.TempDir()
	st, err := disk.Open(src, disk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := st.Write(context.Background(), storage.Traces, hostileRecord(i), 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, proto := range []string{"grpc", "http", "stream"} {
		for _, fault := range []hostiledest.Fault{hostiledest.Garbage, hostiledest.LieDelayDate, hostiledest.StallAfterHeaders} {
			t.Run(proto+"/"+fault.String(), func(t *testing.T) {
				srv, err := hostiledest.Listen()
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				srv.SetFault(fault)
				cursor := "c-" + proto + "-" + fault.String()
				args := []string{"-data-dir", src, "-endpoint", srv.Addr, "-insecure", "-protocol", proto, "-cursor", cursor,
					"-signal", "traces", "-timeout", "500ms", "-compression", "none"}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var stdout, stderr syncBuffer
				done := make(chan int, 1)
				go func() { done <- replayContext(ctx, args, &stdout, &stderr) }()
				deadline := time.Now().Add(time.Second)
				for time.Now().Before(deadline) {
					select {
					case code := <-done:
						t.Fatalf("replay ended (exit %d) against %v: %s%s", code, fault, stdout.String(), stderr.String())
					case <-time.After(50 * time.Millisecond): // polling the count, not synchronisation
					}
				}
				// With -timeout 500ms and backoff from 500 ms, a stall or
				// garbage is tried a few times in 1 s; a flood is
				// thousands.
				if a := srv.Attempts(); a > 10*(n+1) {
					t.Fatalf("%d attempts in 1 s against %v: a flood", a, fault)
				}
				if got := receivedRecords(srv, n); got != 0 {
					t.Fatalf("the hostile destination stored %d records", got)
				}
				cancel()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					t.Fatalf("replay did not stop when interrupted:\n%s", stderr.String())
				}
				if strings.Contains(stdout.String(), fmt.Sprintf("replayed %d records", n)) {
					t.Fatalf("replay claims every record replayed to a destination that stored none: %q", stdout.String())
				}

				srv.SetFault(hostiledest.Honest)
				stdout, stderr = syncBuffer{}, syncBuffer{}
				ctx2, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel2()
				if code := replayContext(ctx2, args, &stdout, &stderr); code != 0 {
					t.Fatalf("replay against the honest destination exited %d:\n%s%s", code, stdout.String(), stderr.String())
				}
				if got := receivedRecords(srv, n); got != n {
					t.Fatalf("the destination received %d of %d records: %s", got, n, stdout.String())
				}
			})
		}
	}
}
