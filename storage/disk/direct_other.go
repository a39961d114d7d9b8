//go:build !linux

package disk

import (
	"errors"
	"os"
)

// directFlags is zero where O_DIRECT is not available: every segment is
// written through the page cache and fsynced (direct.go).
const directFlags = 0

// pwritev is not called where directFlags is zero (only direct writes
// preallocate).
func pwritev(f *os.File, iov [][]byte, off int64) error {
	return errors.New("BUG: pwritev without direct writes")
}

// zeroPages returns n page-aligned zero bytes.
func zeroPages(n int) []byte { return alignedBytes(n) }

// isDirect is false where nothing is opened with O_DIRECT.
func isDirect(f *os.File) bool { return false }
