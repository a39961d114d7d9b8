package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// gapSource stores 100 log records, commits cursors after the first 25 of
// them, lets retention delete every segment (75 records after the cursors
// go with them), then stores 25 more: what issue 21 found (finding 15).
func gapSource(t *testing.T, cursors ...string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(opts disk.Options, from, to int) {
		s, err := disk.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := from; i < to; i++ {
			if err := s.Write(context.Background(), storage.Logs, logsRequest(fmt.Sprintf("g-%03d", i)), 1); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(disk.Options{MaxSegmentSize: 1024}, 0, 100)
	for _, name := range cursors {
		c, err := disk.OpenConsumer(dir, name, storage.Logs)
		if err != nil {
			t.Fatal(err)
		}
		for range 25 {
			if _, err := c.Next(); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Commit(); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	// Opening with an age limit of 1ns deletes every closed segment, and
	// the segment written last is closed when the store opens again.
	write(disk.Options{MaxSegmentSize: 1024, MaxAge: time.Nanosecond}, 0, 0)
	write(disk.Options{MaxSegmentSize: 1024}, 100, 125)
	return dir
}

// TestReplayReportsRetentionGap is finding 15 of issue 21: 75 acknowledged
// records after a replay cursor were deleted by retention; replay printed
// `replayed 25 records` and exited 0. Now it names the gap on stderr,
// counts it in the summary (text and JSON), delivers the 25 records after
// it, and exits 1, unless -allow-gaps, which exits 0 with the same count.
// Over -protocol stream as well.
func TestReplayReportsRetentionGap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a target")
	}
	src := gapSource(t, "gap-grpc", "gap-stream", "gap-allowed")
	for _, tc := range []struct {
		cursor, protocol string
		allow            bool
	}{{"gap-grpc", "grpc", false}, {"gap-stream", "stream", false}, {"gap-allowed", "grpc", true}} {
		t.Run(tc.cursor, func(t *testing.T) {
			sink := newGateSink(1 << 20)
			addr := startGateTarget(t, sink)
			args := []string{"-data-dir", src, "-endpoint", addr, "-insecure", "-protocol", tc.protocol, "-signal", "logs", "-cursor", tc.cursor}
			want := 1
			if tc.allow {
				args = append(args, "-allow-gaps", "-summary-json", "-")
				want = 0
			}
			var stdout, stderr syncBuffer
			if code := replayContextBackground(args, &stdout, &stderr); code != want {
				t.Fatalf("replay exited %d, want %d:\n%s\n%s", code, want, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), "75 records between") {
				t.Fatalf("the gap is not named on stderr:\n%s", stderr.String())
			}
			if tc.allow {
				var s clientSummary
				if err := json.Unmarshal([]byte(stdout.String()), &s); err != nil || s.LostRecords != 75 || s.Acknowledged != 25 {
					t.Fatalf("summary %+v (%v), want 75 lost and 25 acknowledged:\n%s", s, err, stdout.String())
				}
			} else {
				for _, want := range []string{"replayed 25 records", "75 records deleted by retention", "lost:      75 records"} {
					if !strings.Contains(stdout.String()+stderr.String(), want) {
						t.Fatalf("output lacks %q:\n%s\n%s", want, stdout.String(), stderr.String())
					}
				}
			}
			got := sink.ids(t, storage.Logs)
			if len(got) != 25 || got["g-100"] != 1 || got["g-124"] != 1 {
				t.Fatalf("target got %d records, want g-100..g-124", len(got))
			}
			// The cursor passed the gap: a second run reports nothing.
			stdout, stderr = syncBuffer{}, syncBuffer{}
			if code := replayContextBackground(args, &stdout, &stderr); code != 0 {
				t.Fatalf("second run exited %d:\n%s", code, stderr.String())
			}
		})
	}
}
