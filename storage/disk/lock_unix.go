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

// LockDir takes the lock a Store holds while it has dataDir open, for a
// command that changes the directory without opening the store (removing
// a consumer's cursor): while a Store (a running serve) has it open,
// LockDir fails at once with an error wrapping ErrLocked, and while the
// returned release has not been called, Open fails the same way.
func LockDir(dataDir string) (release func(), err error) {
	f, err := lockDir(dataDir)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// ErrConsumerInUse is returned by OpenConsumer and OpenConsumerAt when a
// consumer of that name and signal is open elsewhere (a forwarder of a
// running serve, another replay): two writers of one cursor would
// overwrite each other's progress.
var ErrConsumerInUse = errors.New("consumer is in use by another reader")

// lockCursor takes an exclusive advisory lock on an open cursor file; the
// kernel drops it when the file is closed or the process dies.
func lockCursor(f *os.File, name string) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%w: %s", ErrConsumerInUse, name)
		}
		return fmt.Errorf("cannot lock cursor %s: %w", name, err)
	}
	return nil
}
