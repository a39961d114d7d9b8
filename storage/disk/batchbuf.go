package disk

import "time"

// Batch buffers.
//
// A log has a batch being filled (signalLog.cur) and, while the flusher
// writes one, that one: two buffers, each a copy of requests whose
// bodies the ingest pipeline holds, charged, until their write returns,
// so a batch buffer is at most about the admission request budget
// (docs/limits.md). Between commits the flusher keeps the buffer of the
// batch it wrote for the next one (signalLog.free), and gives each new
// batch a buffer of the size recent batches needed, so that a group
// commit of ten 2 MB requests neither allocates its buffer again nor
// grows it a quarter at a time (each step a copy, under the log's lock).
//
// What stays is bounded three ways: a buffer over maxKeptBuffer is not
// kept; a buffer over twice what the batches of the last sizeWindow to
// 2×sizeWindow commits needed is not kept (load that drops gives its
// memory back within 2×sizeWindow commits); and a log that commits
// nothing for idleRelease lets both its buffers go.

// maxKeptBuffer bounds a batch buffer kept for the next batch: 32 MiB,
// a group commit of sixteen 2 MB requests, twice what ten unary calls
// of 2 MB in flight need. A batch larger than that has its buffer
// allocated for it and dropped after its commit; its write (tens of
// milliseconds at disk speed) dwarfs the allocation, while keeping it
// would hold two such buffers per signal beside the request budget.
const maxKeptBuffer = 32 << 20

// sizeWindow is the number of commits over which a log remembers the
// largest batch it needed: a buffer is sized for, and kept up to twice,
// the largest of the last sizeWindow to 2×sizeWindow commits. 64 commits
// are a few seconds of a busy log, long enough to span a burst's pauses
// (the unary clients' next round), short enough that a burst's buffers
// go soon after it.
const sizeWindow = 64

// idleRelease is how long a log that commits nothing keeps its batch
// buffers: the receiver's own release of a burst's buffers waits 5 s of
// nothing in flight (docs/limits.md, "The garbage collector's slack").
const idleRelease = 5 * time.Second

// minBuffer is the capacity below which an idle log's buffers are not
// worth letting go (and to which a batch's first buffer is sized): 64
// KiB, a few records of an SDK's requests, less than one request buffer
// of the receiver's pools.
const minBuffer = 64 << 10

// batchSizer follows the size of the batch buffers a log needs: the
// largest need noted in the current window of sizeWindow commits and in
// the window before it.
type batchSizer struct {
	cur, prev int
	n         int
}

// note records what a committed batch needed (its buffer's length and
// the block of room a direct write pads into).
func (s *batchSizer) note(need int) {
	s.cur = max(s.cur, need)
	s.n++
	if s.n == sizeWindow {
		s.prev, s.cur, s.n = s.cur, 0, 0
	}
}

// want is the capacity to give a new batch buffer: the largest recent
// need and a quarter (batches vary: ten requests in flight make one
// batch of ten, or of nine after a batch of one, and a buffer too small
// for the batch is grown with a copy, under the log's lock), at least
// minBuffer, at most maxKeptBuffer, in whole blocks.
func (s *batchSizer) want() int {
	n := max(s.cur, s.prev)
	return alignUp(min(max(n+n/4, minBuffer), maxKeptBuffer))
}

// keeps says whether a buffer of capacity c is kept for the next batch.
func (s *batchSizer) keeps(c int) bool {
	return c <= maxKeptBuffer && c <= 2*s.want()
}

// bufferBytes is the capacity of the batch buffers l holds between
// commits (the batch being filled and the one kept for the next): what
// TestBatchBuffersGivenBack bounds.
func (l *signalLog) bufferBytes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := cap(l.cur.buf)
	if l.free != nil {
		n += cap(l.free.buf)
	}
	return n
}

// releaseIdle lets go of the buffers of an idle log (no batch waiting):
// the kept one, and the empty current batch's, which gets a small one.
func (l *signalLog) releaseIdle() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.free = nil
	l.sizes = batchSizer{}
	if b := l.cur; b.records == 0 && cap(b.buf) > minBuffer {
		b.buf = nil
		b.reset(b.pad, 0)
	}
}

// holdsIdle says whether an idle log holds buffers worth letting go.
func (l *signalLog) holdsIdle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.free != nil || cap(l.cur.buf) > minBuffer
}
