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

// writeAt is f.WriteAt through the fault layer.
func writeAt(f *os.File, b []byte, off int64) error {
	if simulatedFull.Load() {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if allocated := (st.Size() + simulatedBlock - 1) / simulatedBlock * simulatedBlock; off+int64(len(b)) > allocated {
			return &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
		}
	}
	_, err := f.WriteAt(b, off)
	return err
}

// writevAt is pwritev(2) of iov at off through the fault layer.
func writevAt(f *os.File, iov [][]byte, off int64) error {
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
