package disk

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/storage"
)

const (
	segmentSuffix  = ".seg"
	segmentNameLen = 20 + len(segmentSuffix)
)

func segmentName(seq uint64) string {
	return fmt.Sprintf("%020d%s", seq, segmentSuffix)
}

// batch is a group of records that share one write and one fsync: every
// writer that appended to it waits on done and then reads err.
type batch struct {
	buf  []byte
	done chan struct{}
	err  error
}

// signalLog is the append-only log of one signal.
//
// Group commit: writers append their framed record to the current batch
// under mu and wait; one flusher goroutine swaps the batch out, writes it
// with a single write and a single fsync, and wakes all its writers at once.
// While it syncs, the next batch fills, so under load one fsync serves many
// requests and throughput is not bounded by fsync latency.
type signalLog struct {
	dir            string
	signal         storage.Signal
	maxSegmentSize int64

	mu      sync.Mutex
	cur     *batch
	closed  bool
	kick    chan struct{} // capacity 1: "a batch is waiting"
	stopped chan struct{} // closed when the flusher exits

	// Owned by the flusher goroutine (and open/close, when it isn't running).
	f    *os.File
	seq  uint64
	size int64 // bytes of f known to be good
	free *batch
}

func openSignalLog(dataDir string, signal storage.Signal, maxSegmentSize int64) (*signalLog, error) {
	l := &signalLog{
		dir:            filepath.Join(dataDir, signal.String()),
		signal:         signal,
		maxSegmentSize: maxSegmentSize,
		cur:            newBatch(),
		kick:           make(chan struct{}, 1),
		stopped:        make(chan struct{}),
	}
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", l.dir, err)
	}
	if err := l.recover(); err != nil {
		return nil, err
	}
	go l.flushLoop()
	return l, nil
}

func newBatch() *batch { return &batch{done: make(chan struct{})} }

// recover opens the newest segment for appending, after cutting off a torn
// or corrupt tail left by a crash: everything before the first bad record
// stays, the bad record and anything after it were never acknowledged
// (a record is acknowledged only after the fsync that covers it, and a
// record is written only after all earlier ones).
func (l *signalLog) recover() error {
	segs, err := listSegments(l.dir)
	if err != nil {
		return err
	}
	if len(segs) == 0 {
		return l.createSegment(1)
	}
	name := segs[len(segs)-1]
	seq, err := strconv.ParseUint(name[:20], 10, 64)
	if err != nil {
		return fmt.Errorf("cannot parse segment name %q: %w", name, err)
	}
	path := filepath.Join(l.dir, name)
	good, err := validPrefix(path, uint8(l.signal))
	if err != nil {
		return err
	}
	if good < segmentHeaderSize {
		// Not even a header survived: start the segment afresh.
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("cannot remove empty segment: %w", err)
		}
		return l.createSegment(seq)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("cannot open segment: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("cannot stat segment: %w", err)
	}
	if st.Size() != good {
		if err := f.Truncate(good); err != nil {
			f.Close()
			return fmt.Errorf("cannot truncate torn tail of %s at %d: %w", path, good, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("cannot sync %s: %w", path, err)
		}
	}
	l.f, l.seq, l.size = f, seq, good
	return nil
}

// validPrefix returns how many leading bytes of the segment at path are a
// valid header followed by whole records with good CRCs.
func validPrefix(path string, signal uint8) (int64, error) {
	var good int64
	err := scanSegmentStrict(path, signal, func(end int64) { good = end })
	return good, err
}

func (l *signalLog) createSegment(seq uint64) error {
	path := filepath.Join(l.dir, segmentName(seq))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("cannot create segment: %w", err)
	}
	hdr := appendSegmentHeader(nil, uint8(l.signal))
	if _, err := f.WriteAt(hdr, 0); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("cannot write segment header: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("cannot sync new segment: %w", err)
	}
	// The new file's directory entry must be durable too, or a crash could
	// lose the whole segment with records already acknowledged.
	if err := syncDir(l.dir); err != nil {
		f.Close()
		return err
	}
	l.f, l.seq, l.size = f, seq, int64(len(hdr))
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("cannot open directory for sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("cannot sync directory %s: %w", dir, err)
	}
	return nil
}

// write appends one record and returns once it is durable.
func (l *signalLog) write(ctx context.Context, data []byte, items int) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return storage.ErrClosed
	}
	b := l.cur
	b.buf = appendRecord(b.buf, time.Now().UnixNano(), items, data)
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		// The record may still be written; the client was not told it
		// was, so at worst it resends a duplicate (at-least-once).
		return fmt.Errorf("gave up waiting for the disk: %w", ctx.Err())
	}
}

func (l *signalLog) flushLoop() {
	defer close(l.stopped)
	for {
		// Checking for work under mu before waiting means no wake-up is
		// lost: a writer appends under mu and then kicks, and the kick
		// channel buffers one signal.
		l.mu.Lock()
		b := l.cur
		if len(b.buf) == 0 {
			closed := l.closed
			l.mu.Unlock()
			if closed {
				return
			}
			<-l.kick
			continue
		}
		next := l.free
		if next == nil {
			next = newBatch()
		}
		l.free = nil
		l.cur = next
		l.mu.Unlock()

		b.err = l.commit(b.buf)
		// Reuse the buffer (not the batch: its writers may still read
		// b.err after done is closed).
		buf := b.buf[:0]
		close(b.done)
		if cap(buf) <= 16<<20 {
			l.free = &batch{buf: buf, done: make(chan struct{})}
		}
	}
}

// commit writes buf at the end of the current segment and fsyncs it, rolling
// to a new segment first when the current one is full. On failure it cuts
// the segment back to its last good size, so a failed write (disk full) never
// leaves half a record behind earlier good ones.
func (l *signalLog) commit(buf []byte) error {
	if l.f == nil {
		// An earlier roll failed; try again now.
		if err := l.createSegment(l.seq + 1); err != nil {
			return fmt.Errorf("%w: %v", storage.ErrUnavailable, err)
		}
	}
	if l.size > segmentHeaderSize && l.size+int64(len(buf)) > l.maxSegmentSize {
		if err := l.f.Close(); err != nil {
			return fmt.Errorf("%w: cannot close segment: %v", storage.ErrUnavailable, err)
		}
		l.f = nil
		if err := l.createSegment(l.seq + 1); err != nil {
			return fmt.Errorf("%w: %v", storage.ErrUnavailable, err)
		}
	}
	if _, err := l.f.WriteAt(buf, l.size); err != nil {
		l.f.Truncate(l.size)
		return fmt.Errorf("%w: cannot write to %s: %v", storage.ErrUnavailable, l.f.Name(), err)
	}
	if err := l.f.Sync(); err != nil {
		// After a failed fsync the page cache state is unknown (Linux may
		// have dropped the dirty pages): cut back and report failure.
		l.f.Truncate(l.size)
		return fmt.Errorf("%w: cannot sync %s: %v", storage.ErrUnavailable, l.f.Name(), err)
	}
	l.size += int64(len(buf))
	return nil
}

func (l *signalLog) close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	// The flusher drains what is pending, then exits when it sees closed
	// with an empty batch.
	select {
	case l.kick <- struct{}{}:
	default:
	}
	<-l.stopped
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// scanSegmentStrict walks the segment at path and calls good(end) after the
// header and after every valid record, with the offset just past it. It
// stops without error at the first torn or corrupt record.
func scanSegmentStrict(path string, signal uint8, good func(end int64)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot open segment: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	var hdr [segmentHeaderSize]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil
	}
	sig, err := parseSegmentHeader(hdr[:])
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		return fmt.Errorf("cannot recover %s: %w", path, err)
	}
	if sig != signal {
		return fmt.Errorf("cannot recover %s: it holds signal %d, want %d", path, sig, signal)
	}
	end := int64(segmentHeaderSize)
	good(end)
	var buf []byte
	for {
		var n int64
		_, buf, n, err = readRecord(br, buf)
		if err != nil {
			return nil
		}
		end += n
		good(end)
	}
}
