//go:build linux && (amd64 || arm64 || riscv64 || loong64 || ppc64le)

package disk

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Asynchronous commits (Linux native AIO).
//
// A direct write (direct.go) waits for the disk: its data, then, on a
// disk without FUA, a flush of the disk's cache, about two device round
// trips. Made with pwrite(2), the flusher's thread blocks in the system
// call for all of it, and the Go runtime treats the blocked thread as it
// must: sysmon, which then keeps polling at its shortest tick, takes the
// processor back from it after 20 µs and hands it to another thread
// (woken or created for it), and the thread that returns from the write
// has to find a processor again (futex wake-ups and context switches on
// every commit). On a server given one core, that hand-off is most of
// what a commit costs besides the copy and the CRC.
//
// aioWriter submits the same write with io_submit(2) instead, which for
// a direct write into written blocks (preallocation: no allocation, no
// size change) queues the I/O and returns, and waits for its completion
// on an eventfd in the runtime's network poller: the flusher goroutine
// parks like a connection's reader, no thread blocks, nothing is handed
// off. The O_DSYNC of the segment's descriptor applies to it as to
// pwrite: the kernel completes the request (and signals the eventfd)
// only after the data and the cache flush are done, so an OK still
// means that the bytes are on stable storage. The flush's submission
// runs in a kernel worker instead of the flusher's thread (a few µs per
// commit, not in the process's CPU time).
//
// Where the kernel has no AIO (ENOSYS), a sandbox refuses it (EPERM), or
// the system's aio-max-nr is used up (EAGAIN; each log takes one of
// it; asked again after aioRetryAfter), the log writes with pwrite as
// before, and so is a write whose request io_submit refuses.

// iocb is struct iocb of linux/aio_abi.h on a little-endian machine
// (aio_key before aio_rw_flags; the build constraint keeps big-endian
// machines on pwrite).
type iocb struct {
	data      uint64
	key       uint32
	rwFlags   int32
	opcode    uint16
	reqprio   int16
	fildes    uint32
	buf       uint64
	nbytes    uint64
	offset    int64
	reserved2 uint64
	flags     uint32
	resfd     uint32
}

// ioEvent is struct io_event.
type ioEvent struct {
	data uint64
	obj  uint64
	res  int64
	res2 int64
}

const (
	iocbCmdPwrite = 1      // IOCB_CMD_PWRITE
	iocbFlagResfd = 1 << 0 // IOCB_FLAG_RESFD: signal aio_resfd on completion
)

// aioWriter is one AIO context with room for one write in flight (the
// flusher's commit) and the eventfd its completions signal. It is owned
// by the flusher goroutine.
type aioWriter struct {
	ctx  uintptr  // aio_context_t
	ev   *os.File // eventfd (non-blocking, in the poller)
	evfd int      // ev's descriptor (ev.Fd() would make it blocking)
	cb   iocb
	cbs  [1]*iocb
	out  [1]ioEvent
	cnt  [8]byte
}

// newAIOWriter sets up an AIO context and its eventfd.
func newAIOWriter() (*aioWriter, error) {
	w := &aioWriter{}
	// nr_events 1: one commit in flight per log.
	if _, _, e := unix.Syscall(unix.SYS_IO_SETUP, 1, uintptr(unsafe.Pointer(&w.ctx)), 0); e != 0 {
		return nil, fmt.Errorf("io_setup: %w", e)
	}
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Syscall(unix.SYS_IO_DESTROY, w.ctx, 0, 0)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	// A non-blocking descriptor: os.NewFile puts it in the poller, so a
	// read parks the goroutine, not the thread.
	w.ev, w.evfd = os.NewFile(uintptr(fd), "aio-eventfd"), fd
	w.cbs[0] = &w.cb
	return w, nil
}

// writeAt writes b to f at off and returns once the write has completed
// (with O_DSYNC: once it is on stable storage). b, f and off follow the
// rules of a direct write (blockSize-aligned).
func (w *aioWriter) writeAt(f *os.File, b []byte, off int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if cerr := rc.Control(func(fd uintptr) {
		w.cb = iocb{
			opcode: iocbCmdPwrite,
			fildes: uint32(fd),
			buf:    uint64(uintptr(unsafe.Pointer(&b[0]))),
			nbytes: uint64(len(b)),
			offset: off,
			flags:  iocbFlagResfd,
			resfd:  uint32(w.evfd),
		}
		for {
			_, _, e := unix.Syscall(unix.SYS_IO_SUBMIT, w.ctx, 1, uintptr(unsafe.Pointer(&w.cbs[0])))
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				serr = e
			}
			break
		}
	}); cerr != nil {
		return cerr
	}
	if serr != nil {
		// io_submit takes the one request or none: nothing was
		// submitted, and the refusal is the kernel's (EAGAIN: no
		// memory for the request; EINVAL: no AIO for this file), not
		// the write's. Write with pwrite, which returns the write's
		// own error (EINVAL there: commitDirect's fallback), rather
		// than fail the commit or give up direct writes.
		_, err := f.WriteAt(b, off)
		return err
	}
	// The write is in flight and reads b until it completes: nothing
	// may return before the completion is reaped.
	res, err := w.wait()
	if err != nil {
		// The poller failed the wait (cannot happen for an eventfd
		// short of a bug): the write may still be reading b, which
		// the log reuses, so reap it blocking the thread before
		// returning.
		res, err = w.waitBlocking()
	}
	runtime.KeepAlive(b)
	if err != nil {
		// The context is unusable, and the write's fate unknown:
		// cannot happen short of a kernel bug.
		return fmt.Errorf("cannot wait for a write: %w", err)
	}
	return completed(f, b, off, res)
}

// completed is the outcome of the write of b at off whose completion
// reports res: nil only if all of b is written.
func completed(f *os.File, b []byte, off, res int64) error {
	switch {
	case res < 0:
		return &os.PathError{Op: "write", Path: f.Name(), Err: syscall.Errno(-res)}
	case res < int64(len(b)):
		// A short direct write (the disk filled, say): the rest is
		// written with pwrite, which returns its error, as
		// os.File.WriteAt does.
		_, err := f.WriteAt(b[res:], off+res)
		return err
	}
	return nil
}

// wait parks until the write in flight completes and returns its result.
func (w *aioWriter) wait() (int64, error) {
	for {
		// The eventfd's counter is the number of completions: one.
		if _, err := w.ev.Read(w.cnt[:]); err != nil {
			return 0, err
		}
		// Ready: io_getevents returns without waiting.
		var ts unix.Timespec
		n, _, e := unix.Syscall6(unix.SYS_IO_GETEVENTS, w.ctx, 1, 1, uintptr(unsafe.Pointer(&w.out[0])), uintptr(unsafe.Pointer(&ts)), 0)
		if e == unix.EINTR || (e == 0 && n == 0) {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return w.out[0].res, nil
	}
}

// waitBlocking waits for the write in flight with io_getevents, which
// blocks the thread: wait's fallback.
func (w *aioWriter) waitBlocking() (int64, error) {
	for {
		n, _, e := unix.Syscall6(unix.SYS_IO_GETEVENTS, w.ctx, 1, 1, uintptr(unsafe.Pointer(&w.out[0])), 0, 0)
		if e == unix.EINTR || (e == 0 && n == 0) {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return w.out[0].res, nil
	}
}

// close releases the context and the eventfd; no write may be in flight.
func (w *aioWriter) close() {
	unix.Syscall(unix.SYS_IO_DESTROY, w.ctx, 0, 0)
	w.ev.Close()
}
