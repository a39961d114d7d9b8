package disk

import (
	"math"
	"os"
	"path/filepath"
	"strings"
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

// enforceRetention deletes the oldest segments while the total size is
// over MaxBytes, and segments past MaxAge at now that no holding consumer
// (Options.HoldPrefix) still needs. It returns how many it deleted.
func (s *Store) enforceRetention(now time.Time) int {
	if s.opts.MaxBytes <= 0 && s.opts.MaxAge <= 0 {
		return 0
	}
	s.retainMu.Lock()
	defer s.retainMu.Unlock()
	deleted := 0
	type candidate struct {
		l     *signalLog
		seg   segInfo
		holds []hold
	}
	for {
		var (
			oldest, oldestFree *candidate
			total              int64
		)
		for _, l := range s.logs {
			if l == nil {
				continue
			}
			holds := s.holds(l.signal)
			l.statMu.Lock()
			for _, seg := range l.segs {
				total += seg.bytes
			}
			// Only a log's first segment is a candidate, never the active
			// one: retention deletes a prefix of each log, so its mark
			// (first kept segment, records before it) accounts for
			// everything deleted.
			if len(l.segs) > 1 || len(l.segs) == 1 && !l.active {
				seg := l.segs[0]
				if oldest == nil || seg.maxT < oldest.seg.maxT {
					oldest = &candidate{l, seg, holds}
				}
				if !held(holds, seg) && (oldestFree == nil || seg.maxT < oldestFree.seg.maxT) {
					oldestFree = &candidate{l, seg, holds}
				}
			}
			l.statMu.Unlock()
		}
		cutoff := now.Add(-s.opts.MaxAge).UnixNano()
		var victim *candidate
		switch {
		case s.opts.MaxBytes > 0 && total > s.opts.MaxBytes && oldest != nil:
			victim = oldest
		case s.opts.MaxAge > 0 && oldestFree != nil && oldestFree.seg.maxT < cutoff:
			victim = oldestFree
		default:
			return deleted
		}
		expired := s.opts.MaxAge > 0 && victim.seg.maxT < cutoff
		path := filepath.Join(victim.l.dir, segmentName(victim.seg.seq))
		lost := s.countLoss(victim.l.signal, path, victim.seg, victim.holds)
		// The mark first: a reader that finds the segment gone then
		// knows how many records went with it, and a crash between the
		// two leaves a segment the mark already counts, which the next
		// Open deletes.
		victim.l.markDeleted(victim.seg, false)
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			s.opts.Logger.Error("retention cannot delete a segment", "file", path, "err", err)
			return deleted
		}
		victim.l.markDeleted(victim.seg, true) // if the mark could not be written before
		victim.l.statMu.Lock()
		for i, seg := range victim.l.segs {
			if seg.seq == victim.seg.seq {
				victim.l.segs = append(victim.l.segs[:i], victim.l.segs[i+1:]...)
				break
			}
		}
		victim.l.statMu.Unlock()
		s.deleted[victim.l.signal]++
		s.deletedRec[victim.l.signal] += victim.seg.records
		deleted++
		reason := "max-bytes"
		if expired {
			reason = "max-age"
		}
		s.opts.Logger.Info("retention deleted a segment", "signal", victim.l.signal.String(), "file", path, "reason", reason, "newest_record", time.Unix(0, victim.seg.maxT).UTC())
		for name, n := range lost {
			// Loud: a destination will never receive these records.
			s.opts.Logger.Error("retention deleted records a consumer had not read: the size limit (max-bytes) forced it; they are lost for that consumer",
				"consumer", name, "signal", victim.l.signal.String(), "records", n, "file", path)
			if s.opts.OnLoss != nil {
				s.opts.OnLoss(name, victim.l.signal, n)
			}
		}
	}
}

// hold is a holding consumer's committed position.
type hold struct {
	name string
	pos  Position
}

// held reports whether a holding consumer has not read all of seg (a
// closed segment, whose size is final).
func held(holds []hold, seg segInfo) bool {
	for _, h := range holds {
		if h.pos.Segment < seg.seq || h.pos.Segment == seg.seq && h.pos.Offset < seg.bytes {
			return true
		}
	}
	return false
}

// Holds reports whether retention holds records for the consumer called
// name (Options.HoldPrefix): MaxAge deletes nothing it has not committed,
// and what MaxBytes deletes anyway is logged and reported to OnLoss. A
// reader that must not lose data silently (package forward) checks it.
func (s *Store) Holds(name string) bool {
	return s.opts.HoldPrefix != "" && strings.HasPrefix(name, s.opts.HoldPrefix)
}

// holds reads the committed positions of sig's holding consumers. A cursor
// that cannot be read holds everything: better to keep data than to delete
// what a consumer may still need.
func (s *Store) holds(sig storage.Signal) []hold {
	if s.opts.HoldPrefix == "" {
		return nil
	}
	dir := filepath.Join(s.dir, "cursors", sig.String())
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !os.IsNotExist(err) {
			s.opts.Logger.Warn("retention cannot list consumers; holding everything", "dir", dir, "err", err)
			return []hold{{name: "?"}}
		}
		return nil
	}
	var hs []hold
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".cursor")
		if !ok || !strings.HasPrefix(name, s.opts.HoldPrefix) {
			continue
		}
		pos, err := readCursor(filepath.Join(dir, e.Name()))
		if err != nil {
			s.opts.Logger.Warn("retention cannot read a consumer's cursor; it holds everything", "consumer", name, "err", err)
		}
		hs = append(hs, hold{name: name, pos: pos})
	}
	return hs
}

// countLoss returns, for each holding consumer that has not read all of
// seg, how many of its records it has not read.
func (s *Store) countLoss(sig storage.Signal, path string, seg segInfo, holds []hold) map[string]int64 {
	var lost map[string]int64
	for _, h := range holds {
		var n int64
		switch {
		case h.pos.Segment < seg.seq:
			n = seg.records
		case h.pos.Segment == seg.seq && h.pos.Offset < seg.bytes:
			n = recordsFrom(path, seg.seq, sig, h.pos.Offset)
		}
		if n > 0 {
			if lost == nil {
				lost = map[string]int64{}
			}
			lost[h.name] = n
		}
	}
	return lost
}

// recordsFrom counts the valid records of a closed segment from offset on.
func recordsFrom(path string, seq uint64, sig storage.Signal, offset int64) int64 {
	return countRecords(path, seq, sig, max(offset, segmentHeaderSize), math.MaxInt64)
}

// countRecords counts the valid records of a segment that start in [from,
// to), stepping over damaged regions as readers do; 0 if it cannot be
// opened.
func countRecords(path string, seq uint64, sig storage.Signal, from, to int64) int64 {
	seg, err := openSegment(path, seq, uint8(sig), nil, nil, nil)
	if err != nil {
		return 0
	}
	defer seg.close()
	var n int64
	for off := from; off < to; {
		_, next, st := seg.readRecord(off)
		if st == recordOK {
			n++
			off = next
			continue
		}
		if st != recordBad && st != recordZero {
			return n
		}
		p, ok := seg.resync(off)
		if !ok {
			return n
		}
		off = p
	}
	return n
}

// Lag returns how much of sig's log lies after pos: records and bytes. It
// is computed from memory, without disk I/O (cheap enough for every
// metrics scrape): exact for whole segments; in pos's own segment the
// records are estimated from the bytes left (rounded up, so a lag of
// bytes is never a lag of zero records).
func (s *Store) Lag(sig storage.Signal, pos Position) (records, bytes int64) {
	if int(sig) >= len(s.logs) || s.logs[sig] == nil {
		return 0, 0
	}
	l := s.logs[sig]
	l.statMu.Lock()
	defer l.statMu.Unlock()
	for _, seg := range l.segs {
		switch {
		case seg.seq > pos.Segment:
			records += seg.records
			bytes += max(seg.bytes-segmentHeaderSize, 0)
		case seg.seq == pos.Segment:
			rest := seg.bytes - max(pos.Offset, segmentHeaderSize)
			body := seg.bytes - segmentHeaderSize
			if rest > 0 && body > 0 {
				bytes += rest
				records += (seg.records*rest + body - 1) / body
			}
		}
	}
	return records, bytes
}

// deletedSegments returns how many segments retention deleted for sig, and
// the records in them.
func (s *Store) deletedSegments(sig storage.Signal) (segments, records int64) {
	s.retainMu.Lock()
	defer s.retainMu.Unlock()
	return s.deleted[sig], s.deletedRec[sig]
}
