package disk

import (
	"fmt"
	"os"
	"path/filepath"
)

// The retention mark (dataDir/<signal>/retention.mark, a position file:
// posfile.go) says what retention has deleted from a log: its Segment is the
// first segment retention kept, its ordinal how many records the deleted
// segments held in all, counted since the mark was created. Retention
// deletes a prefix of each log and writes the mark before it deletes, so a
// reader whose position lies before the mark's segment knows it lost
// records, and, knowing its own ordinal (records before its position,
// counted the same way), exactly how many: a gap is never silent
// (GapError).
//
// The mark is created when a store with a retention limit opens (while
// there is space) and then rewritten in place, which needs no free space:
// the moment retention must delete is the moment the disk is full.
const retentionMarkName = "retention.mark"

func markPath(logDir string) string { return filepath.Join(logDir, retentionMarkName) }

// readMark returns the retention mark of the log in logDir: the zero
// Position and ordinal 0 if there is none (nothing deleted yet, or a store
// without retention).
func readMark(logDir string) (posValue, error) {
	v, exists, err := readPosFile(markPath(logDir))
	if err != nil || !exists {
		return posValue{}, err
	}
	if v.ordinal < 0 {
		v.ordinal = 0
	}
	return v, nil
}

// openMark opens the log's retention mark, creating it if retention is on,
// and deletes segments the mark already counts as deleted (a crash came
// between the mark and the deletion).
func (l *signalLog) openMark(retention bool) error {
	pf, v, ok, err := openPosFile(markPath(l.dir))
	if err != nil {
		return fmt.Errorf("cannot open retention mark: %w", err)
	}
	if ok {
		l.mark, l.markVal = pf, v
		if l.markVal.ordinal < 0 {
			l.markVal.ordinal = 0
		}
		seqs, err := listSegmentSeqs(l.dir)
		if err != nil {
			return err
		}
		for _, seq := range seqs {
			if seq >= v.pos.Segment {
				break
			}
			path := filepath.Join(l.dir, segmentName(seq))
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("cannot finish deleting %s: %w", path, err)
			}
			l.logger.Info("finished a deletion retention had begun", "signal", l.signal.String(), "file", path)
		}
		return nil
	}
	if !retention {
		return nil
	}
	// What is already gone was deleted before anyone counted (by a
	// binary from before retention marks): the mark starts at the first
	// segment there is, so that a reader behind it still learns of a gap,
	// of unknown size.
	var first posValue
	if seqs, err := listSegmentSeqs(l.dir); err == nil && len(seqs) > 0 {
		first.pos.Segment = seqs[0]
	}
	if err := l.createMark(first); err != nil {
		// A full disk must not keep the store from opening: retention
		// tries again before it first deletes (markDeleted).
		l.logger.Warn("cannot create the retention mark yet", "signal", l.signal.String(), "err", err)
	}
	return nil
}

func (l *signalLog) createMark(v posValue) error {
	pf, err := createPosFile(markPath(l.dir), v)
	if err != nil {
		return fmt.Errorf("cannot create retention mark: %w", err)
	}
	l.mark, l.markVal = pf, v
	return nil
}

// markDeleted records in the mark that retention is deleting seg, the
// log's first segment. It is called with the store's retainMu held, before
// the deletion and, if that failed, again after it (deleting frees the
// space a mark that does not exist yet needs). If the mark cannot be
// written even then, the deletion stands all the same (a full disk must not
// stop ingest), logged as an error: readers behind it cannot count what
// they lose.
func (l *signalLog) markDeleted(seg segInfo, last bool) {
	if seg.seq < l.markVal.pos.Segment {
		return // counted already
	}
	next := posValue{pos: Position{Segment: seg.seq + 1}, ordinal: l.markVal.ordinal + seg.records}
	var err error
	if l.mark == nil {
		err = l.createMark(posValue{pos: Position{Segment: seg.seq}})
	}
	if err == nil {
		err = l.mark.write(next)
	}
	if err != nil {
		if last {
			l.logger.Error("cannot record a retention deletion: a reader behind it cannot count the records it loses", "signal", l.signal.String(), "segment", segmentName(seg.seq), "err", err)
		}
		return
	}
	l.markVal = next
}
