//go:build linux

package disk

import (
	"io"
	"os"
	"syscall"
	"unsafe"

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

// zeroPages returns n bytes of zeros (n a multiple of hugePage),
// page-aligned, from a read-only anonymous mapping (never written, so
// never given memory of its own), or from the heap if the mapping fails.
//
// The mapping is aligned to hugePage and asks for transparent huge pages:
// where the system has them, the kernel maps its huge zero page there
// (not counted in the process's memory), and a direct write of the zeros
// pins n/hugePage pages and sends the disk a few long segments instead of
// one per 4 KiB page. A direct write of 4 MiB of zeros took 100 µs of CPU
// per MiB from 4 KiB zero pages, 43 µs from the huge zero page (on ext4
// over virtio, kernel 6.18). Where there are no huge pages, it is the
// 4 KiB zero page as before.
func zeroPages(n int) []byte {
	b := hugeMapping(n, unix.PROT_READ)
	if b == nil {
		return alignedBytes(n)
	}
	return b
}

// hugeMapping maps n bytes (a multiple of hugePage) of anonymous memory
// with prot, aligned to hugePage, and asks for transparent huge pages
// (advice: without them, THP off or an old kernel, 4 KiB pages). It
// returns nil if the mapping fails.
func hugeMapping(n int, prot int) []byte {
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(n+hugePage), prot, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil
	}
	// Unmap what the alignment leaves before and after.
	off := (hugePage - uintptr(p)%hugePage) % hugePage
	if off > 0 {
		unix.MunmapPtr(p, off)
	}
	if rest := uintptr(hugePage) - off; rest > 0 {
		unix.MunmapPtr(unsafe.Add(p, off+uintptr(n)), rest)
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, off)), n)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	return b
}

// isDirect reports whether f is open with O_DIRECT (the fault layer's
// simulatedNoDirect).
func isDirect(f *os.File) bool {
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_DIRECT != 0
}
