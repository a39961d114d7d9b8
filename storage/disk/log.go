package disk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// batch is a group of records that share one write and one fsync: every
// writer that appended to it waits on done and then reads err.
type batch struct {
	// buf holds the framed records from buf[pad:]. Its address is a
	// multiple of blockSize and it keeps a block of room past its
	// length (reserve), for a direct write (direct.go); pad is where the
	// records' offset falls in its block, the room for the block's head.
	buf        []byte
	pad        int
	grow       int // what buf grows to when too small (batchSizer.want)
	records    int64
	items      int64
	minT, maxT int64
	done       chan struct{}
	err        error
}

// newBatch returns an empty batch for l.
func (l *signalLog) newBatch() *batch {
	return &batch{done: make(chan struct{})}
}

// len is the length of b's records.
func (b *batch) len() int { return len(b.buf) - b.pad }

// reset empties b for records that will start pad bytes into a block,
// its buffer to grow to grow bytes when too small (batchbuf.go).
func (b *batch) reset(pad, grow int) {
	b.buf = b.buf[:0]
	b.grow = grow
	b.reserve(pad)
	b.buf = b.buf[:pad]
	b.pad = pad
}

// reserve makes room for n more bytes and a block of padding, keeping
// buf's alignment. It grows buf to b.grow, the size recent batches
// needed (at most four times what this one needs), or by a quarter at
// least, as append grows a large slice.
func (b *batch) reserve(n int) {
	if cap(b.buf)-len(b.buf) >= n+blockSize {
		return
	}
	need := len(b.buf) + n + blockSize
	size := alignUp(max(cap(b.buf)+cap(b.buf)/4, need, min(b.grow, 4*need)))
	// On the Go heap, where the memory limit sees it (a buffer in a
	// mapping of its own, in huge pages, cost 40 % less CPU per MiB
	// written direct, but the Go memory limit does not count it:
	// docs/limits.md).
	nb := alignedBytes(size)
	b.buf = nb[:copy(nb, b.buf)]
}

func (b *batch) add(unixNano int64, items int) {
	if b.records == 0 || unixNano < b.minT {
		b.minT = unixNano
	}
	if unixNano > b.maxT {
		b.maxT = unixNano
	}
	b.records++
	b.items += int64(items)
}

// segInfo summarises one segment for retention and Stats.
type segInfo struct {
	seq        uint64
	bytes      int64
	records    int64
	items      int64
	minT, maxT int64 // receive times, Unix nanoseconds; zero without records
}

func (s *segInfo) addBatch(b *batch) {
	if b.records == 0 {
		return
	}
	if s.records == 0 || b.minT < s.minT {
		s.minT = b.minT
	}
	if b.maxT > s.maxT {
		s.maxT = b.maxT
	}
	s.records += b.records
	s.items += b.items
}

// signalLog is the append-only log of one signal.
//
// Group commit: writers append their framed record to the current batch
// under mu and wait; one flusher goroutine swaps the batch out, writes it
// with a single write (and, with SyncAlways, a single fsync; on Linux one
// O_DIRECT|O_DSYNC write that is both, see direct.go), and wakes all its
// writers at once. While it syncs, the next batch fills, so under load
// one fsync serves many requests and throughput is not bounded by fsync
// latency.
//
// Offsets are never reused: after a failed write, and on every start, new
// records go to a new segment. A reader in another process that read bytes
// of a write that then failed (or that a crash tore) therefore never finds
// different records at the offset it remembers.
type signalLog struct {
	dir            string
	signal         storage.Signal
	maxSegmentSize int64
	sync           SyncPolicy
	syncInterval   time.Duration
	compression    Compression
	logger         *slog.Logger
	rolled         func() // called by the flusher after a new segment starts
	observeSync    func(storage.Signal, time.Duration)

	mu  sync.Mutex
	cur *batch
	// free is the buffer kept for the next batch, sizes the sizes
	// recent batches needed (batchbuf.go); the flusher's, under mu so
	// that bufferBytes may read them.
	free    *batch
	sizes   batchSizer
	closed  bool
	kick    chan struct{} // capacity 1: "a batch is waiting"
	stopped chan struct{} // closed when the flusher exits

	// Owned by the flusher goroutine (and open/close, when it isn't running).
	f        *os.File
	seq      uint64 // of f, or of the last segment if f is nil
	size     int64  // bytes of f known to be good
	mustRoll bool   // a write failed: continue in a new segment
	dirty    bool   // written since the last fsync (SyncInterval)
	// idle lets an idle log's batch buffers go (batchbuf.go).
	idle *time.Timer
	// Direct writes (direct.go): f is open with directFlags; alloc is
	// the size f is preallocated to, tail the head of the block at
	// size. noDirect: the filesystem refused O_DIRECT.
	direct   bool
	noDirect bool
	alloc    int64
	tail     [blockSize]byte
	// aio submits direct writes and waits for them in the poller
	// (aio_linux.go); noAIO: the system has none, use pwrite; aioRetry:
	// its contexts were used up, use pwrite until then.
	aio      *aioWriter
	noAIO    bool
	aioRetry time.Time

	// The retention mark (retainmark.go); owned by retention.
	mark    *posFile
	markVal posValue

	statMu sync.Mutex
	segs   []segInfo // oldest first; the last one is the active segment, if active
	// active says the last of segs is being written (f is open). It is
	// not after a roll whose new segment the disk could not take: then
	// every segment is closed, and retention may delete the last one
	// too, or a full disk holding a single segment would never be freed.
	active bool
	errors int64 // failed writes and syncs
}

type logConfig struct {
	maxSegmentSize int64
	sync           SyncPolicy
	syncInterval   time.Duration
	compression    Compression
	logger         *slog.Logger
	rolled         func()
	observeSync    func(storage.Signal, time.Duration)
	retention      bool // the store deletes segments: keep a retention mark
}

func openSignalLog(dataDir string, signal storage.Signal, cfg logConfig) (*signalLog, error) {
	l := &signalLog{
		dir:            filepath.Join(dataDir, signal.String()),
		signal:         signal,
		maxSegmentSize: cfg.maxSegmentSize,
		sync:           cfg.sync,
		syncInterval:   cfg.syncInterval,
		compression:    cfg.compression,
		logger:         cfg.logger,
		rolled:         cfg.rolled,
		observeSync:    cfg.observeSync,
		kick:           make(chan struct{}, 1),
		stopped:        make(chan struct{}),
	}
	l.cur = l.newBatch()
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", l.dir, err)
	}
	if err := l.openMark(cfg.retention); err != nil {
		return nil, err
	}
	if err := l.recover(); err != nil {
		l.mark.close()
		return nil, err
	}
	go l.flushLoop()
	return l, nil
}

// recover summarises the existing segments and repairs the newest one: a
// torn or corrupt tail left by a crash is cut off after the last valid
// record (the bad record and anything after it were never acknowledged: a
// record is acknowledged only after the fsync that covers it, and a record
// is written only after all earlier ones). Damage in the middle of the
// newest segment, followed by valid records, is logged and kept: cutting
// there would drop acknowledged data, and readers skip the damage.
//
// In a newest segment written in place (preallocated for direct writes,
// direct.go), a hole of zeros where a record should be is the end of the
// log, even when records follow it: a direct commit's blocks land in any
// order, and a power loss in the middle of one can keep some of them and
// lose others, which still read as the zeros preallocated there. Every
// acknowledged record was on stable storage whole before the commit
// after it began, so what follows the hole belongs to the commit that
// never returned. It is cut with the rest of the tail, and no reader
// reports damage for it (walkSegmentTo). The hole is a zero record
// header with zeros to its block's end (a lost block; a zeroed sector
// with data after it is damage), or a zero block inside a bad record of
// a compressed segment only: an uncompressed record may hold a client's
// zeros, and a bad one is damage (segmentReader.lostBlock).
//
// New records then go to a new segment (see signalLog on offsets).
func (l *signalLog) recover() error {
	seqs, err := listSegmentSeqs(l.dir)
	if err != nil {
		return err
	}
	if len(seqs) == 0 {
		return l.startSegment(1)
	}
	for _, seq := range seqs[:len(seqs)-1] {
		info, err := summarizeSegment(filepath.Join(l.dir, segmentName(seq)), seq, uint8(l.signal))
		if err != nil {
			l.logger.Warn("cannot summarise segment; its records are not counted", "signal", l.signal.String(), "segment", segmentName(seq), "err", err)
		}
		l.segs = append(l.segs, info)
	}
	seq := seqs[len(seqs)-1]
	path := filepath.Join(l.dir, segmentName(seq))
	info, good, corrupt, err := recoverSegment(path, seq, uint8(l.signal))
	if err != nil {
		return err
	}
	for _, c := range corrupt {
		l.logger.Warn("skipping damaged region in the newest segment", "signal", l.signal.String(), "err", c)
	}
	if good < segmentHeaderSize || info.records == 0 {
		// No record survived (or not even a header): the segment holds
		// nothing worth keeping.
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("cannot remove empty segment: %w", err)
		}
		if good < segmentHeaderSize {
			return l.startSegment(seq)
		}
		return l.startSegment(seq + 1)
	}
	if st, err := os.Stat(path); err != nil {
		return fmt.Errorf("cannot stat segment: %w", err)
	} else if st.Size() != good {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("cannot open segment: %w", err)
		}
		if err := f.Truncate(good); err != nil {
			f.Close()
			return fmt.Errorf("cannot truncate torn tail of %s at %d: %w", path, good, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("cannot sync %s: %w", path, err)
		}
		f.Close()
		l.logger.Info("cut torn tail left by a crash (a torn write, or zeros preallocated after the last record)", "signal", l.signal.String(), "segment", segmentName(seq), "offset", good, "bytes", st.Size()-good)
	}
	info.bytes = good
	l.segs = append(l.segs, info)
	return l.startSegment(seq + 1)
}

// startSegment is createSegment for recover: if the disk cannot take a new
// segment (full), the log opens all the same with no segment being
// written, and the first write creates it (as after a failed roll). A
// store that refused to open on a full disk would have to be started to
// free it: retention, and the forwarding whose cursors hold data against
// it, run only in an open store.
func (l *signalLog) startSegment(seq uint64) error {
	err := l.createSegment(seq)
	if err == nil {
		return nil
	}
	l.logger.Warn("cannot start a new segment; the first write tries again", "signal", l.signal.String(), "err", err)
	l.f, l.seq = nil, seq-1
	return nil
}

// recoverSegment reads every record of the segment at path, skipping
// damaged regions, and returns its summary, the offset just past its last
// valid record (0 if even the header is missing or cut) and the damaged
// regions before that offset. A header that is there but wrong (another
// program's file) is an error: better to refuse to start than to overwrite
// it.
func recoverSegment(path string, seq uint64, signal uint8) (segInfo, int64, []*CorruptError, error) {
	info := segInfo{seq: seq}
	seg, err := openSegment(path, seq, signal, nil, nil, nil)
	if errors.Is(err, errShortHeader) {
		return info, 0, nil, nil
	}
	if err != nil {
		return info, 0, nil, fmt.Errorf("cannot recover %s: %w", path, err)
	}
	defer seg.close()
	info, good, corrupt := walkSegmentTo(seg, nil, seg.writtenInPlace())
	return info, good, corrupt, nil
}

// walkSegment reads every record of seg, skipping damaged regions, and
// returns its summary, the offset just past its last valid record and the
// damaged regions before that offset. It calls onRecord, if not nil, for
// every valid record.
func walkSegment(seg *segmentReader, onRecord func(Record)) (segInfo, int64, []*CorruptError) {
	return walkSegmentTo(seg, onRecord, false)
}

// walkSegmentTo is walkSegment, which with lostWrites ends at the first
// record that a lost write explains (recover, on a segment written in
// place): a zero record header with zeros to its block's end
// (segmentReader.zeroToBlockEnd), or a bad record of a compressed segment
// that a block of zeros overlaps (segmentReader.lostBlock), instead of
// skipping it as damage.
func walkSegmentTo(seg *segmentReader, onRecord func(Record), lostWrites bool) (segInfo, int64, []*CorruptError) {
	info := segInfo{seq: seg.seq}
	good := int64(segmentHeaderSize)
	var corrupt []*CorruptError
	off := good
	for {
		rec, next, st := seg.readRecord(off)
		if st == recordOK {
			if onRecord != nil {
				onRecord(rec)
			}
			info.add(rec.Time.UnixNano(), rec.Items)
			off, good = next, next
			continue
		}
		if st != recordBad && st != recordZero {
			break
		}
		if lostWrites && ((st == recordZero && seg.zeroToBlockEnd(off)) || seg.lostBlock(off)) {
			break
		}
		p, ok := seg.resync(off)
		if !ok {
			break
		}
		corrupt = append(corrupt, &CorruptError{Path: seg.path, Offset: off, Skipped: p - off, Reason: seg.reason})
		off = p
	}
	info.bytes = good
	return info, good, corrupt
}

func (s *segInfo) add(unixNano int64, items int) {
	if s.records == 0 || unixNano < s.minT {
		s.minT = unixNano
	}
	if unixNano > s.maxT {
		s.maxT = unixNano
	}
	s.records++
	s.items += int64(items)
}

// summarizeSegment counts a closed segment's records by walking record
// headers only, without CRCs: what Open and ReadStats need, without reading
// every payload. The walk reads through a small window, so small records
// cost a sequential read of the file and large ones one small read each. A
// header walk that does not end exactly at the end of the file means
// damage; the segment is then read in full, skipping the damage.
func summarizeSegment(path string, seq uint64, signal uint8) (segInfo, error) {
	info := segInfo{seq: seq}
	seg, err := openSegment(path, seq, signal, make([]byte, 16<<10), nil, nil)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil {
			info.bytes = st.Size()
		}
		return info, err
	}
	defer seg.close()
	info.bytes = seg.size
	off := int64(segmentHeaderSize)
	for off+recordHeaderSize+recordMetaSize <= seg.size {
		h, err := seg.at(off, recordHeaderSize+recordMetaSize)
		if err != nil {
			break
		}
		bodyLen, _ := parseRecordHeader(h)
		if bodyLen < recordMetaSize || off+recordHeaderSize+int64(bodyLen) > seg.size {
			break
		}
		info.add(parseRecordMeta(h[recordHeaderSize:]))
		off += recordHeaderSize + int64(bodyLen)
	}
	if off == seg.size {
		return info, nil
	}
	if seg.zeroFrom(off) {
		// The zeros preallocated after the last record (direct.go):
		// not counted, as the writer's Stats does not count them.
		info.bytes = off
		return info, nil
	}
	full, _, _ := walkSegment(seg, nil)
	full.bytes = seg.size
	return full, nil
}

// createSegment starts segment seq and makes it the one being written. A
// leftover file of that name can only be one whose creation failed before
// (it was never written to), so it is overwritten.
func (l *signalLog) createSegment(seq uint64) error {
	path := filepath.Join(l.dir, segmentName(seq))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("cannot create segment: %w", err)
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(path)
		return err
	}
	hdr := appendSegmentHeader(nil, uint8(l.signal), l.compression)
	if err := writeAt(f, hdr, 0); err != nil {
		return fail(fmt.Errorf("cannot write segment header: %w", err))
	}
	if l.sync != SyncNone {
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("cannot sync new segment: %w", err))
		}
		// The new file's directory entry must be durable too, or a crash
		// could lose the whole segment with records already acknowledged.
		if err := syncDir(l.dir); err != nil {
			return fail(err)
		}
	}
	// The first commit writes the header's block whole, so
	// preallocation starts after it.
	f, direct := l.openDirect(f)
	l.f, l.seq, l.size, l.mustRoll = f, seq, int64(len(hdr)), false
	l.direct, l.alloc = direct, blockSize
	copy(l.tail[:], hdr)
	l.statMu.Lock()
	l.segs = append(l.segs, segInfo{seq: seq, bytes: l.size})
	l.active = true
	l.statMu.Unlock()
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

// write appends one record and returns once it is stored as the sync
// policy promises.
func (l *signalLog) write(ctx context.Context, data []byte, items int) error {
	return l.writeKeyed(ctx, data, items, nil)
}

// writeKeyed is write, storing key (nil: none) in the record (keys.go).
func (l *signalLog) writeKeyed(ctx context.Context, data []byte, items int, key *storage.StoredKey) error {
	if items < 0 || items >= recordKeyFlag {
		// Cannot happen (see recordKeyFlag): refused rather than misread.
		return storage.NotStored(fmt.Errorf("cannot store a record of %d items: %w", items, storage.ErrRejected))
	}
	now := time.Now().UnixNano()
	tenant, _ := otlp.TenantFrom(ctx)
	if tenant == otlp.DefaultTenant {
		// What a record without a tenant reads as: store nothing.
		tenant = ""
	}
	if len(tenant) > maxRecordTenant {
		return storage.NotStored(fmt.Errorf("cannot store a record of a %d-byte tenant name (at most %d): %w", len(tenant), maxRecordTenant, storage.ErrRejected))
	}
	var zbuf *[]byte
	if l.compression == CompressionZstd {
		// Compress outside mu, so that writers compress in parallel.
		zbuf = zbufPool.Get().(*[]byte)
		*zbuf = compressPayload((*zbuf)[:0], data)
		data = *zbuf
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		if zbuf != nil {
			zbufPool.Put(zbuf)
		}
		return storage.NotStored(storage.ErrClosed)
	}
	b := l.cur
	need := recordHeaderSize + recordMetaSize + len(data)
	if tenant != "" {
		need += 1 + len(tenant)
	}
	if key != nil {
		need += recordKeyFixed + len(key.Key) + len(key.Message)
	}
	b.reserve(need)
	b.buf = appendKeyedRecord(b.buf, now, items, tenant, key, data)
	b.add(now, items)
	l.mu.Unlock()
	if zbuf != nil {
		zbufPool.Put(zbuf)
	}
	select {
	case l.kick <- struct{}{}:
	default:
	}
	if key != nil {
		// A keyed record's fate must be known (storage.KeyedSink): the
		// window of keys must not forget a key whose record the log
		// holds. It waits for its batch past ctx's end, at most one
		// write and fsync that are under way anyway.
		<-b.done
		return b.err
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

var zbufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func (l *signalLog) flushLoop() {
	defer close(l.stopped)
	var tick <-chan time.Time
	if l.sync == SyncInterval {
		t := time.NewTicker(l.syncInterval)
		defer t.Stop()
		tick = t.C
	}
	// One timer, reset at every idle wait that holds buffers: no
	// allocation per commit.
	l.idle = time.NewTimer(idleRelease)
	defer l.idle.Stop()
	for {
		// Checking for work under mu before waiting means no wake-up is
		// lost: a writer appends under mu and then kicks, and the kick
		// channel buffers one signal.
		l.mu.Lock()
		b := l.cur
		if b.records == 0 {
			closed := l.closed
			l.mu.Unlock()
			if closed {
				return
			}
			var idle <-chan time.Time
			if l.holdsIdle() {
				l.idle.Reset(idleRelease)
				idle = l.idle.C
			}
			select {
			case <-l.kick:
			case <-tick:
				l.syncIfDirty()
			case <-idle:
				l.releaseIdle()
			}
			continue
		}
		next := l.free
		if next == nil {
			next = l.newBatch()
		}
		l.free = nil
		pad := 0
		if l.direct {
			// Where the next batch will most likely start: after
			// this one.
			pad = int((l.nextStart(b) + int64(b.len())) % blockSize)
		}
		next.reset(pad, l.sizes.want())
		l.cur = next
		l.mu.Unlock()

		b.err = l.commit(b)
		if b.err != nil {
			l.statMu.Lock()
			l.errors++
			l.statMu.Unlock()
		}
		// Reuse the buffer (not the batch: its writers may still read
		// b.err after done is closed, and nothing else), if it is not
		// larger than recent batches need (batchbuf.go). What this
		// batch needed: its records, room for another pad, and the
		// block a direct write pads into.
		need := b.len() + 2*blockSize
		buf := b.buf[:0]
		b.buf = nil
		l.mu.Lock()
		l.sizes.note(need, time.Now())
		if l.sizes.keeps(cap(buf)) {
			l.free = &batch{buf: buf, done: make(chan struct{})}
		}
		l.mu.Unlock()
		close(b.done)
	}
}

// syncIfDirty is SyncInterval's periodic fsync. A failure cannot be undone
// (the writes were already acknowledged, as that policy documents); it is
// logged, and new records go to a new segment.
func (l *signalLog) syncIfDirty() {
	if !l.dirty || l.f == nil {
		return
	}
	start := time.Now()
	err := l.f.Sync()
	if l.observeSync != nil {
		l.observeSync(l.signal, time.Since(start))
	}
	if err != nil {
		l.logger.Error("periodic fsync failed: records acknowledged since the last one may be lost on power failure", "signal", l.signal.String(), "err", err)
		l.statMu.Lock()
		l.errors++
		l.statMu.Unlock()
		l.mustRoll = true
		return
	}
	l.dirty = false
}

// commit writes b at the end of the current segment and, with SyncAlways,
// fsyncs it, first rolling to a new segment when the current one is full,
// missing (an earlier roll failed) or condemned by an earlier failure.
//
// Every failure returns an error wrapping storage.ErrUnavailable and
// leaves what is already stored intact: a failed write is cut back to the
// last good size, and the next commit starts over in a new segment, so a
// full disk refuses writes while it is full and accepts them again, with
// nothing to repair, once space returns.
func (l *signalLog) commit(b *batch) error {
	if l.mustStartSegment(b) {
		if err := l.roll(); err != nil {
			return storage.NotStored(fmt.Errorf("%w: %v", storage.ErrUnavailable, err))
		}
	}
	if l.direct {
		err := l.commitDirect(b)
		if err == nil {
			l.noteCommit(b)
		}
		if err != errNoDirect {
			return err
		}
	}
	if err := writeAt(l.f, b.buf[b.pad:], l.size); err != nil {
		return l.failed(fmt.Errorf("%w: cannot write to %s: %v", storage.ErrUnavailable, l.f.Name(), err))
	}
	if l.sync == SyncAlways {
		start := time.Now()
		err := l.f.Sync()
		if l.observeSync != nil {
			l.observeSync(l.signal, time.Since(start))
		}
		if err != nil {
			// After a failed fsync the page cache state is unknown
			// (Linux may have dropped the dirty pages): cut back and
			// report failure.
			return l.failed(fmt.Errorf("%w: cannot sync %s: %v", storage.ErrUnavailable, l.f.Name(), err))
		}
	} else {
		l.dirty = true
	}
	l.size += int64(b.len())
	l.noteCommit(b)
	return nil
}

// mustStartSegment says whether b goes to a new segment: the current one
// is full, missing (an earlier roll failed) or condemned by an earlier
// failure.
func (l *signalLog) mustStartSegment(b *batch) bool {
	return l.f == nil || l.mustRoll || (l.size > segmentHeaderSize && l.size+int64(b.len()) > l.maxSegmentSize)
}

// nextStart is the offset at which b will be written if its commit
// succeeds.
func (l *signalLog) nextStart(b *batch) int64 {
	if l.mustStartSegment(b) {
		return segmentHeaderSize
	}
	return l.size
}

// noteCommit counts a committed batch in the active segment's summary.
func (l *signalLog) noteCommit(b *batch) {
	l.statMu.Lock()
	last := &l.segs[len(l.segs)-1]
	last.bytes = l.size
	last.addBatch(b)
	l.statMu.Unlock()
}

// failed cuts back a batch whose write or fsync failed and returns err,
// marked storage.NotStored when the cut back is durable: only then is none
// of the batch's records in the log for a reader to find.
func (l *signalLog) failed(err error) error {
	if l.cutBack() {
		return storage.NotStored(err)
	}
	return err
}

// cutBack removes a failed write's bytes so that no half record follows
// the good ones, and condemns the segment (see signalLog on offsets). If
// even the truncation fails, the leftover bytes sit at the end of a closed
// segment, where readers report and skip them; it reports whether the cut
// is done and durable.
func (l *signalLog) cutBack() bool {
	err := l.f.Truncate(l.size)
	if err == nil {
		l.alloc = min(l.alloc, l.size) // the preallocated zeros went too
	}
	if err == nil && l.sync != SyncNone {
		// Make the cut durable, or a power loss could bring the failed
		// bytes back at the end of what is now a closed segment.
		err = l.f.Sync()
	}
	if err != nil {
		l.logger.Warn("cannot cut back a failed write; readers will report the leftover bytes", "file", l.f.Name(), "offset", l.size, "err", err)
	}
	l.mustRoll = true
	return err == nil
}

// roll closes the current segment (deleting it if it holds no record) and
// starts the next. If creating the next fails, l.f stays nil and the next
// commit tries again.
func (l *signalLog) roll() error {
	if l.f != nil {
		if l.dirty && l.sync != SyncNone {
			if err := l.f.Sync(); err != nil {
				l.logger.Error("fsync before closing a segment failed", "file", l.f.Name(), "err", err)
			}
			l.dirty = false
		}
		l.trimTail()
		empty := l.size <= segmentHeaderSize
		path := l.f.Name()
		l.f.Close()
		l.f = nil
		if empty {
			os.Remove(path)
		}
		l.statMu.Lock()
		l.active = false
		if n := len(l.segs); empty && n > 0 && l.segs[n-1].seq == l.seq {
			l.segs = l.segs[:n-1]
		}
		l.statMu.Unlock()
	}
	if err := l.createSegment(l.seq + 1); err != nil {
		return err
	}
	if l.rolled != nil {
		l.rolled()
	}
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
	l.mark.close()
	if l.aio != nil {
		l.aio.close()
		l.aio = nil
	}
	if l.f == nil {
		return nil
	}
	l.trimTail()
	var err error
	if l.dirty && l.sync != SyncNone {
		err = l.f.Sync()
		l.dirty = err != nil
	}
	return errors.Join(err, l.f.Close())
}
