//go:build linux

package disk

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// directFlags open a segment written with SyncAlways (direct.go): writes
// bypass the page cache (O_DIRECT) and each returns once its data is on
// stable storage (O_DSYNC, an fdatasync in the same system call).
const directFlags = syscall.O_DIRECT | syscall.O_DSYNC

// pwritev writes the buffers of iov at off with as few system calls as
// the kernel allows (one, unless it writes less than asked: then the
// rest is written again, to get its error, as os.File.WriteAt does).
func pwritev(f *os.File, iov [][]byte, off int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	for len(iov) > 0 {
		var n int
		if cerr := rc.Write(func(fd uintptr) bool {
			n, err = unix.Pwritev(int(fd), iov, off)
			return true
		}); cerr != nil {
			return cerr
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		off += int64(n)
		for n > 0 {
			if n < len(iov[0]) {
				iov[0] = iov[0][n:]
				break
			}
			n -= len(iov[0])
			iov = iov[1:]
		}
	}
	return nil
}

// zeroPages returns n bytes of zeros, page-aligned, from a read-only
// anonymous mapping (never written, so never given memory of its own), or
// from the heap if the mapping fails.
func zeroPages(n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return alignedBytes(n)
	}
	return b
}
