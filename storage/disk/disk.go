// Package disk is the embedded durable store: one append-only log per
// signal under a data directory, made of segment files of CRC-framed
// records (see format.go), written with group commit.
//
// Guarantee: with SyncAlways (the default), when Write returns nil the
// record survives a process crash or power loss (given a disk that honours
// fsync). On start, a torn or corrupt tail of the newest segment — the
// trace of a crash mid-write — is cut off; everything before it stays
// readable. Damage found anywhere else is reported with its position and
// skipped: the records after it stay readable.
//
// When the disk is full or failing, Write returns an error wrapping
// storage.ErrUnavailable, leaves every stored record intact, and succeeds
// again by itself once the disk accepts writes. Nothing that frees the disk
// needs free space: a store opens on a full disk, a Consumer commits on one
// (cursors are rewritten in place), and retention deletes on one (its mark
// too is rewritten in place), the segment last written included once no
// new one could be started.
//
// Readers (Scan, Reader, Consumer) may run in other processes while a
// server writes: the format is append-only and offsets are never reused.
package disk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// DefaultMaxSegmentSize is the default size at which a segment is closed and
// a new one started: large enough that a directory of segments stays short,
// small enough that retention (which deletes whole segments) is fine-grained.
const DefaultMaxSegmentSize = 128 << 20

// DefaultSyncInterval is the fsync period of SyncInterval when
// Options.SyncInterval is zero.
const DefaultSyncInterval = time.Second

// SyncPolicy says when written records are fsynced, which decides what an
// acknowledgement promises.
type SyncPolicy uint8

const (
	// SyncAlways fsyncs before Write returns (group commit shares one
	// fsync among all concurrent writers): an acknowledged record
	// survives power loss.
	SyncAlways SyncPolicy = iota
	// SyncInterval fsyncs every Options.SyncInterval. Write returns once
	// the record is in the operating system's page cache: it survives a
	// crash of the process, but a power loss or kernel crash may lose
	// records acknowledged within the last interval.
	SyncInterval
	// SyncNone never fsyncs while running (only at Close) and leaves
	// write-back to the operating system: a process crash loses nothing,
	// a power loss may lose anything not yet written back (on Linux,
	// typically the last 30 seconds).
	SyncNone
)

// String returns "always", "interval" or "none".
func (p SyncPolicy) String() string {
	switch p {
	case SyncAlways:
		return "always"
	case SyncInterval:
		return "interval"
	case SyncNone:
		return "none"
	}
	return fmt.Sprintf("SyncPolicy(%d)", uint8(p))
}

// ParseSyncPolicy is the inverse of SyncPolicy.String.
func ParseSyncPolicy(name string) (SyncPolicy, error) {
	for _, p := range []SyncPolicy{SyncAlways, SyncInterval, SyncNone} {
		if p.String() == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown sync policy %q: want always, interval or none", name)
}

// Options configure a Store. The zero value is valid: SyncAlways, no
// compression, no retention limits.
type Options struct {
	// MaxSegmentSize is the size in bytes past which a new segment file is
	// started. Zero means DefaultMaxSegmentSize.
	MaxSegmentSize int64
	// Sync is when records are fsynced; see SyncPolicy.
	Sync SyncPolicy
	// SyncInterval is the fsync period of SyncInterval; zero means
	// DefaultSyncInterval.
	SyncInterval time.Duration
	// Compression applies to segments created from now on; existing
	// segments keep the compression recorded in their header.
	Compression Compression
	// MaxBytes bounds the total size of all segments of all signals: when
	// it is exceeded, the oldest segments (by their newest record) are
	// deleted, whole, until it is not. The segment being written is never
	// deleted, so the store may exceed MaxBytes by up to one segment per
	// signal, and with SyncAlways by the zeros preallocated after its
	// records (at most preallocChunk, 4 MiB, per signal; direct.go), which
	// are not counted. Zero means no limit.
	MaxBytes int64
	// MaxAge deletes segments whose newest record is older than this.
	// Zero means no limit.
	MaxAge time.Duration
	// HoldPrefix, if not empty, makes every consumer whose name starts
	// with it a holding consumer: MaxAge deletes a segment only after the
	// committed position of every holding consumer of its signal has
	// passed it. MaxBytes still deletes (a full disk must not stop
	// ingest), but deleting records a holding consumer has not committed
	// is logged as an error and reported to OnLoss. A consumer holds as
	// long as its cursor file exists: RemoveConsumer releases it.
	HoldPrefix string
	// OnLoss, if set, is called by retention when MaxBytes deletes
	// records that the holding consumer called consumer had not
	// committed: how many of signal's records it lost. (A consumer that
	// has the segment open may still read it to its end, POSIX unlink
	// semantics, so this is at most what it loses.)
	OnLoss func(consumer string, signal storage.Signal, records int64)
	// Logger receives reports of recovered damage, cut torn tails and
	// retention deletions. Nil discards them.
	Logger *slog.Logger
	// ObserveSync, if set, is called with the duration of every fsync of
	// a batch (from the flusher goroutine), for latency metrics.
	ObserveSync func(signal storage.Signal, d time.Duration)
}

// Store is a storage.Sink that writes to local disk.
type Store struct {
	dir  string
	lock *os.File // held while open: one writer per data directory
	opts Options
	logs [otlp.MaxSignal + 1]*signalLog // indexed by storage.Signal

	retainKick chan struct{}
	retainStop chan struct{}
	retainDone chan struct{}
	retainMu   sync.Mutex                // serialises enforceRetention
	deleted    [otlp.MaxSignal + 1]int64 // segments deleted by retention, per signal
	deletedRec [otlp.MaxSignal + 1]int64 // the records in them
	closeOnce  sync.Once
	closeErr   error
}

var _ storage.Sink = (*Store)(nil)

// Open opens (creating if needed) the store in dataDir and recovers each
// signal's log from any crash. Only one Store may have a directory open at
// a time; readers (Scan, NewReader, OpenConsumer, ReadStats) may run
// alongside.
func Open(dataDir string, opts Options) (*Store, error) {
	if opts.MaxSegmentSize <= 0 {
		opts.MaxSegmentSize = DefaultMaxSegmentSize
	}
	if opts.SyncInterval <= 0 {
		opts.SyncInterval = DefaultSyncInterval
	}
	if opts.Sync > SyncNone {
		return nil, fmt.Errorf("unknown sync policy %d", opts.Sync)
	}
	if opts.Compression != CompressionNone && opts.Compression != CompressionZstd {
		return nil, fmt.Errorf("unknown compression %d", opts.Compression)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create data directory: %w", err)
	}
	lock, err := lockDir(dataDir)
	if err != nil {
		return nil, err
	}
	s := &Store{
		lock:       lock,
		dir:        dataDir,
		opts:       opts,
		retainKick: make(chan struct{}, 1),
		retainStop: make(chan struct{}),
		retainDone: make(chan struct{}),
	}
	for _, sig := range storage.Signals {
		l, err := openSignalLog(dataDir, sig, logConfig{
			maxSegmentSize: opts.MaxSegmentSize,
			sync:           opts.Sync,
			syncInterval:   opts.SyncInterval,
			compression:    opts.Compression,
			logger:         opts.Logger,
			rolled:         s.kickRetention,
			observeSync:    opts.ObserveSync,
			retention:      opts.MaxBytes > 0 || opts.MaxAge > 0,
		})
		if err != nil {
			close(s.retainDone)
			s.Close()
			return nil, fmt.Errorf("cannot open %s log: %w", sig, err)
		}
		s.logs[sig] = l
	}
	s.enforceRetention(time.Now())
	go s.retainLoop()
	return s, nil
}

// Dir returns the data directory.
func (s *Store) Dir() string { return s.dir }

// Write implements storage.Sink: it appends one record holding data to the
// signal's log and returns after the record is stored as Options.Sync
// promises. It fails with an error wrapping storage.ErrUnavailable when the
// disk cannot take the record (full, failing); the store recovers by
// itself when the disk does. An error that also wraps storage.ErrNotStored
// means the record is not in the log and never will be (refused before it
// was queued, or its batch's write failed and was cut back); any other
// error, a cancelled ctx included, may leave it stored.
func (s *Store) Write(ctx context.Context, signal storage.Signal, data []byte, items int) error {
	if int(signal) >= len(s.logs) || s.logs[signal] == nil {
		return storage.NotStored(fmt.Errorf("cannot store unknown signal %d", signal))
	}
	if len(data)+recordMetaSize > maxRecordBody {
		return storage.NotStored(fmt.Errorf("cannot store a %d-byte request: records are limited to %d bytes", len(data), maxRecordBody-recordMetaSize))
	}
	return s.logs[signal].write(ctx, data, items)
}

// Close flushes pending writes and closes every log.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.retainStop)
		<-s.retainDone
		var errs []error
		for _, l := range s.logs {
			if l != nil {
				errs = append(errs, l.close())
			}
		}
		s.closeErr = errors.Join(errs...)
		if s.lock != nil {
			s.lock.Close() // releases the flock
		}
	})
	return s.closeErr
}
