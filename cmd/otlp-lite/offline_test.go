package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// TestOfflineCommandsRefuseWhileServing (issue 21, "no silent gap"): while
// a store has the data directory open, as a running serve does,
// forward-remove refuses in one line instead of removing cursors the
// serve's forwarder writes again; replay refuses a -cursor that a
// forwarder (or another replay) has open. Once the store is closed, both
// run.
func TestOfflineCommandsRefuseWhileServing(t *testing.T) {
	dir := t.TempDir()
	st, err := disk.Open(dir, disk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := disk.OpenConsumerAt(dir, forward.CursorName("dst"), storage.Logs, disk.StartOldest)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := forwardRemove([]string{"-data-dir", dir, "dst"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "in use by a running otlp-lite serve: stop it first") || strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("forward-remove while serving: exit %d, stderr %q", code, stderr.String())
	}
	if names, _ := disk.ConsumerNames(dir, storage.Logs, ""); len(names) != 1 {
		t.Fatalf("forward-remove removed a cursor while refused: %v", names)
	}
	stdout.Reset()
	stderr.Reset()
	args := []string{"-data-dir", dir, "-endpoint", "127.0.0.1:1", "-insecure", "-signal", "logs", "-cursor", forward.CursorName("dst")}
	if code := replayContextBackground(args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "is in use by another process") {
		t.Fatalf("replay on a forwarder's open cursor: exit %d, stderr %q", code, stderr.String())
	}
	c.Close()
	st.Close()
	stdout.Reset()
	stderr.Reset()
	if code := forwardRemove([]string{"-data-dir", dir, "dst"}, &stdout, &stderr); code != 0 {
		t.Fatalf("forward-remove after serve stopped: exit %d, %s", code, stderr.String())
	}
	// And a serve cannot start while forward-remove holds the directory.
	release, err := disk.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := disk.Open(dir, disk.Options{}); err == nil {
		t.Fatal("a store opened while an offline command held the directory")
	}
}
