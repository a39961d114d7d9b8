package service

import (
	"errors"
	"fmt"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/deadletter"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// checkForward checks the forwarding settings: forwarding reads the disk
// log, so it needs it.
func (c Config) checkForward() error {
	if len(c.Forward.Destinations) > 0 && c.Sink != nil {
		return errors.New("forwarding reads the disk log: Config.Forward.Destinations needs Config.Sink nil and Storage \"disk\"")
	}
	if len(c.Forward.Destinations) > 0 && c.storageKind() != "disk" {
		return fmt.Errorf("-forward needs -storage disk (it forwards from the disk log), not -storage %s", c.storageKind())
	}
	// A destination's name names its cursors and its dead letters.
	for i, d := range c.Forward.Destinations {
		for _, o := range c.Forward.Destinations[:i] {
			if o.Name == d.Name {
				return fmt.Errorf("bad -forward: two destinations are called %q", d.Name)
			}
		}
	}
	_, err := c.deadLetterBound(0)
	return err
}

// deadLetterBound is the bound of each destination's dead letters (package
// deadletter, as the Kafka source's): the -forward-dead-letter-* values,
// the size capped at logMaxBytes (-storage-max-bytes) when that is set:
// what a destination refused never takes more room than the log itself
// may.
func (c Config) deadLetterBound(logMaxBytes int64) (deadletter.Bound, error) {
	n, err := ParseSize(c.Forward.DeadLetterMaxBytes)
	if err != nil {
		return deadletter.Bound{}, fmt.Errorf("bad -forward-dead-letter-max-bytes: %w", err)
	}
	if c.Forward.DeadLetterMaxAge < 0 {
		return deadletter.Bound{}, fmt.Errorf("bad -forward-dead-letter-max-age %v: must not be negative", c.Forward.DeadLetterMaxAge)
	}
	if logMaxBytes > 0 && (n == 0 || n > logMaxBytes) {
		n = logMaxBytes
	}
	return deadletter.Bound{MaxBytes: n, MaxAge: c.Forward.DeadLetterMaxAge}, nil
}

// RemoveDestination deletes forwarding destination name's cursors in
// dataDir, so that they no longer hold data against retention, and returns
// the signals it had one for (none: it had no cursor). Run it only while
// no receiver uses dataDir (disk.LockDir): a running forwarder writes its
// cursor again. Forwarding to name later starts anew.
func RemoveDestination(dataDir, name string) ([]storage.Signal, error) {
	var removed []storage.Signal
	cursor := forward.CursorName(name)
	for _, sig := range storage.Signals {
		names, err := disk.ConsumerNames(dataDir, sig, cursor)
		if err != nil {
			return removed, err
		}
		for _, n := range names {
			if n != cursor {
				continue // another destination whose name starts alike
			}
			if err := disk.RemoveConsumer(dataDir, n, sig); err != nil {
				return removed, err
			}
			removed = append(removed, sig)
		}
	}
	return removed, nil
}
