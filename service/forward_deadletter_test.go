package service

import (
	"testing"
	"time"
)

// TestForwardDeadLetterBound: -forward-dead-letter-max-bytes and -max-age
// bound each destination's dead letters, never beyond -storage-max-bytes
// (finding 13: with -storage-max-bytes 1MiB they reached 3.8 MiB).
func TestForwardDeadLetterBound(t *testing.T) {
	for _, c := range []struct {
		flag         string
		storage, max int64
	}{
		{"1GiB", 1 << 20, 1 << 20}, // capped by the log's bound
		{"0", 1 << 20, 1 << 20},    // no bound of its own: the log's
		{"256KiB", 1 << 20, 256 << 10},
		{"1GiB", 0, 1 << 30},
		{"0", 0, 0},
	} {
		cfg := DefaultConfig()
		cfg.Forward = ForwardConfig{DeadLetterMaxBytes: c.flag, DeadLetterMaxAge: time.Hour}
		if err := cfg.checkForward(); err != nil {
			t.Fatal(err)
		}
		bound, err := cfg.deadLetterBound(c.storage)
		if err != nil {
			t.Fatal(err)
		}
		if bound.MaxBytes != c.max || bound.MaxAge != time.Hour {
			t.Errorf("-forward-dead-letter-max-bytes %s with -storage-max-bytes %d: bound %+v, want %d bytes", c.flag, c.storage, bound, c.max)
		}
	}
	cfg := DefaultConfig()
	cfg.Forward.DeadLetterMaxBytes = "lots"
	if err := cfg.Validate(); err == nil {
		t.Error("-forward-dead-letter-max-bytes lots was accepted")
	}
}
