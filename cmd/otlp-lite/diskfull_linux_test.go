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
	"time"

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

// TestServeDiskFullForwardingLags is the fault harness of issue 21 for
// finding 12: a serve on a 6 MiB tmpfs with -storage-max-age 3s forwards to
// a destination that refuses everything (forwarding lags, and its cursor
// holds every segment against max-age) while clients fill the disk until
// the receiver refuses them (UNAVAILABLE, the gRPC form of HTTP 503). Then
// the destination comes back. On main the cursor commit needed a new
// temporary file on the full disk and failed for good: nothing was ever
// deleted and the refusals never ended. Now every acknowledged record
// reaches the destination, retention frees the disk and the same server
// accepts requests again, without a restart.
func TestServeDiskFullForwardingLags(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a filesystem and runs a server")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=6m"); err != nil {
		t.Skipf("skipping: cannot mount a size-limited tmpfs (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	dst := newGateSink(0)
	dstAddr := startGateTarget(t, dst)
	dataDir := filepath.Join(mnt, "data")
	srv := startServe(t, dataDir, "", "-storage-max-age", "3s",
		"-forward", "dst=grpc://"+dstAddr+"?compression=none")
	c := srv.client()

	pad := make([]byte, 64<<10)
	var acked []string
	send := func(id string) error {
		for i := range pad {
			pad[i] = byte(rand.Uint32())
		}
		err := sendIDs(context.Background(), c, storage.Traces, pad, id)
		if err == nil {
			acked = append(acked, id)
		}
		return err
	}
	refusal := func(err error) *grpcwire.Status {
		t.Helper()
		st, ok := errors.AsType[*grpcwire.Status](err)
		if !ok || st.Code != grpcwire.Unavailable || st.RetryDelay <= 0 {
			t.Fatalf("on a full disk: want UNAVAILABLE with RetryInfo, got %v", err)
		}
		return st
	}
	refusals := 0
	for n := 0; n < 400 && refusals < 5; n++ {
		if err := send(fmt.Sprintf("full-%d", n)); err != nil {
			refusal(err)
			refusals++
		}
	}
	if refusals == 0 {
		t.Fatal("the disk never filled")
	}
	// Whatever a 64 KiB request did not fit into, another program takes:
	// not one free byte is left.
	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{64 << 10, 512, 1} {
		for {
			if _, err := filler.Write(make([]byte, n)); err != nil {
				break
			}
		}
	}
	filler.Close()
	dst.open()
	// Clients retry as the refusals' RetryInfo asks; the refusals end by
	// themselves once forwarding has caught up and retention has freed
	// the disk.
	back := time.Now()
	deadline := back.Add(30 * time.Second)
	for i := 0; ; i++ {
		err := send(fmt.Sprintf("retry-%d", i))
		if err == nil {
			t.Logf("accepted again %v after the destination came back", time.Since(back).Round(time.Millisecond))
			break
		}
		st := refusal(err)
		if time.Now().After(deadline) {
			t.Fatalf("still refused 30s after the destination came back (%d acknowledged, %d delivered):\n%s", len(acked), len(dst.ids(t, storage.Traces)), srv.logs())
		}
		<-time.After(st.RetryDelay)
	}
	for i := range 5 {
		if err := send(fmt.Sprintf("after-%d", i)); err != nil {
			t.Fatalf("request %d after recovery: %v", i, err)
		}
	}
	// Every acknowledged record reaches the destination.
	for {
		got := dst.ids(t, storage.Traces)
		missing := 0
		for _, id := range acked {
			if got[id] == 0 {
				missing++
			}
		}
		if missing == 0 {
			t.Logf("%d acknowledged (%d refused while the disk was full), all delivered", len(acked), refusals)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d acknowledged records never delivered:\n%s", missing, len(acked), srv.logs())
		}
		<-time.After(50 * time.Millisecond)
	}
	srv.stop(t)
}

// TestServeStartsOnFullDisk: an operator restarts serve, forwarding
// included, on a disk filled to the last byte. It starts (on main it could
// not create its new segment and refused to start, so nothing could free
// the disk), refuses requests as unavailable, and accepts them once space
// is freed, without another restart.
func TestServeStartsOnFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a filesystem and runs a server")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("skipping: cannot mount a size-limited tmpfs (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	// Another program's file, removed at the end to free the disk.
	if err := os.WriteFile(filepath.Join(mnt, "other"), make([]byte, 512<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := newGateSink(0)
	args := []string{"-storage-max-age", "1h", "-forward", "dst=grpc://" + startGateTarget(t, dst) + "?compression=none"}
	dataDir := filepath.Join(mnt, "data")
	srv := startServe(t, dataDir, "", args...)
	pad := make([]byte, 64<<10)
	for n := 0; ; n++ {
		if n == 100 {
			t.Fatal("the disk never filled")
		}
		if err := sendIDs(context.Background(), srv.client(), storage.Traces, pad, fmt.Sprint(n)); err != nil {
			break
		}
	}
	srv.stop(t)
	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{64 << 10, 512, 1} {
		for {
			if _, err := filler.Write(make([]byte, n)); err != nil {
				break
			}
		}
	}
	filler.Close()
	srv = startServe(t, dataDir, "", args...)
	err = sendIDs(context.Background(), srv.client(), storage.Traces, pad, "full")
	if st, ok := errors.AsType[*grpcwire.Status](err); !ok || st.Code != grpcwire.Unavailable {
		t.Fatalf("on a full disk: %v, want UNAVAILABLE", err)
	}
	for _, f := range []string{"filler", "other"} {
		if err := os.Remove(filepath.Join(mnt, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sendIDs(context.Background(), srv.client(), storage.Traces, pad, "freed"); err != nil {
		t.Fatalf("after freeing space: %v", err)
	}
	srv.stop(t)
}
