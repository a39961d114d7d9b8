package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

// Cursor file format (dataDir/cursors/<signal>/<name>.cursor, 32 bytes):
//
//	magic   [8]byte  "OTLPCUR\x01"
//	segment uint64 LE
//	offset  int64 LE
//	crc     uint32 LE  CRC-32C of the 24 bytes before it
//	reserved [4]byte zero
//
// It is replaced atomically (write a temporary file, fsync it, rename it
// over the old one, fsync the directory), so after a crash it holds either
// the old position or the new one, never a mix.
const cursorSize = 32

var cursorMagic = [8]byte{'O', 'T', 'L', 'P', 'C', 'U', 'R', 1}

// Consumer is a named reader of one signal's log whose position survives
// restarts: it is how a forwarder or an embedding engine consumes stored
// data at least once. Read with Next, and after the records read so far are
// safely handled, call Commit; a Consumer opened later with the same name
// continues after the last committed record. Records read but not committed
// before a crash are read again (at-least-once).
//
// Consumers do not hold back retention unless their name starts with the
// store's Options.HoldPrefix: if retention deletes segments a consumer has
// not read, it continues with the oldest remaining one.
// Several Consumers with different names read independently; two open with
// the same name at once overwrite each other's cursor.
type Consumer struct {
	r         *Reader
	name      string
	path      string
	committed Position
}

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
	pos, err := readCursor(c.path)
	if err != nil {
		return nil, fmt.Errorf("cannot open consumer %q: %w", name, err)
	}
	c.committed = pos
	c.r = NewReader(dataDir, signal, pos)
	return c, nil
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
// arrived meanwhile. A consumer with a cursor continues from it.
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
	}
	if err := writeCursor(c.path, pos); err != nil {
		c.Close()
		return nil, fmt.Errorf("cannot create consumer %q: %w", name, err)
	}
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
// Reader.Next for io.EOF (caught up) and *CorruptError (damage skipped).
func (c *Consumer) Next() (Record, error) { return c.r.Next() }

// Position returns the position after the last record Next returned: what
// Commit would persist.
func (c *Consumer) Position() Position { return c.r.Position() }

// Committed returns the last persisted position.
func (c *Consumer) Committed() Position { return c.committed }

// Commit durably records that every record Next has returned so far is
// handled. It is a no-op if nothing was read since the last Commit.
func (c *Consumer) Commit() error {
	pos := c.r.Position()
	if pos == c.committed {
		return nil
	}
	if err := writeCursor(c.path, pos); err != nil {
		return fmt.Errorf("cannot commit consumer %q: %w", c.name, err)
	}
	c.committed = pos
	return nil
}

// CommitTo durably records that every record before pos is handled, for
// consumers that handle records out of order (a pipelined forwarder commits
// up to the first record still in flight). pos must be a position Next has
// reached (a record boundary, at or before Position).
func (c *Consumer) CommitTo(pos Position) error {
	if pos == c.committed {
		return nil
	}
	if err := writeCursor(c.path, pos); err != nil {
		return fmt.Errorf("cannot commit consumer %q: %w", c.name, err)
	}
	c.committed = pos
	return nil
}

// Close releases the consumer's files. It does not commit.
func (c *Consumer) Close() error { return c.r.Close() }

func readCursor(path string) (Position, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Position{}, nil
	}
	if err != nil {
		return Position{}, err
	}
	if len(b) != cursorSize || [8]byte(b[:8]) != cursorMagic ||
		crc32.Checksum(b[:24], castagnoli) != binary.LittleEndian.Uint32(b[24:28]) {
		return Position{}, fmt.Errorf("%w: cursor file %s is damaged; delete it to start from the oldest record", ErrCorrupt, path)
	}
	return Position{
		Segment: binary.LittleEndian.Uint64(b[8:16]),
		Offset:  int64(binary.LittleEndian.Uint64(b[16:24])),
	}, nil
}

func writeCursor(path string, pos Position) error {
	var b [cursorSize]byte
	copy(b[:8], cursorMagic[:])
	binary.LittleEndian.PutUint64(b[8:16], pos.Segment)
	binary.LittleEndian.PutUint64(b[16:24], uint64(pos.Offset))
	binary.LittleEndian.PutUint32(b[24:28], crc32.Checksum(b[:24], castagnoli))
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b[:]); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}
