package disk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

func TestSegmentHeader(t *testing.T) {
	v1 := append(segmentMagic[:], 1, byte(storage.Logs), 0, 0, 0, 0, 0, 0)
	tests := []struct {
		name    string
		hdr     []byte
		want    segmentHeader
		wantErr bool
	}{
		{"v4 none", appendSegmentHeader(nil, 1, CompressionNone), segmentHeader{4, 1, CompressionNone}, false},
		{"v4 zstd", appendSegmentHeader(nil, 2, CompressionZstd), segmentHeader{4, 2, CompressionZstd}, false},
		{"v3", func() []byte { h := appendSegmentHeader(nil, 1, CompressionZstd); h[8] = 3; return h }(), segmentHeader{3, 1, CompressionZstd}, false},
		{"v2", func() []byte { h := appendSegmentHeader(nil, 1, CompressionZstd); h[8] = 2; return h }(), segmentHeader{2, 1, CompressionZstd}, false},
		{"v1", v1, segmentHeader{1, 3, CompressionNone}, false},
		{"v1 with compression", func() []byte { h := bytes.Clone(v1); h[10] = 1; return h }(), segmentHeader{}, true},
		{"unknown compression", func() []byte { h := appendSegmentHeader(nil, 1, 0); h[10] = 9; return h }(), segmentHeader{}, true},
		{"future version", func() []byte { h := appendSegmentHeader(nil, 1, 0); h[8] = 5; return h }(), segmentHeader{}, true},
		{"bad magic", append([]byte("OTLPLOX\x00"), 2, 1, 0, 0, 0, 0, 0, 0), segmentHeader{}, true},
		{"short", segmentMagic[:], segmentHeader{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSegmentHeader(tt.hdr)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseSegmentHeader = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// writeV1Segment writes a segment as the first release wrote it: format
// version 1, no compression byte in use.
func writeV1Segment(t *testing.T, dir string, sig storage.Signal, seq uint64, payloads ...string) {
	t.Helper()
	b := append(segmentMagic[:], 1, byte(sig), 0, 0, 0, 0, 0, 0)
	for i, p := range payloads {
		b = appendRecord(b, time.Now().UnixNano(), i+1, []byte(p))
	}
	d := filepath.Join(dir, sig.String())
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, segmentName(seq)), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompressionPerSegment switches compression across restarts: every
// segment keeps the compression its header records, so all of them stay
// readable, version 1 segments included.
func TestCompressionPerSegment(t *testing.T) {
	dir := t.TempDir()
	writeV1Segment(t, dir, storage.Traces, 1, "v1-a", "v1-b")
	want := []string{"v1-a", "v1-b"}
	for round, c := range []Compression{CompressionZstd, CompressionNone, CompressionZstd} {
		s, err := Open(dir, Options{Compression: c})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			p := fmt.Sprintf("round %d record %d %s", round, i, bytes.Repeat([]byte("resource.attribute "), 50))
			if err := s.Write(context.Background(), storage.Traces, []byte(p), 1); err != nil {
				t.Fatal(err)
			}
			want = append(want, p)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got := scanAll(t, dir, storage.Traces)
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Fatalf("record %d = %.40q, want %.40q", i, got[i], want[i])
		}
	}
	// The zstd segments really are compressed.
	segs, _ := listSegments(filepath.Join(dir, "traces"))
	var sawZstd bool
	for _, name := range segs {
		b, _ := os.ReadFile(filepath.Join(dir, "traces", name))
		if Compression(b[10]) == CompressionZstd {
			sawZstd = true
			if len(b) > 3*300 {
				t.Fatalf("zstd segment %s is %d bytes for 3 repetitive ~1 KB records", name, len(b))
			}
		}
	}
	if !sawZstd {
		t.Fatal("no zstd segment was written")
	}
}

func TestParseOptions(t *testing.T) {
	for _, name := range []string{"always", "interval", "none"} {
		p, err := ParseSyncPolicy(name)
		if err != nil || p.String() != name {
			t.Fatalf("ParseSyncPolicy(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := ParseSyncPolicy("sometimes"); err == nil {
		t.Fatal("ParseSyncPolicy accepted sometimes")
	}
	for _, name := range []string{"zstd", "none"} {
		c, err := ParseCompression(name)
		if err != nil || c.String() != name {
			t.Fatalf("ParseCompression(%q) = %v, %v", name, c, err)
		}
	}
	if _, err := ParseCompression("gzip"); err == nil {
		t.Fatal("ParseCompression accepted gzip")
	}
	if _, err := Open(t.TempDir(), Options{Sync: 7}); err == nil {
		t.Fatal("Open accepted an unknown sync policy")
	}
}

// TestSyncPolicies writes and reads back under every policy; the interval
// policy's ticker fsyncs in the background while writes continue.
func TestSyncPolicies(t *testing.T) {
	for _, p := range []SyncPolicy{SyncAlways, SyncInterval, SyncNone} {
		t.Run(p.String(), func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{Sync: p, SyncInterval: time.Millisecond, MaxSegmentSize: 1024})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				if err := s.Write(context.Background(), storage.Logs, []byte(fmt.Sprintf("log %d", i)), 1); err != nil {
					t.Fatal(err)
				}
				if i%10 == 0 {
					time.Sleep(2 * time.Millisecond)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			got := scanAll(t, dir, storage.Logs)
			if len(got) != 100 || string(got[99]) != "log 99" {
				t.Fatalf("got %d records", len(got))
			}
			if l := s.logs[storage.Logs]; l.dirty && p != SyncNone {
				t.Fatal("data left unsynced after Close")
			}
		})
	}
}

func TestOpenRejectsWrongSignal(t *testing.T) {
	dir := t.TempDir()
	writeV1Segment(t, dir, storage.Logs, 1, "x")
	if err := os.Rename(filepath.Join(dir, "logs"), filepath.Join(dir, "traces")); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, Options{})
	if err == nil {
		t.Fatal("Open accepted a logs segment in the traces directory")
	}
	if errors.Is(err, ErrCorrupt) {
		t.Fatalf("unexpected ErrCorrupt: %v", err)
	}
}
