package disk

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// Record is one stored request.
type Record struct {
	// Time is when the receiver accepted the request.
	Time time.Time
	// Items counts the spans, data points or log records in Data.
	Items int
	// Data is the request's protobuf (an Export*ServiceRequest, which has
	// the wire format of TracesData, MetricsData or LogsData), decompressed
	// if its segment is compressed. It is valid only until the next record
	// is read (for Scan: until the callback returns).
	Data []byte
	// Tenant is the tenant the receiver stored the request for;
	// otlp.DefaultTenant for records stored without one (tenancy off,
	// or format versions 1 and 2).
	Tenant string
	// Segment (the file name) and Offset say where the record is, for
	// error messages.
	Segment string
	Offset  int64
	// key is the record's idempotency key block (keys.go), nil for none;
	// valid as long as Data.
	key []byte
}

// Position is a place in one signal's log: a segment sequence number and a
// byte offset in it. The zero Position is the start of the log.
type Position struct {
	Segment uint64
	Offset  int64
}

// ErrCorrupt is wrapped by errors about damaged records: a CRC mismatch, an
// impossible length or an undecodable payload anywhere but the unfinished
// tail of the newest segment.
var ErrCorrupt = errors.New("corrupt record")

// CorruptError reports a damaged region of a segment that a reader skipped.
// It wraps ErrCorrupt.
type CorruptError struct {
	// Path is the segment file.
	Path string
	// Offset is where the damage starts: the first byte that is not part
	// of a valid record.
	Offset int64
	// Skipped is how many bytes were skipped to reach the next valid
	// record (or the end of the segment).
	Skipped int64
	// Reason says what was wrong with the record at Offset.
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%v: segment %s offset %d: %s (skipped %d bytes)", ErrCorrupt, e.Path, e.Offset, e.Reason, e.Skipped)
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// ErrGap is wrapped by errors that report records retention deleted before
// a reader reached them.
var ErrGap = errors.New("records deleted by retention before they were read")

// GapError reports that retention deleted records a reader (a Consumer)
// had not read yet: it continues after them. It wraps ErrGap.
type GapError struct {
	// Records is how many records were deleted unread, -1 if unknown (a
	// cursor written before positions counted records, whose segment was
	// deleted before it was opened again). Records lost to damage before
	// the reader's position may be included.
	Records int64
	// From is the reader's position before the gap, To the first position
	// after it.
	From, To Position
}

func (e *GapError) Error() string {
	n := "an unknown number of"
	if e.Records >= 0 {
		n = fmt.Sprint(e.Records)
	}
	return fmt.Sprintf("%v: %s records between segment %d offset %d and segment %d", ErrGap, n, e.From.Segment, e.From.Offset, e.To.Segment)
}

// Unwrap returns ErrGap.
func (e *GapError) Unwrap() error { return ErrGap }

// Reader reads one signal's log in order from a Position. It may run while
// a server (in this or another process) appends to the same directory and
// while retention deletes old segments: at the end of what is written, Next
// returns io.EOF, and a later Next sees whatever was added meanwhile.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	dir    string
	signal storage.Signal
	pos    Position
	seg    *segmentReader
	// gaps makes Next report records retention deleted before it read
	// them (Consumers); ord is then the ordinal of the next record (see
	// retainmark.go), -1 while unknown.
	gaps bool
	ord  int64
	// Reused between segments.
	win, big, dbuf []byte
}

// NewReader returns a Reader of signal's log under dataDir that starts at
// from. If from's segment no longer exists (retention deleted it), reading
// starts at the oldest segment after it.
func NewReader(dataDir string, signal storage.Signal, from Position) *Reader {
	return &Reader{dir: filepath.Join(dataDir, signal.String()), signal: signal, pos: from, ord: -1}
}

// NewGapReader returns a Reader of signal's log under dataDir from its
// oldest record that, like a Consumer, reports records retention deletes
// before it reads them as a *GapError (a reader that follows the log and
// falls behind its retention).
func NewGapReader(dataDir string, signal storage.Signal) *Reader {
	r := NewReader(dataDir, signal, Position{})
	r.gaps = true
	return r
}

// Position returns the position just past the last record Next returned:
// where a Reader created later should start to continue from here.
func (r *Reader) Position() Position { return r.pos }

// Close releases the open segment file.
func (r *Reader) Close() error {
	if r.seg != nil {
		r.seg.close()
		r.seg = nil
	}
	return nil
}

// Next returns the next record. Its Data is valid until the following call.
//
// At the end of the stored data Next returns io.EOF; a torn or half-written
// record at the tail of the newest segment counts as not yet written. When
// it meets damage elsewhere, Next returns a *CorruptError (wrapping
// ErrCorrupt) with the damaged region's position and has already moved past
// it, so the next call returns the first valid record after it: damage
// costs the damaged records, never the ones after them.
func (r *Reader) Next() (Record, error) {
	fresh := false // the window was re-read since the last failure
	for {
		if r.seg == nil {
			if err := r.openNext(); err != nil {
				return Record{}, err
			}
			continue
		}
		rec, next, st := r.seg.readRecord(r.pos.Offset)
		if st == recordOK {
			r.pos.Offset = next
			if r.ord >= 0 {
				r.ord++
			}
			return rec, nil
		}
		reason := r.seg.reason
		// Before treating the end as final, look for a later segment: once
		// one exists the writer has finished with this one, and its size
		// (re-read after the listing) is final.
		later, err := r.laterExists()
		if err != nil {
			return Record{}, err
		}
		oldSize := r.seg.size
		if err := r.seg.refreshSize(); err != nil {
			return Record{}, err
		}
		if r.seg.size != oldSize {
			// It grew, or the writer cut it (the preallocated tail of
			// a segment it closed, a failed write): try again.
			continue
		}
		if !fresh && st != recordEnd {
			// A preallocated segment is written in place, without
			// growing (direct.go): what the window holds may be
			// older than the file. Look again, at the header alone
			// for a zero one (the end, as a reader that has caught
			// up finds at every call).
			fresh = true
			if st != recordZero || !r.seg.zeroAt(r.pos.Offset) {
				r.seg.dropWindow()
				continue
			}
		}
		if st == recordZero {
			if !later {
				// The end of what the writer wrote, before the
				// zeros it preallocated.
				return Record{}, io.EOF
			}
			if r.seg.zeroFrom(r.pos.Offset) {
				// Preallocated zeros a failed cut left after the
				// last record of a closed segment: not data.
				r.advance()
				continue
			}
			st = recordBad // a run of zeros before records: damage
		}
		switch st {
		case recordEnd:
			if !later {
				return Record{}, io.EOF
			}
			r.advance()
		case recordTorn:
			if !later {
				return Record{}, io.EOF
			}
			cerr := &CorruptError{Path: r.seg.path, Offset: r.pos.Offset, Skipped: r.seg.size - r.pos.Offset, Reason: reason}
			r.advance()
			return Record{}, cerr
		case recordBad:
			p, ok := r.seg.resync(r.pos.Offset)
			if !ok {
				if !later {
					// Garbage at the tail of the newest segment is
					// either a write in progress or a crash's torn
					// tail (which recovery cuts off): not yet data.
					return Record{}, io.EOF
				}
				cerr := &CorruptError{Path: r.seg.path, Offset: r.pos.Offset, Skipped: r.seg.size - r.pos.Offset, Reason: reason}
				r.advance()
				return Record{}, cerr
			}
			if !later {
				// A record after it is complete, so a write that was in
				// progress at r.pos has finished too: if the record
				// there reads well now, it was not damage.
				if _, _, st := r.seg.readRecord(r.pos.Offset); st == recordOK {
					continue
				}
			}
			cerr := &CorruptError{Path: r.seg.path, Offset: r.pos.Offset, Skipped: p - r.pos.Offset, Reason: reason}
			r.pos.Offset = p
			return Record{}, cerr
		}
	}
}

// advance closes the current segment and moves to the start of the next.
func (r *Reader) advance() {
	r.win, r.big, r.dbuf = r.seg.win, r.seg.big, r.seg.dbuf
	r.seg.close()
	r.seg = nil
	r.pos = Position{Segment: r.pos.Segment + 1}
}

func (r *Reader) laterExists() (bool, error) {
	seqs, err := listSegmentSeqs(r.dir)
	if err != nil {
		return false, err
	}
	return len(seqs) > 0 && seqs[len(seqs)-1] > r.pos.Segment, nil
}

// openNext opens the first segment at or after r.pos.Segment, or returns
// io.EOF if there is none yet. A reader that reports gaps returns a
// *GapError when retention deleted segments it had not read, after
// opening the segment it continues with.
func (r *Reader) openNext() error {
	if !r.gaps {
		return r.openFrom(r.pos.Segment)
	}
	from, fromOrd := r.pos, r.ord
	for {
		if err := r.openFrom(r.pos.Segment); err != nil {
			if err != io.EOF || from == (Position{}) {
				return err
			}
			// Nothing to open: retention may have deleted everything
			// after the reader, which is a gap all the same.
			m, merr := readMark(r.dir)
			if merr != nil || from.Segment >= m.pos.Segment {
				return err
			}
			r.pos, r.ord = Position{Segment: m.pos.Segment}, m.ordinal
			lost := int64(-1)
			if fromOrd >= 0 {
				if lost = max(m.ordinal-fromOrd, 0); lost == 0 {
					return io.EOF
				}
			}
			return &GapError{Records: lost, From: from, To: r.pos}
		}
		if r.pos.Segment == from.Segment {
			return nil // its own segment: nothing skipped
		}
		// Segments [from.Segment, r.pos.Segment) are missing: deleted by
		// retention if they lie before the mark, else empty ones the
		// writer removed. The mark is read after opening, so that the
		// segment opened cannot have been deleted unaccounted.
		m, err := readMark(r.dir)
		if err != nil {
			r.Close()
			r.pos = from
			return err
		}
		if m.pos.Segment > r.pos.Segment {
			// Retention deleted the segment just opened as well, so the
			// mark's count does not end where it starts: continue from
			// the mark's segment instead.
			r.Close()
			r.pos = Position{Segment: m.pos.Segment}
			continue
		}
		if from.Segment >= m.pos.Segment {
			if from == (Position{}) && r.ord < 0 {
				r.ord = m.ordinal
			}
			return nil // only empty segments skipped
		}
		r.ord = m.ordinal
		if from == (Position{}) {
			// Starting at the oldest retained record loses nothing.
			return nil
		}
		lost := int64(-1)
		if fromOrd >= 0 {
			lost = max(m.ordinal-fromOrd, 0)
			if lost == 0 {
				return nil
			}
		}
		return &GapError{Records: lost, From: from, To: r.pos}
	}
}

func (r *Reader) openFrom(first uint64) error {
	seqs, err := listSegmentSeqs(r.dir)
	if err != nil {
		return err
	}
	for i, seq := range seqs {
		if seq < first {
			continue
		}
		if seq != r.pos.Segment {
			r.pos = Position{Segment: seq}
		}
		last := i == len(seqs)-1
		path := filepath.Join(r.dir, segmentName(seq))
		seg, err := openSegment(path, seq, uint8(r.signal), r.win, r.big, r.dbuf)
		switch {
		case err == nil:
			r.seg = seg
			if r.pos.Offset < segmentHeaderSize {
				r.pos.Offset = segmentHeaderSize
			}
			return nil
		case errors.Is(err, os.ErrNotExist):
			continue // deleted by retention since the listing
		case last && errors.Is(err, errShortHeader):
			// Being created right now (or its creation was cut short by
			// a crash, which recovery repairs): nothing to read yet.
			return io.EOF
		default:
			r.pos = Position{Segment: seq + 1}
			var size int64
			if st, err := os.Stat(path); err == nil {
				size = st.Size()
			}
			return &CorruptError{Path: path, Reason: "bad segment header: " + err.Error(), Skipped: size}
		}
	}
	return io.EOF
}

// Scan calls fn for every record of signal stored under dataDir, oldest
// first. It stops at the first error fn returns and returns it.
//
// A torn record at the very end of the newest segment (a write in progress,
// or one cut short by a crash) ends the scan silently: it was never
// acknowledged. Damage anywhere else is skipped — the records after it are
// still passed to fn — and reported when the scan ends, as an error joining
// one *CorruptError (wrapping ErrCorrupt) per damaged region, each with its
// segment and offset.
//
// Scan may run while a server writes the same directory; it then sees every
// record that was complete when it reached it.
func Scan(dataDir string, signal storage.Signal, fn func(r Record) error) error {
	r := NewReader(dataDir, signal, Position{})
	defer r.Close()
	var corrupt []error
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return errors.Join(corrupt...)
		}
		if errors.Is(err, ErrCorrupt) {
			corrupt = append(corrupt, err)
			continue
		}
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}
