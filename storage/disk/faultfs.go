package disk

import (
	"os"
	"sync/atomic"
	"syscall"
)

// simulatedFull is a test's fault-injecting file layer, for the disk-full
// tests where no small filesystem can be mounted (not root): while it is
// true, every write that would allocate space fails with ENOSPC, as on a
// full filesystem that overwrites in place. A write allocates when it
// reaches past the last block of the file (4 KiB blocks); rewriting what a
// file already holds does not. Off in production, where it costs one
// atomic load per write.
var simulatedFull atomic.Bool

const simulatedBlock = 4096

// simulatedNoDirect makes writes to a file open with O_DIRECT fail with
// EINVAL, as on a filesystem or device that accepts the open and refuses
// the writes (direct.go's fallback): 1 every write, 2 the writes of
// records only (the preallocated zeros are written). Test only, like
// simulatedFull.
var simulatedNoDirect atomic.Int32

// refuseDirect is simulatedNoDirect's check for a write of records
// (records) or of zeros.
func refuseDirect(f *os.File, records bool) error {
	mode := simulatedNoDirect.Load()
	if mode == 0 || (mode == 2 && !records) || directFlags == 0 || !isDirect(f) {
		return nil
	}
	return &os.PathError{Op: "write", Path: f.Name(), Err: syscall.EINVAL}
}

// writeAt is f.WriteAt through the fault layer.
func writeAt(f *os.File, b []byte, off int64) error {
	if err := writeFault(f, b, off); err != nil {
		return err
	}
	_, err := f.WriteAt(b, off)
	return err
}

// simulatedCommit, if set, makes a commit's direct write instead of the
// log (a test's power loss in the middle of it). Test only, like
// simulatedFull.
var simulatedCommit atomic.Pointer[func(f *os.File, b []byte, off int64) error]

// writeDirectAt is a commit's direct write of b at off through the fault
// layer: with w (asynchronous, aio_linux.go), or f.WriteAt if w is nil.
func writeDirectAt(f *os.File, w *aioWriter, b []byte, off int64) error {
	if err := writeFault(f, b, off); err != nil {
		return err
	}
	if fn := simulatedCommit.Load(); fn != nil {
		return (*fn)(f, b, off)
	}
	if w != nil {
		return w.writeAt(f, b, off)
	}
	_, err := f.WriteAt(b, off)
	return err
}

// writeFault is the simulated failure, if any, of writing b at off.
func writeFault(f *os.File, b []byte, off int64) error {
	if err := refuseDirect(f, true); err != nil {
		return err
	}
	if simulatedFull.Load() {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if allocated := (st.Size() + simulatedBlock - 1) / simulatedBlock * simulatedBlock; off+int64(len(b)) > allocated {
			return &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
		}
	}
	return nil
}

// writevAt is pwritev(2) of iov at off through the fault layer.
func writevAt(f *os.File, iov [][]byte, off int64) error {
	if err := refuseDirect(f, false); err != nil {
		return err
	}
	if simulatedFull.Load() {
		var n int64
		for _, b := range iov {
			n += int64(len(b))
		}
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if allocated := (st.Size() + simulatedBlock - 1) / simulatedBlock * simulatedBlock; off+n > allocated {
			return &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
		}
	}
	return pwritev(f, iov, off)
}
