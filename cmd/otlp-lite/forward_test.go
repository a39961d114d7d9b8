package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// pollUntil polls cond until it holds, failing after a generous deadline.
func pollUntil(t *testing.T, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(what())
		}
		time.Sleep(20 * time.Millisecond) // polling
	}
}

// waitStored polls dataDir until it holds every id of want.
func waitStored(t *testing.T, dataDir string, sig storage.Signal, want []string) map[string]int {
	t.Helper()
	return waitStoredN(t, dataDir, sig, want, 1)
}

// waitStoredN polls dataDir until it holds every id of want n times.
func waitStoredN(t *testing.T, dataDir string, sig storage.Signal, want []string, n int) map[string]int {
	t.Helper()
	var got map[string]int
	missing := 0
	pollUntil(t, func() string { return fmt.Sprintf("%d of %d ids never arrived in %s", missing, len(want), dataDir) }, func() bool {
		got = storedIDs(t, dataDir, sig)
		missing = 0
		for _, id := range want {
			if got[id] < n {
				missing++
			}
		}
		return missing == 0
	})
	return got
}

// runCmd runs `otlp-lite args...` to its end.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(otlpLiteBinary(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestForwardStreamToOtlpLite: one otlp-lite forwards over the stream mode
// to another, configured through OTLP_LITE_FORWARD; every record arrives
// exactly once across a clean restart of the forwarder, and stats shows
// the destination caught up.
func TestForwardStreamToOtlpLite(t *testing.T) {
	dstDir, srcDir := t.TempDir(), t.TempDir()
	dst := startServe(t, dstDir, "")
	t.Setenv("OTLP_LITE_FORWARD", "b=stream://"+dst.addr+"?signals=traces,logs a=grpc://"+dst.addr+"?signals=logs")
	src := startServe(t, srcDir, "")
	var ids, logIDs []string
	send := func(from, to int) {
		for i := from; i < to; i++ {
			id, lid := fmt.Sprintf("s%d", i), fmt.Sprintf("l%d", i)
			if err := sendIDs(context.Background(), src.client(), storage.Traces, nil, id); err != nil {
				t.Fatal(err)
			}
			if err := sendIDs(context.Background(), src.client(), storage.Logs, nil, lid); err != nil {
				t.Fatal(err)
			}
			ids, logIDs = append(ids, id), append(logIDs, lid)
		}
	}
	send(0, 50)
	waitStored(t, dstDir, storage.Traces, ids)
	src.stop(t)
	src = startServe(t, srcDir, "")
	send(50, 100)
	waitStored(t, dstDir, storage.Traces, ids)
	// a and b both take logs and send each under the key of its place in
	// the source log (docs/exactly-once.md): the destination stores it once.
	waitStored(t, dstDir, storage.Logs, logIDs)
	waitForwarded(t, srcDir)
	src.stop(t)
	got, gotLogs := storedIDs(t, dstDir, storage.Traces), storedIDs(t, dstDir, storage.Logs)
	for _, id := range ids {
		if got[id] != 1 {
			t.Fatalf("span %s arrived %d times, want once (a clean restart resends nothing acknowledged)", id, got[id])
		}
	}
	for _, id := range logIDs {
		if gotLogs[id] != 1 { // two destinations (a and b), one key
			t.Fatalf("log %s arrived %d times, want once (a and b send it under one key)", id, gotLogs[id])
		}
	}
	out, errOut, code := runCmd(t, "stats", "-data-dir", srcDir, "-format", "json")
	if code != 0 {
		t.Fatalf("stats: exit %d: %s", code, errOut)
	}
	for _, want := range []string{`"destination": "b"`, `"destination": "a"`, `"lag_records": 0`} {
		if !strings.Contains(out, want) {
			t.Fatalf("stats -format json lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"lag_records": 1`) {
		t.Fatalf("stats shows a lag after everything arrived:\n%s", out)
	}
	dst.stop(t)
}

// TestForwardDeadLetterOversize: the destination refuses one record for
// good (larger than its -grpc-max-recv-msg-size: RESOURCE_EXHAUSTED without
// RetryInfo); it goes to the dead-letter store, which export reads, and
// the records around it arrive.
func TestForwardDeadLetterOversize(t *testing.T) {
	dstDir, srcDir := t.TempDir(), t.TempDir()
	dst := startServe(t, dstDir, "", "-grpc-max-recv-msg-size", "65536")
	src := startServe(t, srcDir, "", "-forward", "d=grpc://"+dst.addr+"?compression=none")
	var small []string
	for i := range 10 {
		id := fmt.Sprintf("ok%d", i)
		if err := sendIDs(context.Background(), src.client(), storage.Traces, nil, id); err != nil {
			t.Fatal(err)
		}
		small = append(small, id)
		if i == 4 {
			if err := sendIDs(context.Background(), src.client(), storage.Traces, make([]byte, 100<<10), "big"); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := waitStored(t, dstDir, storage.Traces, small)
	if got["big"] != 0 {
		t.Fatal("the destination stored the record it must refuse")
	}
	deadDir := forward.DeadLetterDir(srcDir, "d")
	pollUntil(t, func() string { return "no dead letter:\n" + src.logs() },
		func() bool { return len(storedIDs(t, deadDir, storage.Traces)) > 0 })
	src.stop(t)
	if !strings.Contains(src.logs(), "record dead-lettered") {
		t.Fatalf("the dead letter was not logged:\n%s", src.logs())
	}
	out, errOut, code := runCmd(t, "export", "-data-dir", deadDir, "-signal", "traces")
	if code != 0 || !strings.Contains(out, `"big"`) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("export of the dead letters: exit %d, stdout:\n%.500s\nstderr: %s", code, out, errOut)
	}
	dst.stop(t)
}

// TestForwardFlagErrors: every mistake in -forward is one line and exit
// status 2, before anything starts.
func TestForwardFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"-forward", "nourl"}, "", "want NAME=URL"},
		{[]string{"-forward", "a=ftp://h:1"}, "", `unknown scheme "ftp"`},
		{[]string{"-forward", "a=grpc://h:1?signals=spans"}, "", "signals=spans"},
		{[]string{"-forward", "a=grpc://h:1", "-forward", "a=http://h:2"}, "", `two destinations are called "a"`},
		{[]string{"-forward", "a=grpc://h:1", "-storage", "discard"}, "", "-forward needs -storage disk"},
		{nil, "a=grpc://h:1?start=never", "OTLP_LITE_FORWARD"},
	} {
		t.Run(c.want, func(t *testing.T) {
			t.Setenv("OTLP_LITE_FORWARD", c.env) // empty: no destination
			args := append([]string{"serve", "-data-dir", dir, "-grpc-addr", "127.0.0.1:0", "-http-addr", "", "-admin-addr", ""}, c.args...)
			_, errOut, code := runCmd(t, args...)
			if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want 2 and one line containing %q", code, errOut, c.want)
			}
		})
	}
}

// TestForwardRetentionHoldsAndRemove: with a destination that is down,
// -storage-max-age deletes nothing it has not received; forward-remove
// releases it, and the next serve (without -forward) lets retention
// delete. -storage-max-bytes still deletes, and says so loudly.
func TestForwardRetentionHoldsAndRemove(t *testing.T) {
	dir := t.TempDir()
	down := freeAddr(t) // nobody listens there
	src := startServe(t, dir, "", "-forward", "gone=grpc://"+down+"?retry-max-backoff=1s",
		"-storage-max-age", "1s", "-storage-max-segment-size", "4096")
	var ids []string
	for i := range 40 {
		id := fmt.Sprintf("h%d", i)
		if err := sendIDs(context.Background(), src.client(), storage.Traces, make([]byte, 500), id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Age retention runs every second; give it several rounds to (not)
	// delete: everything is past -storage-max-age by then.
	time.Sleep(3 * time.Second) // letting time pass is the point here, not synchronisation
	if got := storedIDs(t, dir, storage.Traces); len(got) != len(ids) {
		t.Fatalf("retention deleted data the destination has not received: %d of %d left", len(got), len(ids))
	}
	src.stop(t)

	out, errOut, code := runCmd(t, "forward-remove", "-data-dir", dir, "gone")
	if code != 0 || !strings.Contains(out, "removed the traces cursor of destination gone") {
		t.Fatalf("forward-remove: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := runCmd(t, "forward-remove", "-data-dir", dir, "gone"); code != 1 {
		t.Fatalf("forward-remove of a removed destination: exit %d, want 1", code)
	}
	src = startServe(t, dir, "", "-storage-max-age", "1s", "-storage-max-segment-size", "4096")
	pollUntil(t, func() string { return "retention still holds data after forward-remove" },
		func() bool { return len(storedIDs(t, dir, storage.Traces)) < len(ids) })
	src.stop(t)
}

// TestForwardMaxBytesLoss: -storage-max-bytes deletes what a down
// destination has not received; the loss is logged as an ERROR naming the
// destination.
func TestForwardMaxBytesLoss(t *testing.T) {
	dir := t.TempDir()
	down, admin := freeAddr(t), freeAddr(t)
	src := startServe(t, dir, "", "-forward", "gone=grpc://"+down, "-admin-addr", admin,
		"-storage-max-bytes", "32KiB", "-storage-max-segment-size", "4096")
	for i := range 100 {
		if err := sendIDs(context.Background(), src.client(), storage.Traces, make([]byte, 1000), fmt.Sprintf("m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	series := `otlplite_forward_lost_records_total{destination="gone",signal="traces"} `
	var body []byte
	pollUntil(t, func() string { return fmt.Sprintf("%s never counted a loss:\n%s", series, body) }, func() bool {
		resp, err := http.Get("http://" + admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		_, v, _ := strings.Cut(string(body), series)
		return v != "" && !strings.HasPrefix(v, "0\n")
	})
	src.stop(t)
	logs := src.logs()
	if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "consumer="+forward.CursorName("gone")) {
		t.Fatalf("no ERROR about the records the destination lost:\n%s", logs)
	}
	lag, err := disk.ReadConsumerLag(dir, forward.CursorName("gone"), storage.Traces)
	if err != nil {
		t.Fatal(err)
	}
	if lag.Records >= 100 {
		t.Fatalf("lag %d records: max-bytes deleted nothing", lag.Records)
	}
}
