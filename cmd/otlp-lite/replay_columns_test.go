package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// recordBytes returns the bytes of every record of a signal in a data
// directory, sorted.
func recordBytes(t *testing.T, dataDir string, sig storage.Signal) []string {
	t.Helper()
	var out []string
	if err := disk.Scan(dataDir, sig, func(r disk.Record) error {
		out = append(out, string(r.Data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestReplayStreamColumns: replay over the streaming mode with the
// columnar transform (-stream-columns) to the binary: the server accepts
// it, and every record is stored with the bytes it had at the source.
func TestReplayStreamColumns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs servers")
	}
	src := t.TempDir()
	fillSource(t, src, "c", 40, 12)
	dst := startAbuseServer(t)
	var stdout, stderr syncBuffer
	args := []string{"-data-dir", src, "-endpoint", dst.addr, "-insecure", "-protocol", "stream", "-stream-columns"}
	if code := replayContext(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("stream replay exited %d:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "replayed 52 records") {
		t.Fatalf("final count: %q", stdout.String())
	}
	if n := dst.metric(t, "otlplite_stream_columns_accepted_total"); n < 1 {
		t.Fatalf("columns accepted on %v streams", n)
	}
	dst.stop(t)
	for _, sig := range []storage.Signal{storage.Traces, storage.Logs} {
		want, got := recordBytes(t, src, sig), recordBytes(t, dst.dataDir, sig)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Fatalf("%v: %d records stored, %d at the source, or their bytes differ", sig, len(got), len(want))
		}
	}
}
