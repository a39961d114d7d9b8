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
// kept; after sizeWindow commits in a row that needed at most half of
// the buffers' size, the size follows them down and a buffer over twice
// that is not kept (load that falls gives its memory back); and a log
// that commits nothing for idleRelease lets both its buffers go.

// maxKeptBuffer bounds a batch buffer kept for the next batch: 32 MiB,
// a group commit of sixteen 2 MB requests, twice what ten unary calls
// of 2 MB in flight need. A batch larger than that has its buffer
// allocated for it and dropped after its commit; its write (tens of
// milliseconds at disk speed) dwarfs the allocation, while keeping it
// would hold two such buffers per signal beside the request budget.
const maxKeptBuffer = 32 << 20

// sizeWindow is how many commits in a row must need at most half of a
// log's buffer size before it shrinks: 64 commits are a few seconds of
// a busy log. A run that long without a large batch means the load
// fell, while a steady load whose batches vary (ten requests in flight
// make a batch of one, then of nine, or of ten) keeps its size: sized
// by a window's largest batch instead, the buffers of a real server
// shrank and grew again every few seconds (more allocated than before).
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

// batchSizer follows the size of the batch buffers a log needs: a
// quarter more than the largest batch since the load last fell (batches
// vary, and a buffer too small for its batch is grown with a copy,
// under the log's lock), at most maxKeptBuffer, at least minBuffer.
type batchSizer struct {
	size int
	// small counts the commits in a row that needed at most half of
	// size, smallMax the largest of them.
	small, smallMax int
}

// note records what a committed batch needed (its buffer's length and
// the block of room a direct write pads into).
func (s *batchSizer) note(need int) {
	switch {
	case need > s.size:
		s.size = sizeFor(need)
		s.small, s.smallMax = 0, 0
	case need <= s.size/2:
		s.small++
		s.smallMax = max(s.smallMax, need)
		if s.small == sizeWindow {
			s.size = sizeFor(s.smallMax)
			s.small, s.smallMax = 0, 0
		}
	default:
		s.small, s.smallMax = 0, 0
	}
}

// sizeFor is the buffer size for batches that need up to need bytes.
func sizeFor(need int) int {
	return alignUp(min(max(need+need/4, minBuffer), maxKeptBuffer))
}

// want is the capacity to give a new batch buffer.
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
