// Package disk is the embedded durable store: one append-only log per
// signal under a data directory, made of segment files of CRC-framed
// records (see format.go), written with group commit so that Write returns
// only after its record is fsynced.
//
// Guarantee: when Write returns nil, the record survives a process crash or
// power loss (given a disk that honours fsync). On start, a torn or corrupt
// tail of the newest segment — the trace of a crash mid-write — is cut off;
// everything before it stays readable.
package disk

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/otlp-lite/otlp-lite/storage"
)

// DefaultMaxSegmentSize is the default size at which a segment is closed and
// a new one started: large enough that a directory of segments stays short,
// small enough that retention (which deletes whole segments) is fine-grained.
const DefaultMaxSegmentSize = 128 << 20

// Options configure a Store. The zero value is valid.
type Options struct {
	// MaxSegmentSize is the size in bytes past which a new segment file is
	// started. Zero means DefaultMaxSegmentSize.
	MaxSegmentSize int64
}

// Store is a storage.Sink that writes to local disk.
type Store struct {
	dir  string
	logs [4]*signalLog // indexed by storage.Signal
}

var _ storage.Sink = (*Store)(nil)

// Open opens (creating if needed) the store in dataDir and recovers each
// signal's log from any crash.
func Open(dataDir string, opts Options) (*Store, error) {
	if opts.MaxSegmentSize <= 0 {
		opts.MaxSegmentSize = DefaultMaxSegmentSize
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create data directory: %w", err)
	}
	s := &Store{dir: dataDir}
	for _, sig := range storage.Signals {
		l, err := openSignalLog(dataDir, sig, opts.MaxSegmentSize)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("cannot open %s log: %w", sig, err)
		}
		s.logs[sig] = l
	}
	return s, nil
}

// Dir returns the data directory.
func (s *Store) Dir() string { return s.dir }

// Write implements storage.Sink: it appends one record holding data to the
// signal's log and returns after the record is fsynced.
func (s *Store) Write(ctx context.Context, signal storage.Signal, data []byte, items int) error {
	if int(signal) >= len(s.logs) || s.logs[signal] == nil {
		return fmt.Errorf("cannot store unknown signal %d", signal)
	}
	if len(data)+recordMetaSize > maxRecordBody {
		return fmt.Errorf("cannot store a %d-byte request: records are limited to %d bytes", len(data), maxRecordBody-recordMetaSize)
	}
	return s.logs[signal].write(ctx, data, items)
}

// Close flushes pending writes and closes every log.
func (s *Store) Close() error {
	var errs []error
	for _, l := range s.logs {
		if l != nil {
			errs = append(errs, l.close())
		}
	}
	return errors.Join(errs...)
}
