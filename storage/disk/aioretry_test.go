package disk

import (
	"fmt"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// TestAIOSetupRetried: a log whose io_setup finds the system's AIO
// contexts used up (EAGAIN) commits with pwrite and asks again only after
// aioRetryAfter, and gets AIO once a context is free; one on a system
// without AIO (ENOSYS) never asks again.
func TestAIOSetupRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls int
		var answer error
		defer func(f func() (*aioWriter, error)) { newAIO = f }(newAIO)
		newAIO = func() (*aioWriter, error) {
			calls++
			if answer != nil {
				return nil, fmt.Errorf("io_setup: %w", answer)
			}
			return &aioWriter{}, nil
		}
		l := &signalLog{logger: slog.New(slog.NewTextHandler(io.Discard, nil)), signal: storage.Traces}
		answer = syscall.EAGAIN
		for range 3 {
			if l.asyncWriter() != nil {
				t.Fatal("an AIO writer although io_setup failed")
			}
		}
		if calls != 1 {
			t.Fatalf("io_setup asked %d times within aioRetryAfter, want once", calls)
		}
		time.Sleep(aioRetryAfter)
		if l.asyncWriter() != nil || calls != 2 {
			t.Fatalf("after aioRetryAfter: io_setup asked %d times, want 2", calls)
		}
		answer = nil
		time.Sleep(aioRetryAfter)
		if l.asyncWriter() == nil || calls != 3 || l.noAIO {
			t.Fatalf("a context free again: io_setup asked %d times (want 3), AIO %v", calls, l.aio != nil)
		}

		calls, answer = 0, syscall.ENOSYS
		l = &signalLog{logger: slog.New(slog.NewTextHandler(io.Discard, nil)), signal: storage.Traces}
		l.asyncWriter()
		time.Sleep(10 * aioRetryAfter)
		if l.asyncWriter() != nil || calls != 1 || !l.noAIO {
			t.Fatalf("no AIO: io_setup asked %d times, want once and never again", calls)
		}
	})
}
