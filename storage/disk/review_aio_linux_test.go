//go:build linux && (amd64 || arm64 || riscv64 || loong64 || ppc64le)

package disk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/otlp-lite/otlp-lite/storage"
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

// deviceFlushes returns a function counting the cache flushes completed by
// the block device that holds dir (/proc/diskstats), or skips the test
// where a direct O_DSYNC write needs none to be durable: a disk without a
// volatile write cache, or with FUA writes.
func deviceFlushes(t *testing.T, dir string) func() int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Skip(err)
	}
	maj, min := unix.Major(st.Dev), unix.Minor(st.Dev)
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", maj, min)
	queue := filepath.Join(sys, "queue")
	if _, err := os.Stat(queue); err != nil {
		queue = filepath.Join(sys, "..", "queue") // a partition
	}
	wc, err1 := os.ReadFile(filepath.Join(queue, "write_cache"))
	fua, err2 := os.ReadFile(filepath.Join(queue, "fua"))
	if err1 != nil || err2 != nil || strings.TrimSpace(string(wc)) != "write back" || strings.TrimSpace(string(fua)) != "0" {
		t.Skipf("the device of %s needs no flush per durable write (write_cache %q, fua %q)", dir, wc, fua)
	}
	id := [2]string{fmt.Sprint(maj), fmt.Sprint(min)}
	return func() int64 {
		b, err := os.ReadFile("/proc/diskstats")
		if err != nil {
			t.Skip(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			// major minor name, then 17 counters: the 16th is the
			// flushes completed (Linux 5.5 and later).
			if len(f) >= 20 && f[0] == id[0] && f[1] == id[1] {
				n, _ := strconv.ParseInt(f[18], 10, 64)
				return n
			}
		}
		t.Skip("the device has no flush counters in /proc/diskstats")
		return 0
	}
}

// TestAIOCommitFlushesDisk: on a disk with a volatile write cache and no
// FUA, a direct O_DSYNC write is durable only once the disk has flushed
// its cache. Through AIO (io_submit, the completion awaited in the
// poller) the file's O_DSYNC applies as it does to pwrite: the disk
// completes at least a flush per acknowledged commit. (Without O_DSYNC
// it completes none: 200 AIO writes, 0 flushes, against 200 with it, on
// ext4 over virtio, kernel 6.18.) Concurrent flushes of other processes
// may be merged with the log's, hence the slack; they only add to the
// count otherwise.
func TestAIOCommitFlushesDisk(t *testing.T) {
	dir := t.TempDir()
	s := openDirect(t, dir, Options{})
	defer s.Close()
	flushes := deviceFlushes(t, dir)
	// The first commit sets up AIO and preallocates.
	if err := s.Write(context.Background(), storage.Traces, []byte("first"), 1); err != nil {
		t.Fatal(err)
	}
	if s.logs[storage.Traces].aio == nil {
		t.Skip("no AIO here")
	}
	const n = 100
	before := flushes()
	for i := range n {
		if err := s.Write(context.Background(), storage.Traces, []byte(fmt.Sprintf("c-%d", i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	got := flushes() - before
	t.Logf("%d acknowledged commits through AIO, %d device flushes", n, got)
	if got < n/2 {
		t.Fatalf("%d acknowledged commits through AIO, %d device flushes: O_DSYNC did not apply", n, got)
	}
}
