package disk

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestLogID: a directory's identity is made once and read back the same by
// every caller, concurrent ones included; it survives the store's reopen;
// a damaged identity file is refused, never replaced.
func TestLogID(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Go(func() {
			id, err := LogID(dir)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || len(id) != idLen {
			t.Fatalf("identities %q: want one of %d digits", ids, idLen)
		}
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := s.ID(); err != nil || id != ids[0] {
		t.Fatalf("store identity %q, %v; want %q", id, err, ids[0])
	}
	s.Close()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if filepath.Ext(e.Name()) != "" && e.Name() != IDFile {
			t.Fatalf("left behind %s", e.Name())
		}
	}
	if other, _ := LogID(t.TempDir()); other == ids[0] {
		t.Fatal("two directories share an identity")
	}

	if err := os.WriteFile(filepath.Join(dir, IDFile), []byte("not an id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LogID(dir); !errors.Is(err, ErrBadID) {
		t.Fatalf("damaged identity: %v, want ErrBadID", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, IDFile)); string(b) != "not an id\n" {
		t.Fatalf("damaged identity replaced by %q", b)
	}
}
