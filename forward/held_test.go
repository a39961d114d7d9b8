package forward

import (
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// TestNewRefusesUnheldLog: forwarding from a store that does not hold
// retention for its cursors (no Store, or one opened without
// HoldPrefix, or a cursor outside it) refuses to start with an error that
// says what to set, instead of letting retention delete records before
// they are forwarded, unnoticed (issue 22: forward asked for the hold and
// never checked). Options.Unheld, or a destination without a cursor,
// accepts the gaps.
func TestNewRefusesUnheldLog(t *testing.T) {
	d := mustParse(t, "dst=grpc://127.0.0.1:1?signals=traces")
	bare := t.TempDir()
	unheld, err := disk.Open(bare, disk.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer unheld.Close()
	heldDir := t.TempDir()
	held := openStore(t, heldDir)
	defer held.Close()
	elsewhere := d
	elsewhere.Cursor = "replay-x" // not under CursorPrefix
	for _, tc := range []struct {
		name string
		opts Options
		d    Destination
	}{
		{"no store", Options{DataDir: bare, Logger: quiet()}, d},
		{"store without HoldPrefix", Options{DataDir: bare, Store: unheld, Logger: quiet()}, d},
		{"cursor outside HoldPrefix", Options{DataDir: heldDir, Store: held, Logger: quiet()}, elsewhere},
	} {
		f, err := New(tc.opts, []Destination{tc.d})
		if err == nil {
			f.Close()
			t.Fatalf("%s: New started forwarding from a log that does not hold its cursors", tc.name)
		}
		if !strings.Contains(err.Error(), "does not hold retention") || !strings.Contains(err.Error(), "HoldPrefix") {
			t.Fatalf("%s: error %q does not say what to set", tc.name, err)
		}
	}
	noCursor := elsewhere
	noCursor.NoCursor = true
	for _, tc := range []struct {
		opts Options
		d    Destination
	}{
		{Options{DataDir: heldDir, Store: held, Logger: quiet()}, d},
		{Options{DataDir: bare, Logger: quiet(), Unheld: true}, d},
		{Options{DataDir: bare, Logger: quiet()}, noCursor},
	} {
		f, err := New(tc.opts, []Destination{tc.d})
		if err != nil {
			t.Fatalf("New(%+v): %v", tc.opts, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHold: a store opened with the options Hold sets holds forwarding's
// cursors, so New starts.
func TestHold(t *testing.T) {
	dir := t.TempDir()
	var o disk.Options
	Hold(&o, nil)
	st, err := disk.Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f, err := New(Options{DataDir: dir, Store: st, Logger: quiet()}, []Destination{mustParse(t, "dst=grpc://127.0.0.1:1?signals=traces")})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
