//go:build !linux || !(amd64 || arm64 || riscv64 || loong64 || ppc64le)

package disk

import (
	"errors"
	"os"
)

// aioWriter is not available here: commits are written with pwrite
// (aio_linux.go).
type aioWriter struct{}

func newAIOWriter() (*aioWriter, error) { return nil, errors.New("no AIO on this system") }

func (w *aioWriter) writeAt(f *os.File, b []byte, off int64) error {
	return errors.New("BUG: AIO write without AIO")
}

func (w *aioWriter) close() {}
