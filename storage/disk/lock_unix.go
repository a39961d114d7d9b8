//go:build unix

package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrLocked is returned by Open when another process has the data
// directory open for writing.
var ErrLocked = errors.New("data directory is in use by another process")

// lockDir takes an exclusive advisory lock on dataDir/LOCK. Two writers on
// one log would interleave records and each truncate the other's "torn
// tail" on start, losing acknowledged data; the lock makes the second one
// fail at once instead. The kernel drops the lock when the process dies, so
// a crash never leaves a stale lock behind. Readers (Scan, export, stats)
// take no lock.
func lockDir(dataDir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dataDir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, dataDir)
		}
		return nil, fmt.Errorf("cannot lock data directory: %w", err)
	}
	return f, nil
}
