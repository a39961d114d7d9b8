package disk

import "time"

// Batch buffers.
//
// A log has a batch being filled (signalLog.cur) and, while the flusher
// writes one, that one: two buffers, each a copy of requests whose
// bodies the ingest pipeline holds, charged, until their write returns,
// so a batch buffer is at most about the admission request budget
// (docs/limits.md). Between commits the flusher keeps the buffer of the
// batch it wrote for the next one (signalLog.free). A buffer too small
// for its batch grows at once to a quarter more than the largest batch
// the log has needed lately (batchSizer; at most four times what the
// batch needs now), not a quarter at a time: a group commit of ten 2 MB
// requests grew its buffer about ten times, each step an allocation and
// a copy under the log's lock, and a buffer over 16 MiB was dropped
// after its commit, so the next grew again (issue 23).
//
// What stays is bounded three ways: a buffer over maxKeptBuffer is not
// kept; when no batch has needed more than half of the log's size for
// shrinkAfter, the size follows the batches down and a buffer over twice
// it is not kept (load that falls gives its memory back); and a log that
// commits nothing for idleRelease lets both its buffers go.

// maxKeptBuffer bounds a batch buffer kept for the next batch: 32 MiB,
// a group commit of sixteen 2 MB requests, more than ten unary calls of
// 2 MB in flight need. A batch larger than that has its buffer
// allocated for it and dropped after its commit; its write (tens of
// milliseconds at disk speed) dwarfs the allocation, while keeping it
// would hold two such buffers per signal beside the request budget.
const maxKeptBuffer = 32 << 20

// shrinkAfter is how long no batch may need more than half of a log's
// buffer size before the size falls. A steady load's batches vary (ten
// requests in flight make a batch of one, then of nine, or of two and
// three): sized by the largest of the last 64 commits instead, a real
// server's buffers shrank and grew again every few seconds, allocating
// more than before. Half a minute spans a load's pauses and still gives
// a burst's memory back soon after it.
const shrinkAfter = 30 * time.Second

// idleRelease is how long a log that commits nothing keeps its batch
// buffers: less than the 5 s of nothing in flight after which the
// receiver gives a burst's heap back to the system (docs/limits.md, "The
// garbage collector's slack"), so that the buffers are garbage by then
// and go with it.
const idleRelease = 4 * time.Second

// minBuffer is the capacity below which an idle log's buffers are not
// worth letting go, and the least a log's size is: 64 KiB, a few records
// of an SDK's requests, less than one request buffer of the receiver's
// pools.
const minBuffer = 64 << 10

// batchSizer follows the size of the batch buffers a log needs: a
// quarter more than the largest batch since the load last fell, at most
// maxKeptBuffer, at least minBuffer. It is a size, not memory: buffers
// grow to it only when a batch needs more than they hold.
type batchSizer struct {
	size int
	// since is when a batch last needed more than half of size;
	// smallMax is the largest need since.
	since    time.Time
	smallMax int
}

// note records what a committed batch needed (its buffer's length and
// the block of room a direct write pads into) at now.
func (s *batchSizer) note(need int, now time.Time) {
	if need > s.size/2 {
		s.size = max(s.size, sizeFor(need))
		s.since, s.smallMax = now, 0
		return
	}
	s.smallMax = max(s.smallMax, need)
	if now.Sub(s.since) >= shrinkAfter {
		s.size = sizeFor(s.smallMax)
		s.since, s.smallMax = now, 0
	}
}

// sizeFor is the buffer size for batches that need up to need bytes.
func sizeFor(need int) int {
	return alignUp(min(max(need+need/4, minBuffer), maxKeptBuffer))
}

// want is what a buffer too small for its batch grows to (batch.grow).
func (s *batchSizer) want() int { return max(s.size, minBuffer) }

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
// The size stays: the next large batch grows its buffer to it at once.
func (l *signalLog) releaseIdle() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.free = nil
	if b := l.cur; b.records == 0 && cap(b.buf) > minBuffer {
		b.buf = nil
		b.reset(b.pad, b.grow)
	}
}

// holdsIdle says whether an idle log holds buffers worth letting go.
func (l *signalLog) holdsIdle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.free != nil || cap(l.cur.buf) > minBuffer
}
