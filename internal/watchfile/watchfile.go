// Package watchfile reloads a configuration file when it changes: the
// token file (handler) and the quota file (ingest) are reloaded the same
// way, from here.
package watchfile

import (
	"os"
	"time"
)

// The token file and the quota file are reloaded the same way: polled
// every interval (an inotify watch misses a file replaced by a rename into
// place on some file systems, and a poll of one stat is cheap), reloaded
// when its modification time or size changed or it can no longer be read,
// and a failed reload keeps what was loaded before.

// Changed reports whether the file at path differs from the
// modification time and size it had when it was loaded, or can no longer
// be read (deleted, say), which the reload then reports.
func Changed(path string, mod time.Time, size int64) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return true
	}
	return !fi.ModTime().Equal(mod) || fi.Size() != size
}

// Watch polls every interval until stop is closed: when changed
// reports a change it calls reload, then report with reload's error (nil
// on success). A failure that persists (a deleted file) is reported once,
// not at every poll.
func Watch(interval time.Duration, stop <-chan struct{}, changed func() bool, reload func() error, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	lastErr := ""
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if !changed() {
			continue
		}
		err := reload()
		if err != nil && err.Error() == lastErr {
			continue
		}
		lastErr = ""
		if err != nil {
			lastErr = err.Error()
		}
		report(err)
	}
}
