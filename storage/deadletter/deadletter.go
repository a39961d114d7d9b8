// Package deadletter opens the dead-letter stores of every source that sets
// records aside (forwarding's records a destination refused for good, the
// Kafka source's records that are not valid OTLP), with one bound: each is
// a disk store (storage/disk) of its own, read with `otlp-lite export
// -data-dir DIR`, whose oldest letters retention deletes past Bound's size
// or age. A hostile or broken peer can make every record a dead letter;
// the bound is what keeps it from filling the disk the log needs.
package deadletter

import (
	"log/slog"
	"time"

	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// Defaults of a dead-letter store's bound.
const (
	// DefaultMaxBytes: a gibibyte of dead letters is far more than any
	// operator reads, and small beside the log of a busy receiver.
	DefaultMaxBytes = 1 << 30
	// DefaultMaxAge: a week to notice a refusal and read what it set
	// aside.
	DefaultMaxAge = 7 * 24 * time.Hour
)

// Bound is the size and age past which a dead-letter store deletes its
// oldest letters; zero for either means no limit.
//
// Retention deletes whole segments, and never the one being written, so a
// store holds at most MaxBytes plus one segment per signal; its segments
// are an eighth of MaxBytes (at least 64 KiB, at most the disk store's
// default), so with the four signals that is at most 1.5 × MaxBytes
// (MaxBytes + 4 × 64 KiB for a bound under 512 KiB).
type Bound struct {
	MaxBytes int64
	MaxAge   time.Duration
}

// minSegment keeps a small bound from making a segment per letter.
const minSegment = 64 << 10

// Options are the disk options of a dead-letter store with bound b.
func (b Bound) Options(logger *slog.Logger) disk.Options {
	seg := int64(disk.DefaultMaxSegmentSize)
	if b.MaxBytes > 0 {
		seg = max(min(seg, b.MaxBytes/8), minSegment)
	}
	return disk.Options{Logger: logger, MaxBytes: b.MaxBytes, MaxAge: b.MaxAge, MaxSegmentSize: seg}
}

// Open opens (creating it if need be) the dead-letter store in dir, bounded
// by b.
func Open(dir string, b Bound, logger *slog.Logger) (*disk.Store, error) {
	return disk.Open(dir, b.Options(logger))
}
