package disk

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// A consumer's cursor is a position file (posfile.go) at
// dataDir/cursors/<signal>/<name>.cursor. It is created whole and then
// rewritten in place, so that a commit needs no free space: a full disk
// never stops a consumer from recording progress, which is what lets
// retention free the disk.

// Consumer is a named reader of one signal's log whose position survives
// restarts: it is how a forwarder or an embedding engine consumes stored
// data at least once. Read with Next, and after the records read so far are
// safely handled, call Commit; a Consumer opened later with the same name
// continues after the last committed record. Records read but not committed
// before a crash are read again (at-least-once).
//
// Consumers do not hold back retention unless their name starts with the
// store's Options.HoldPrefix: if retention deletes segments a consumer has
// not read, it continues with the oldest remaining one, and Next says how
// many records it skipped (*GapError): a gap is never silent.
// One Consumer of a name and signal with a cursor may be open at a time, in
// any process: opening a second fails with ErrConsumerInUse.
// Several Consumers with different names read independently.
type Consumer struct {
	r         *Reader
	name      string
	path      string
	committed Position
	pf        *posFile // the cursor, open for in-place commits; nil until needed
	// trail maps the positions Next reached since the last commit to
	// their ordinals, so that CommitTo can store the ordinal of a position
	// behind the reader (GapError counts from it). At most maxTrail.
	// CommitTo may run concurrently with Next (a forwarder commits from a
	// goroutine of its own): trail is all they share, under trailMu.
	trailMu sync.Mutex
	trail   []posValue
}

// maxTrail bounds Consumer.trail (24 bytes an entry): a pipelined consumer
// commits well within 64Ki records of reading them; one that does not
// stores an unknown ordinal, which the next OpenConsumer recounts.
const maxTrail = 1 << 16

// OpenConsumer opens the consumer called name of signal's log under
// dataDir, positioned after its last committed record (at the start of the
// log if it never committed). A name is 1 to 128 letters, digits, '.', '-'
// or '_', not starting with '.'.
func OpenConsumer(dataDir, name string, signal storage.Signal) (*Consumer, error) {
	if err := checkConsumerName(name); err != nil {
		return nil, err
	}
	if signal.Info() == nil {
		return nil, fmt.Errorf("cannot open consumer: unknown signal %d", signal)
	}
	dir := filepath.Join(dataDir, "cursors", signal.String())
	c := &Consumer{name: name, path: filepath.Join(dir, name+".cursor")}
	v, exists, err := readPosFile(c.path)
	if err != nil {
		return nil, fmt.Errorf("cannot open consumer %q: %w", name, err)
	}
	if exists && v.ordinal < 0 {
		// A cursor from before positions counted records: count them now,
		// while its segment is still there.
		if v.ordinal, err = ordinalAt(filepath.Join(dataDir, signal.String()), signal, v.pos); err != nil {
			return nil, fmt.Errorf("cannot open consumer %q: %w", name, err)
		}
	}
	if exists {
		// Opened and locked now, for as long as the consumer is: a second
		// reader of the same cursor is refused (ErrConsumerInUse).
		pf, _, ok, err := openPosFile(c.path)
		if err == nil && ok {
			err = lockCursor(pf.f, signal.String()+"/"+name)
			if err != nil {
				pf.close()
				return nil, fmt.Errorf("cannot open consumer %q: %w", name, err)
			}
			c.pf = pf
		} else if err != nil {
			return nil, fmt.Errorf("cannot open consumer %q: %w", name, err)
		}
	}
	c.committed = v.pos
	c.r = NewReader(dataDir, signal, v.pos)
	c.r.gaps = true
	c.r.ord = v.ordinal
	if !exists {
		c.r.ord = -1 // set when the reader opens the oldest segment
	}
	return c, nil
}

// ordinalAt counts the records before pos (see retainmark.go): the
// retention mark's count plus the records of the segments kept before
// pos. It is -1 if pos lies in a segment retention deleted.
func ordinalAt(logDir string, signal storage.Signal, pos Position) (int64, error) {
	for {
		m, err := readMark(logDir)
		if err != nil {
			return -1, err
		}
		if pos.Segment < m.pos.Segment {
			return -1, nil
		}
		seqs, err := listSegmentSeqs(logDir)
		if err != nil {
			return -1, err
		}
		n := m.ordinal
		for _, seq := range seqs {
			if seq < m.pos.Segment || seq > pos.Segment {
				continue
			}
			path := filepath.Join(logDir, segmentName(seq))
			if seq < pos.Segment {
				info, _ := summarizeSegment(path, seq, uint8(signal))
				n += info.records
			} else {
				n += recordsBefore(path, seq, signal, pos.Offset)
			}
		}
		if again, err := readMark(logDir); err != nil || again == m {
			return n, err
		}
		// Retention deleted a segment meanwhile: count again.
	}
}

// recordsBefore counts the valid records of a segment that start before
// offset.
func recordsBefore(path string, seq uint64, sig storage.Signal, offset int64) int64 {
	return countRecords(path, seq, sig, segmentHeaderSize, offset)
}

// Start says where a consumer that never committed begins.
type Start uint8

const (
	// StartOldest begins at the oldest retained record.
	StartOldest Start = iota
	// StartEnd begins after the last record stored when it is opened.
	StartEnd
)

// OpenConsumerAt is OpenConsumer for a consumer that may be new: if it has
// no cursor yet, it begins at start and its cursor is written at once, so
// that a holding consumer (Options.HoldPrefix) holds from now on and a
// StartEnd consumer restarted before its first commit does not skip what
// arrived meanwhile (on a full disk, by the first commit that finds
// space). A consumer with a cursor continues from it.
func OpenConsumerAt(dataDir, name string, signal storage.Signal, start Start) (*Consumer, error) {
	c, err := OpenConsumer(dataDir, name, signal)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(c.path); err == nil {
		return c, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		c.Close()
		return nil, fmt.Errorf("cannot open consumer %q: %w", name, err)
	}
	pos := Position{}
	if start == StartEnd {
		if pos, err = EndPosition(dataDir, signal); err != nil {
			c.Close()
			return nil, fmt.Errorf("cannot open consumer %q at the end of the log: %w", name, err)
		}
		c.r.Close()
		c.r = NewReader(dataDir, signal, pos)
		c.r.gaps = true
	}
	// A new cursor is created now, while the consumer opens, with the
	// ordinal the reader will count from.
	if start == StartEnd || c.r.ord < 0 {
		if c.r.ord, err = ordinalAt(filepath.Join(dataDir, signal.String()), signal, pos); err != nil {
			c.Close()
			return nil, fmt.Errorf("cannot open consumer %q: %w", name, err)
		}
	}
	pf, err := createPosFile(c.path, posValue{pos: pos, ordinal: c.r.ord})
	if err == nil {
		err = lockCursor(pf.f, signal.String()+"/"+name)
	}
	if errors.Is(err, syscall.ENOSPC) {
		// The disk is full: open all the same (a server must start on a
		// full disk to free it), and let the first commit that finds
		// space create the cursor. Until then the consumer holds nothing
		// against retention, and a restart begins at start again.
		c.committed = pos
		return c, nil
	}
	if err != nil {
		pf.close()
		c.Close()
		return nil, fmt.Errorf("cannot create consumer %q: %w", name, err)
	}
	c.pf = pf
	c.committed = pos
	return c, nil
}

// EndPosition returns the position after the last record of signal's log
// stored now. It reads only the newest segment.
func EndPosition(dataDir string, signal storage.Signal) (Position, error) {
	seqs, err := listSegmentSeqs(filepath.Join(dataDir, signal.String()))
	if err != nil || len(seqs) == 0 {
		return Position{}, err
	}
	r := NewReader(dataDir, signal, Position{Segment: seqs[len(seqs)-1]})
	defer r.Close()
	for {
		_, err := r.Next()
		if err == io.EOF {
			return r.Position(), nil
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			return Position{}, err
		}
	}
}

// RemoveConsumer deletes the cursor of the consumer called name of signal,
// if it has one: it no longer holds segments, and a consumer opened later
// with that name starts anew. It must not be open meanwhile (its next
// Commit would write the cursor again).
func RemoveConsumer(dataDir, name string, signal storage.Signal) error {
	if err := checkConsumerName(name); err != nil {
		return err
	}
	path := filepath.Join(dataDir, "cursors", signal.String(), name+".cursor")
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot remove consumer %q: %w", name, err)
	}
	return nil
}

// ConsumerNames returns the names of signal's consumers that have a
// cursor and start with prefix, sorted.
func ConsumerNames(dataDir string, signal storage.Signal, prefix string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dataDir, "cursors", signal.String()))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".cursor"); ok && strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	return names, nil
}

// ConsumerLag is what a consumer has not committed yet.
type ConsumerLag struct {
	Committed Position
	// Records and Bytes after Committed.
	Records, Bytes int64
	// Oldest is the receive time of the first record after Committed,
	// zero if there is none.
	Oldest time.Time
}

// ReadConsumerLag computes the lag of the consumer called name of signal
// without opening the store, so it may run while a server writes (for
// `stats`). It reads the record headers after the consumer's cursor.
func ReadConsumerLag(dataDir, name string, signal storage.Signal) (ConsumerLag, error) {
	if err := checkConsumerName(name); err != nil {
		return ConsumerLag{}, err
	}
	pos, err := readCursor(filepath.Join(dataDir, "cursors", signal.String(), name+".cursor"))
	if err != nil {
		return ConsumerLag{}, err
	}
	lag := ConsumerLag{Committed: pos}
	r := NewReader(dataDir, signal, pos)
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, ErrCorrupt) {
			continue
		}
		if err != nil {
			return ConsumerLag{}, err
		}
		if lag.Records == 0 {
			lag.Oldest = rec.Time
		}
		lag.Records++
		// The record's size in its segment (the reader is just past it):
		// its frame, not the decompressed payload.
		lag.Bytes += r.Position().Offset - rec.Offset
	}
	return lag, nil
}

// CheckConsumerName says why name cannot name a consumer, nil if it can.
func CheckConsumerName(name string) error { return checkConsumerName(name) }

func checkConsumerName(name string) error {
	if name == "" || len(name) > 128 || name[0] == '.' {
		return fmt.Errorf("invalid consumer name %q: want 1 to 128 of [A-Za-z0-9._-], not starting with '.'", name)
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
		if !ok {
			return fmt.Errorf("invalid consumer name %q: want 1 to 128 of [A-Za-z0-9._-], not starting with '.'", name)
		}
	}
	return nil
}

// Name returns the consumer's name.
func (c *Consumer) Name() string { return c.name }

// Next returns the next record after the consumer's position; see
// Reader.Next for io.EOF (caught up) and *CorruptError (damage skipped). It
// returns a *GapError (wrapping ErrGap) when retention deleted records the
// consumer had not read: it has moved past them, and the next call returns
// the first record after the gap.
func (c *Consumer) Next() (Record, error) {
	before := c.r.Position()
	rec, err := c.r.Next()
	if pos := c.r.Position(); pos != before {
		c.trailMu.Lock()
		if len(c.trail) >= maxTrail {
			c.trail = append(c.trail[:0], c.trail[len(c.trail)/2:]...)
		}
		c.trail = append(c.trail, posValue{pos: pos, ordinal: c.r.ord})
		c.trailMu.Unlock()
	}
	return rec, err
}

// Position returns the position after the last record Next returned: what
// Commit would persist.
func (c *Consumer) Position() Position { return c.r.Position() }

// Committed returns the last persisted position.
func (c *Consumer) Committed() Position { return c.committed }

// Commit durably records that every record Next has returned so far is
// handled. It is a no-op if nothing was read since the last Commit.
func (c *Consumer) Commit() error {
	c.trailMu.Lock()
	pos := c.committed
	if n := len(c.trail); n > 0 {
		pos = c.trail[n-1].pos
	}
	c.trailMu.Unlock()
	return c.CommitTo(pos)
}

// CommitTo durably records that every record before pos is handled, for
// consumers that handle records out of order (a pipelined forwarder commits
// up to the first record still in flight). pos must be a position Next has
// reached (a record boundary, at or before Position).
//
// A commit rewrites the cursor in place with one fsync: it needs no free
// space, so it succeeds on a full disk.
func (c *Consumer) CommitTo(pos Position) error {
	if pos == c.committed {
		return nil
	}
	v := posValue{pos: pos, ordinal: -1}
	c.trailMu.Lock()
	for _, t := range c.trail {
		if t.pos == pos {
			v.ordinal = t.ordinal
			break
		}
	}
	c.trailMu.Unlock()
	// trim drops the entries up to pos: no commit goes back.
	trim := func() {
		c.trailMu.Lock()
		defer c.trailMu.Unlock()
		for i, t := range c.trail {
			if t.pos == pos {
				c.trail = append(c.trail[:0], c.trail[i+1:]...)
				return
			}
		}
	}
	var err error
	if c.pf == nil {
		var ok bool
		c.pf, _, ok, err = openPosFile(c.path)
		if errors.Is(err, ErrCorrupt) {
			ok, err = false, nil // damaged: replace it
		}
		if err == nil && !ok {
			c.pf, err = createPosFile(c.path, v)
			if err == nil {
				lockCursor(c.pf.f, c.name) // a new inode: no one else has it
				c.committed = pos
				trim()
				return nil
			}
		}
	}
	if err == nil {
		err = c.pf.write(v)
	}
	if err != nil {
		return fmt.Errorf("cannot commit consumer %q: %w", c.name, err)
	}
	c.committed = pos
	trim()
	return nil
}

// Close releases the consumer's files. It does not commit.
func (c *Consumer) Close() error {
	c.pf.close()
	c.pf = nil
	return c.r.Close()
}

func readCursor(path string) (Position, error) {
	v, _, err := readPosFile(path)
	if err != nil {
		return Position{}, fmt.Errorf("%w; delete it to start from the oldest record", err)
	}
	return v.pos, nil
}
