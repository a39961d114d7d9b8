package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/storage"
)

// TestServeDiskFull runs `otlp-lite serve` on a 4 MiB tmpfs: once the disk
// fills, clients get UNAVAILABLE with a RetryInfo delay (OTLP v1.11
// "Failures": retryable); after space is freed the same server accepts
// requests again without a restart, and every request acknowledged before,
// during and after is stored undamaged.
func TestServeDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a filesystem and runs a server")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("skipping: cannot mount a size-limited tmpfs (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(mnt, "data")
	srv := startServe(t, dataDir, "")
	c := srv.client()

	pad := make([]byte, 64<<10)
	var acked []string
	send := func(id string) error {
		for i := range pad {
			pad[i] = byte(rand.Uint32()) // incompressible, in case of zstd
		}
		err := sendIDs(context.Background(), c, storage.Traces, pad, id)
		if err == nil {
			acked = append(acked, id)
		}
		return err
	}
	n := 0
	refusals := 0
	for ; n < 200 && refusals < 5; n++ {
		err := send(fmt.Sprintf("before-%d", n))
		if err == nil {
			continue
		}
		var st *grpcwire.Status
		if !errors.As(err, &st) || st.Code != grpcwire.Unavailable || st.RetryDelay <= 0 {
			t.Fatalf("request %d on a full disk: want UNAVAILABLE with RetryInfo, got %v", n, err)
		}
		refusals++
	}
	if refusals == 0 {
		t.Fatal("the disk never filled")
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// The server recovers by itself: the very next request succeeds.
	for i := range 5 {
		if err := send(fmt.Sprintf("after-%d", i)); err != nil {
			t.Fatalf("request after freeing space: %v", err)
		}
	}
	srv.stop(t)
	stored := storedIDs(t, dataDir, storage.Traces)
	for _, id := range acked {
		if stored[id] != 1 {
			t.Fatalf("acknowledged %s stored %d times", id, stored[id])
		}
	}
	if len(stored) != len(acked) {
		t.Fatalf("stored %d items, acknowledged %d: a refused request was stored", len(stored), len(acked))
	}
	t.Logf("%d acknowledged, %d refused while full, then accepted again", len(acked), refusals)
}
