package disk

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
)

// copyDir copies the tree src to dst (a test's fixture into its TempDir,
// which the store then writes to).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenThreeSignalLayout opens testdata/layout3, a data directory
// written by the store before the profiles signal existed (traces, metrics
// and logs directories only, two records each, "<signal>-<i>" behind a
// two-byte prefix): its records read back unchanged, before and after a
// server opens it, and the profiles log starts empty beside them.
func TestOpenThreeSignalLayout(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, filepath.Join("testdata", "layout3"), dir)
	if _, err := os.Stat(filepath.Join(dir, "profiles")); !os.IsNotExist(err) {
		t.Fatalf("fixture has a profiles directory: %v", err)
	}
	old := []storage.Signal{storage.Traces, storage.Metrics, storage.Logs}
	checkOld := func(when string) {
		t.Helper()
		for _, sig := range old {
			got := scanAll(t, dir, sig)
			if len(got) != 2 {
				t.Fatalf("%s: %s has %d records, want 2", when, sig, len(got))
			}
			for i, rec := range got {
				if want := sig.String() + "-" + string(rune('0'+i)); string(rec[2:]) != want {
					t.Fatalf("%s: %s record %d is %q, want %q", when, sig, i, rec[2:], want)
				}
			}
		}
	}

	// Read-only tools (export, stats, replay) on the old directory, as a
	// new binary finds it: no profiles directory is not an error.
	checkOld("before open")
	if got := scanAll(t, dir, storage.Profiles); len(got) != 0 {
		t.Fatalf("profiles in an old directory: %d records", len(got))
	}
	st, err := ReadStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Signals) != len(storage.Signals) {
		t.Fatalf("stats: %d signals, want %d", len(st.Signals), len(storage.Signals))
	}
	for _, ss := range st.Signals {
		want := int64(2)
		if ss.Signal == storage.Profiles {
			want = 0
		}
		if ss.Records != want {
			t.Fatalf("stats: %s has %d records, want %d", ss.Signal, ss.Records, want)
		}
	}

	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("cannot open the three-signal layout: %v", err)
	}
	if err := s.Write(context.Background(), storage.Profiles, []byte("profiles-0"), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), storage.Traces, []byte("traces-2"), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The old segments are untouched: the new record went to a new
	// segment (recovery starts one), the profiles log has its own.
	if got := scanAll(t, dir, storage.Traces); len(got) != 3 || string(got[2]) != "traces-2" {
		t.Fatalf("traces after reopen: %q", got)
	}
	for _, sig := range old[1:] {
		if got := scanAll(t, dir, sig); len(got) != 2 {
			t.Fatalf("%s after reopen: %d records", sig, len(got))
		}
	}
	if got := scanAll(t, dir, storage.Profiles); len(got) != 1 || string(got[0]) != "profiles-0" {
		t.Fatalf("profiles: %q", got)
	}
	segs, err := listSegments(filepath.Join(dir, "profiles"))
	if err != nil || len(segs) != 1 {
		t.Fatalf("profiles segments %v, %v", segs, err)
	}
	fixture, err := os.ReadFile(filepath.Join("testdata", "layout3", "metrics", segmentName(1)))
	if err != nil {
		t.Fatal(err)
	}
	now, err := os.ReadFile(filepath.Join(dir, "metrics", segmentName(1)))
	if err != nil || string(now) != string(fixture) {
		t.Fatalf("the old metrics segment changed (%v)", err)
	}
}
