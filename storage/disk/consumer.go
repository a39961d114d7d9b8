package disk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

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
// Consumers do not hold back retention: if retention deletes segments a
// consumer has not read, it continues with the oldest remaining one.
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
