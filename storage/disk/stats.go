package disk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// SignalStats describes what one signal's log holds.
type SignalStats struct {
	Signal storage.Signal
	// Segments is the number of segment files.
	Segments int
	// Records is the number of stored requests; Items the spans, data
	// points, log records or profiles in them.
	Records int64
	Items   int64
	// Bytes is the size of the segment files on disk (after compression).
	Bytes int64
	// Oldest and Newest are the receive times of the oldest and newest
	// records; zero when there are none.
	Oldest, Newest time.Time
	// WriteErrors counts failed writes and fsyncs since Open (disk full,
	// I/O errors); DeletedSegments the segments retention removed since
	// Open, DeletedRecords the records in them. All are zero from
	// ReadStats.
	WriteErrors     int64
	DeletedSegments int64
	DeletedRecords  int64
	// BatchBufferBytes is the memory of the log's batch buffers (the
	// batch being filled and the one kept for the next; batchbuf.go):
	// at most 2 × 32 MiB, given back after 4 s without a commit. Zero
	// from ReadStats.
	BatchBufferBytes int64
}

// Stats describes a store: one entry per signal, in storage.Signals order,
// and the total size.
type Stats struct {
	Signals []SignalStats
	Bytes   int64
}

// Stats returns the store's current statistics from memory, without disk
// I/O: cheap enough for every metrics scrape.
func (s *Store) Stats() Stats {
	var st Stats
	for _, sig := range storage.Signals {
		l := s.logs[sig]
		l.statMu.Lock()
		ss := summarize(sig, l.segs)
		ss.WriteErrors = l.errors
		l.statMu.Unlock()
		ss.BatchBufferBytes = int64(l.bufferBytes())
		ss.DeletedSegments, ss.DeletedRecords = s.deletedSegments(sig)
		st.Signals = append(st.Signals, ss)
		st.Bytes += ss.Bytes
	}
	return st
}

func summarize(sig storage.Signal, segs []segInfo) SignalStats {
	ss := SignalStats{Signal: sig, Segments: len(segs)}
	var minT, maxT int64
	for _, seg := range segs {
		ss.Bytes += seg.bytes
		if seg.records == 0 {
			continue
		}
		if ss.Records == 0 || seg.minT < minT {
			minT = seg.minT
		}
		if seg.maxT > maxT {
			maxT = seg.maxT
		}
		ss.Records += seg.records
		ss.Items += seg.items
	}
	if ss.Records > 0 {
		ss.Oldest, ss.Newest = time.Unix(0, minT), time.Unix(0, maxT)
	}
	return ss
}

// ReadStats computes the statistics of the store in dataDir without opening
// it for writing, so it may run while a server writes there. It reads each
// segment's record headers, not the payloads.
func ReadStats(dataDir string) (Stats, error) {
	var st Stats
	for _, sig := range storage.Signals {
		dir := filepath.Join(dataDir, sig.String())
		seqs, err := listSegmentSeqs(dir)
		if err != nil {
			return Stats{}, err
		}
		segs := make([]segInfo, 0, len(seqs))
		for _, seq := range seqs {
			info, err := summarizeSegment(filepath.Join(dir, segmentName(seq)), seq, uint8(sig))
			if errors.Is(err, os.ErrNotExist) {
				continue // deleted by retention since the listing
			}
			if err != nil && info.bytes >= segmentHeaderSize {
				return Stats{}, fmt.Errorf("cannot read %s segment %s: %w", sig, segmentName(seq), err)
			}
			// A file shorter than a header is being created: count it
			// with its size and no records.
			segs = append(segs, info)
		}
		ss := summarize(sig, segs)
		st.Signals = append(st.Signals, ss)
		st.Bytes += ss.Bytes
	}
	return st, nil
}
