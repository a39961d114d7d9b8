package main

import (
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// diskFlags are the serve flags that configure the disk store.
type diskFlags struct {
	sync           string
	syncInterval   time.Duration
	maxBytes       string
	maxAge         time.Duration
	compression    string
	maxSegmentSize string
	// observeSync receives fsync durations for the metrics (set by serve).
	observeSync func(storage.Signal, time.Duration)
}

// registerDiskFlags defines the -storage-* flags on fs.
func registerDiskFlags(fs *flag.FlagSet) *diskFlags {
	f := &diskFlags{}
	fs.StringVar(&f.sync, "storage-sync", "always", "when stored data is fsynced: always (an OK means fsynced; concurrent requests share fsyncs), interval (every -storage-sync-interval: a power loss may lose that window of acknowledged data), none (left to the OS)")
	fs.DurationVar(&f.syncInterval, "storage-sync-interval", disk.DefaultSyncInterval, "fsync period with -storage-sync interval")
	fs.StringVar(&f.maxBytes, "storage-max-bytes", "0", "delete the oldest segments when all signals together exceed this size (bytes, or with a KiB/MiB/GiB/TiB or KB/MB/GB/TB suffix); 0 means no limit")
	fs.DurationVar(&f.maxAge, "storage-max-age", 0, "delete segments whose newest record is older than this (e.g. 168h); 0 means no limit")
	fs.StringVar(&f.compression, "storage-compression", "none", "compression of newly written segments: zstd or none (existing segments stay readable either way)")
	fs.StringVar(&f.maxSegmentSize, "storage-max-segment-size", strconv.Itoa(disk.DefaultMaxSegmentSize), "size at which a new segment file is started; retention deletes whole segments (same units as -storage-max-bytes)")
	return f
}

// options validates the flags and returns the disk store options.
func (f *diskFlags) options() (disk.Options, error) {
	var o disk.Options
	var err error
	if o.Sync, err = disk.ParseSyncPolicy(f.sync); err != nil {
		return o, fmt.Errorf("bad -storage-sync: %w", err)
	}
	if f.syncInterval <= 0 {
		return o, fmt.Errorf("bad -storage-sync-interval %v: must be positive", f.syncInterval)
	}
	o.SyncInterval = f.syncInterval
	if o.MaxBytes, err = parseSize(f.maxBytes); err != nil {
		return o, fmt.Errorf("bad -storage-max-bytes: %w", err)
	}
	if f.maxAge < 0 {
		return o, fmt.Errorf("bad -storage-max-age %v: must not be negative", f.maxAge)
	}
	o.MaxAge = f.maxAge
	if o.Compression, err = disk.ParseCompression(f.compression); err != nil {
		return o, fmt.Errorf("bad -storage-compression: %w", err)
	}
	if o.MaxSegmentSize, err = parseSize(f.maxSegmentSize); err != nil {
		return o, fmt.Errorf("bad -storage-max-segment-size: %w", err)
	}
	if o.MaxSegmentSize < 4096 {
		return o, fmt.Errorf("bad -storage-max-segment-size %d: must be at least 4096", o.MaxSegmentSize)
	}
	return o, nil
}

// open validates the flags and opens the disk store in dataDir with them,
// reporting recovered damage, cut torn tails and retention deletions to
// logger. adjust, if not nil, may change the options first (serve's
// extensions).
func (f *diskFlags) open(dataDir string, logger *slog.Logger, adjust func(*disk.Options) error) (*disk.Store, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	if adjust != nil {
		if err := adjust(&opts); err != nil {
			return nil, err
		}
	}
	opts.Logger = logger
	opts.ObserveSync = f.observeSync
	return disk.Open(dataDir, opts)
}

// parseSize parses a byte count with an optional binary (KiB, MiB, GiB,
// TiB) or decimal (KB, MB, GB, TB) suffix.
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
	}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q: want a non-negative number of bytes, optionally with a KiB/MiB/GiB/TiB or KB/MB/GB/TB suffix", s)
	}
	return n * mult, nil
}
