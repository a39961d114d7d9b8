package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// storeTraces writes n one-span trace requests named prefix-0.. into dir
// with an in-process store and returns their payloads.
func storeTraces(t *testing.T, dir, prefix string, n int) [][]byte {
	t.Helper()
	s, err := disk.Open(dir, disk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out [][]byte
	for i := range n {
		p := tracesRequest(nil, fmt.Sprintf("%s-%d", prefix, i))
		if err := s.Write(context.Background(), storage.Traces, p, 1); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestExportFormatsAndTimeFilters(t *testing.T) {
	dir := t.TempDir()
	want := storeTraces(t, dir, "span", 5)
	tomorrow := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	tests := []struct {
		name  string
		args  []string
		lines int
	}{
		{"all", nil, 5},
		{"since 1h ago", []string{"-since", "1h"}, 5},
		{"until 1h ago", []string{"-until", "1h"}, 0},
		{"since tomorrow", []string{"-since", tomorrow}, 0},
		{"until tomorrow", []string{"-until", tomorrow}, 5},
		{"other signal", []string{"-signal", "logs"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"-data-dir", dir}, tt.args...)
			if code := exportContext(context.Background(), args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			lines := strings.Count(out.String(), "\n")
			if lines != tt.lines {
				t.Fatalf("%d lines, want %d:\n%s", lines, tt.lines, out.String())
			}
			if lines > 0 && !strings.Contains(out.String(), `"name":"span-4"`) {
				t.Fatalf("JSON lacks the span name: %s", out.String())
			}
		})
	}
	// -format proto: 4-byte big-endian length + the stored bytes.
	var out, errb bytes.Buffer
	if code := exportContext(context.Background(), []string{"-data-dir", dir, "-format", "proto"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b := out.Bytes()
	for i, w := range want {
		if len(b) < 4 {
			t.Fatalf("proto output ends before record %d", i)
		}
		n := binary.BigEndian.Uint32(b)
		if !bytes.Equal(b[4:4+n], w) {
			t.Fatalf("record %d differs", i)
		}
		b = b[4+n:]
	}
	if len(b) != 0 {
		t.Fatalf("%d trailing bytes", len(b))
	}
	for _, args := range [][]string{
		{"-format", "yaml"}, {"-since", "yesterday"}, {"-until", "-1h"}, {"-follow", "-until", "1h"}, {"-signal", "spans"},
	} {
		if code := exportContext(context.Background(), append([]string{"-data-dir", dir}, args...), &out, &errb); code != 2 {
			t.Errorf("export %q exited %d, want 2", args, code)
		}
	}
}

// TestExportFollow tails a store while it is written and stops when
// interrupted, having printed the old and the new records.
func TestExportFollow(t *testing.T) {
	dir := t.TempDir()
	storeTraces(t, dir, "old", 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- exportContext(ctx, []string{"-data-dir", dir, "-follow", "-format", "json"}, &out, &errb)
	}()
	time.Sleep(300 * time.Millisecond)
	storeTraces(t, dir, "new", 3)
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(out.String(), "\n") < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("follow printed:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got := out.String(); !strings.Contains(got, "old-1") || !strings.Contains(got, "new-2") {
		t.Fatalf("follow output:\n%s", got)
	}
}

func TestStatsCommand(t *testing.T) {
	dir := t.TempDir()
	storeTraces(t, dir, "s", 4)
	var out, errb bytes.Buffer
	if code := stats([]string{"-data-dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	if !strings.Contains(text, "traces") || !strings.Contains(text, "total") {
		t.Fatalf("table:\n%s", text)
	}
	out.Reset()
	if code := stats([]string{"-data-dir", dir, "-format", "json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var got struct {
		Signals []struct {
			Signal   string
			Segments int
			Records  int64
			Items    int64
			Bytes    int64
			Oldest   *time.Time
		}
		Bytes int64
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	tr := got.Signals[0]
	if tr.Signal != "traces" || tr.Records != 4 || tr.Items != 4 || tr.Segments != 1 || tr.Bytes == 0 || tr.Oldest == nil {
		t.Fatalf("traces: %+v", tr)
	}
	if got.Signals[1].Records != 0 || got.Signals[1].Oldest != nil {
		t.Fatalf("metrics: %+v", got.Signals[1])
	}
	if code := stats([]string{"-data-dir", "/nonexistent"}, &out, &errb); code != 1 {
		t.Fatalf("missing dir: exit %d", code)
	}
}

func TestDiskFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    disk.Options
		wantErr string
	}{
		{nil, disk.Options{Sync: disk.SyncAlways, SyncInterval: time.Second, MaxSegmentSize: disk.DefaultMaxSegmentSize}, ""},
		{[]string{"-storage-sync", "interval", "-storage-sync-interval", "250ms", "-storage-max-bytes", "10GiB", "-storage-max-age", "168h", "-storage-compression", "zstd", "-storage-max-segment-size", "64MB"},
			disk.Options{Sync: disk.SyncInterval, SyncInterval: 250 * time.Millisecond, MaxBytes: 10 << 30, MaxAge: 168 * time.Hour, Compression: disk.CompressionZstd, MaxSegmentSize: 64e6}, ""},
		{[]string{"-storage-sync", "none", "-storage-max-bytes", "1234"}, disk.Options{Sync: disk.SyncNone, SyncInterval: time.Second, MaxBytes: 1234, MaxSegmentSize: disk.DefaultMaxSegmentSize}, ""},
		{[]string{"-storage-sync", "sometimes"}, disk.Options{}, "-storage-sync"},
		{[]string{"-storage-sync-interval", "0s"}, disk.Options{}, "-storage-sync-interval"},
		{[]string{"-storage-max-bytes", "lots"}, disk.Options{}, "-storage-max-bytes"},
		{[]string{"-storage-max-bytes", "-5"}, disk.Options{}, "-storage-max-bytes"},
		{[]string{"-storage-max-age", "-1h"}, disk.Options{}, "-storage-max-age"},
		{[]string{"-storage-compression", "lz4"}, disk.Options{}, "-storage-compression"},
		{[]string{"-storage-max-segment-size", "100"}, disk.Options{}, "-storage-max-segment-size"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := parseServeFlags(t, tt.args...).Disk.Options()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want an error about %s, got %v", tt.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("options = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestDiskFlagsOpen: the flags reach the store (a zstd segment is written)
// and bad flags keep it closed.
func TestDiskFlagsOpen(t *testing.T) {
	cfg := parseServeFlags(t, "-storage-compression", "zstd", "-storage-sync", "none")
	dir := t.TempDir()
	opts, err := cfg.Disk.Options()
	if err != nil {
		t.Fatal(err)
	}
	s, err := disk.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	seg, err := os.ReadFile(filepath.Join(dir, "traces", "00000000000000000001.seg"))
	if err != nil || len(seg) < 16 || seg[10] != byte(disk.CompressionZstd) {
		t.Fatalf("segment header %x, %v: want zstd", seg, err)
	}
	cfg.Disk.Sync = "sometimes"
	if _, err := cfg.Disk.Options(); err == nil {
		t.Fatal("open accepted a bad -storage-sync")
	}
}

// TestExportStatsProfiles: the profiles log is one more signal for export
// (a ProfilesData JSON line with its dictionary) and stats (its own row).
func TestExportStatsProfiles(t *testing.T) {
	dir := t.TempDir()
	s, err := disk.Open(dir, disk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// resource_profiles [{scope_profiles [{profiles [{}]}]}], dictionary
	// {string_table [""]}.
	req := []byte{0x0a, 0x04, 0x12, 0x02, 0x12, 0x00, 0x12, 0x02, 0x2a, 0x00}
	if err := s.Write(context.Background(), storage.Profiles, req, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := export([]string{"-data-dir", dir, "-signal", "profiles"}, &out, &errb); code != 0 {
		t.Fatalf("export exit %d: %s", code, errb.String())
	}
	if want := `{"resourceProfiles":[{"scopeProfiles":[{"profiles":[{}]}]}],"dictionary":{"stringTable":[""]}}` + "\n"; out.String() != want {
		t.Fatalf("export printed %q, want %q", out.String(), want)
	}
	out.Reset()
	if code := stats([]string{"-data-dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("stats exit %d: %s", code, errb.String())
	}
	var row string
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "profiles" {
			row = line
		}
	}
	if f := strings.Fields(row); len(f) < 5 || f[1] != "1" || f[2] != "1" || f[3] != "1" {
		t.Fatalf("stats has no profiles row with 1 segment, record and profile:\n%s", out.String())
	}
}
