package disk

import (
	"os"
	"path/filepath"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// Retention deletes whole segments, oldest first, never the one being
// written. "Oldest" is by a segment's newest record, so a segment goes only
// when everything in it is older than everything left in any other log;
// across signals this deletes the globally oldest data first.
//
// Readers are not disturbed: a file deleted under an open reader stays
// readable until the reader closes it (POSIX unlink semantics), and a
// Reader or Consumer whose position lies in a deleted segment continues
// with the oldest remaining one.

func (s *Store) kickRetention() {
	select {
	case s.retainKick <- struct{}{}:
	default:
	}
}

// retentionPeriod is how often the age limit is checked between rolls:
// often enough that data outlives MaxAge by at most a tenth of it (and at
// most a minute).
func (s *Store) retentionPeriod() time.Duration {
	if s.opts.MaxAge <= 0 {
		return time.Hour
	}
	return min(max(s.opts.MaxAge/10, time.Second), time.Minute)
}

func (s *Store) retainLoop() {
	defer close(s.retainDone)
	if s.opts.MaxBytes <= 0 && s.opts.MaxAge <= 0 {
		<-s.retainStop
		return
	}
	t := time.NewTicker(s.retentionPeriod())
	defer t.Stop()
	for {
		select {
		case <-s.retainStop:
			return
		case <-s.retainKick:
		case <-t.C:
		}
		s.enforceRetention(time.Now())
	}
}

// enforceRetention deletes segments past MaxAge at now, then the oldest
// until the total size is within MaxBytes. It returns how many it deleted.
func (s *Store) enforceRetention(now time.Time) int {
	if s.opts.MaxBytes <= 0 && s.opts.MaxAge <= 0 {
		return 0
	}
	s.retainMu.Lock()
	defer s.retainMu.Unlock()
	deleted := 0
	for {
		var (
			victim     *signalLog
			victimSeq  uint64
			victimMaxT int64
			total      int64
			expired    bool
		)
		for _, l := range s.logs {
			if l == nil {
				continue
			}
			l.statMu.Lock()
			for i, seg := range l.segs {
				total += seg.bytes
				if i == len(l.segs)-1 {
					continue // the active segment
				}
				if victim == nil || seg.maxT < victimMaxT {
					victim, victimSeq, victimMaxT = l, seg.seq, seg.maxT
				}
			}
			l.statMu.Unlock()
		}
		if victim == nil {
			return deleted
		}
		expired = s.opts.MaxAge > 0 && victimMaxT < now.Add(-s.opts.MaxAge).UnixNano()
		if !expired && (s.opts.MaxBytes <= 0 || total <= s.opts.MaxBytes) {
			return deleted
		}
		path := filepath.Join(victim.dir, segmentName(victimSeq))
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			s.opts.Logger.Error("retention cannot delete a segment", "file", path, "err", err)
			return deleted
		}
		victim.statMu.Lock()
		for i, seg := range victim.segs {
			if seg.seq == victimSeq {
				victim.segs = append(victim.segs[:i], victim.segs[i+1:]...)
				break
			}
		}
		victim.statMu.Unlock()
		s.deleted[victim.signal]++
		deleted++
		reason := "max-bytes"
		if expired {
			reason = "max-age"
		}
		s.opts.Logger.Info("retention deleted a segment", "signal", victim.signal.String(), "file", path, "reason", reason, "newest_record", time.Unix(0, victimMaxT).UTC())
	}
}

// deletedSegments returns how many segments retention deleted for sig.
func (s *Store) deletedSegments(sig storage.Signal) int64 {
	s.retainMu.Lock()
	defer s.retainMu.Unlock()
	return s.deleted[sig]
}
