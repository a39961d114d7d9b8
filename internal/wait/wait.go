// Package wait is how the module's background loops (the forwarder, the
// Kafka source, the client tools' follow and pacing modes) pause: for a
// duration that the end of a context cuts short.
package wait

import (
	"context"
	"time"
)

// For waits for d or until ctx ends, whichever comes first, and reports
// whether d passed. Its timer is stopped on return, so a loop that calls
// it leaves none behind when ctx ends.
func For(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
