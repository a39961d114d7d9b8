//go:build linux && (amd64 || arm64 || riscv64 || loong64 || ppc64le)

package disk

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openDirectFile is a file of n zeros in t's temporary directory, open
// for direct writes, or skips the test where there are none.
func openDirectFile(t *testing.T, n int) *os.File {
	t.Helper()
	if directFlags == 0 {
		t.Skip("no direct writes here")
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|directFlags, 0)
	if err != nil {
		t.Skipf("the filesystem refuses O_DIRECT: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestAIOWriteRefusedIsEINVAL: a direct write the filesystem refuses
// (here a buffer off the block alignment) fails through AIO with EINVAL
// as it does through pwrite, so that commitDirect still falls back to
// the page cache (direct.go) and the buffer is free when it returns.
func TestAIOWriteRefusedIsEINVAL(t *testing.T) {
	f := openDirectFile(t, 4*blockSize)
	w, err := newAIOWriter()
	if err != nil {
		t.Skipf("no AIO here: %v", err)
	}
	defer w.close()
	buf := alignedBytes(3 * blockSize)
	if err := w.writeAt(f, buf[1:1+blockSize], 0); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("a misaligned direct write through AIO: %v, want EINVAL", err)
	}
	// The writer is usable after it: a good write lands.
	copy(buf, "after a refusal")
	if err := w.writeAt(f, buf[:blockSize], blockSize); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 15)
	rf, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	if _, err := rf.ReadAt(got, blockSize); err != nil || string(got) != "after a refusal" {
		t.Fatalf("read back %q, %v", got, err)
	}
}

// TestAIOSubmitRefusedWritesAnyway: if io_submit itself refuses the
// request (EAGAIN: the kernel has no memory for it; EINVAL: no AIO for
// this file or context), nothing was submitted and the write is not the
// one refused: it is made with pwrite, as without AIO, instead of failing
// the commit (a client's error and a new segment) or giving up direct
// writes for good. Here the context is destroyed under the writer.
func TestAIOSubmitRefusedWritesAnyway(t *testing.T) {
	f := openDirectFile(t, 4*blockSize)
	w, err := newAIOWriter()
	if err != nil {
		t.Skipf("no AIO here: %v", err)
	}
	defer w.ev.Close()
	unix.Syscall(unix.SYS_IO_DESTROY, w.ctx, 0, 0)
	buf := alignedBytes(blockSize)
	copy(buf, "submitted anyway")
	if err := w.writeAt(f, buf, 2*blockSize); err != nil {
		t.Fatalf("io_submit refused: %v, want the write made with pwrite", err)
	}
	rf, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	got := make([]byte, 16)
	if _, err := rf.ReadAt(got, 2*blockSize); err != nil || string(got) != "submitted anyway" {
		t.Fatalf("read back %q, %v", got, err)
	}
}

// TestAIOCompletionResults: a commit is acknowledged only when its
// completion reports all its bytes written. A short write's rest is
// written with pwrite (aligned: it lands; off the block alignment: the
// direct write is refused with EINVAL, and commitDirect falls back to the
// page cache); a negative result is the write's error.
func TestAIOCompletionResults(t *testing.T) {
	f := openDirectFile(t, 4*blockSize)
	b := alignedBytes(2 * blockSize)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	if err := completed(f, b, 0, -int64(syscall.EIO)); !errors.Is(err, syscall.EIO) {
		t.Fatalf("res -EIO: %v", err)
	}
	if err := completed(f, b, 0, 100); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("res 100 of %d, the rest off the alignment: %v, want EINVAL", len(b), err)
	}
	if err := completed(f, b, 0, blockSize); err != nil {
		t.Fatalf("res %d of %d: %v", blockSize, len(b), err)
	}
	rf, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	got := make([]byte, blockSize)
	if _, err := rf.ReadAt(got, blockSize); err != nil || string(got) != string(b[blockSize:]) {
		t.Fatalf("the rest of a short write: %q..., %v", got[:8], err)
	}
	if err := completed(f, b, 0, int64(len(b))); err != nil {
		t.Fatal(err)
	}
}
