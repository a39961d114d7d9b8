package disk

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/otlp-lite/otlp-lite/storage"
)

// Direct writes (SyncAlways, on Linux).
//
// With SyncAlways a segment is opened with O_DIRECT|O_DSYNC where the
// filesystem allows it: a group commit is one pwrite(2) that sends the
// batch's blocks to the disk from the batch buffer and returns once they
// are on stable storage. It replaces a write into the page cache (a copy
// and a page allocation per 4 KiB) and an fsync that then wrote those
// pages back and the inode with them: the store spends less than half the
// CPU per span, measured on ext4 (BenchmarkDurableIngest; BENCHMARKS.md,
// "Durable ingest").
//
// A direct write's memory, file offset and length are multiples of
// blockSize. The records of a batch are therefore laid out in the batch
// buffer at the offset they take in their block (batch.pad), the head of
// that block (the end of the previous batch, kept in signalLog.tail) is
// copied in front of them, and the last block is padded with zeros. The
// acknowledged records in the block rewritten are rewritten with the
// same bytes, as the page cache's write-back of a partial page does.
//
// Preallocation: ahead of the records, a segment is extended with zeros
// written (not fallocate(2), whose unwritten extents ext4 converts with a
// metadata write on every commit into them), preallocChunk at a time. A
// commit into written zeros changes no metadata (the size is unchanged),
// so its O_DSYNC needs no inode write: one flush of the disk's cache.
//
// The zeros are the log's end: a record's length is at least
// recordMetaSize, so a zero record header is never a record, and readers
// take a zero header in the segment being written for its end (see
// recordZero). A closed segment is cut at its last record (roll, Close);
// after a crash, recovery cuts the zeros as it cuts a torn tail, and
// takes a hole of zeros where records should be for the end too (a
// power loss in the middle of a commit, some of whose blocks landed:
// signalLog.recover; inside a record, in a compressed segment only). The
// blocks of one direct write may land in any order, so a reader of the
// segment being written takes a bad record there for a write in flight
// even when a whole record follows it (Reader.Next).
//
// Where O_DIRECT is refused (tmpfs on older kernels, a device whose
// blocks are larger than blockSize, other systems), the segment is
// written as with the other policies: write(2) and fsync(2). A direct
// write refused with EINVAL, at a segment's first write or later, is
// made so too, at the same offset, and so is the rest of the log.

// blockSize is the alignment of direct writes: 4 KiB, the page size and
// the physical block size of nearly every disk (512-byte logical blocks
// divide it). A device that needs more refuses a direct write with
// EINVAL, and the log falls back to buffered writes.
const blockSize = 4096

// preallocChunk is how far ahead of its records a directly written
// segment is filled with zeros, at most up to its maximum size: one
// metadata write (the size) per 4 MiB instead of one per commit, while
// what recovery, Stats and a reader meeting the tail read to find the end
// stays small. It is also the disk space a running log may hold beyond
// its records (cut when the segment closes).
const preallocChunk = 4 << 20

// zeroSource is the source of preallocation writes, written repeatedly
// (pwritev, twice per preallocChunk): one huge page (2 MiB), so that one
// system call preallocates a chunk. It is a read-only mapping of zeros
// where the system allows (direct_linux.go): the disk reads the kernel's
// (huge) zero page, and the process holds no memory for it.
var zeroSource = sync.OnceValue(func() []byte { return zeroPages(hugePage) })

// hugePage is the size of a transparent huge page on amd64 and arm64
// with 4 KiB pages (a PMD): the alignment and size of zeroSource.
const hugePage = 2 << 20

// alignedBytes returns n zero bytes whose address is a multiple of
// blockSize.
func alignedBytes(n int) []byte {
	b := make([]byte, n+blockSize)
	off := (blockSize - int(uintptr(unsafe.Pointer(&b[0]))%blockSize)) % blockSize
	return b[off : off+n : off+n]
}

// alignUp rounds n up to a multiple of blockSize.
func alignUp[T int | int64](n T) T { return (n + blockSize - 1) &^ (blockSize - 1) }

// commitDirect writes b at the end of the segment opened for direct
// writes: one pwrite of whole blocks, durable when it returns (O_DSYNC).
func (l *signalLog) commitDirect(b *batch) error {
	start := l.size
	head := int(start % blockSize)
	if b.pad != head {
		// Laid out for another offset (a roll or a failure came in
		// between, or the log's first batch): move the records to
		// where they belong, in place. The buffer keeps a block of
		// room past its records (batch.reserve) and head is less than
		// a block, so head+len and its last block fit.
		n := b.len()
		copy(b.buf[head:head+n], b.buf[b.pad:])
		b.buf, b.pad = b.buf[:head+n], head
	}
	buf := b.buf
	copy(buf[:head], l.tail[:head])
	end := len(buf)
	buf = buf[:alignUp(end)] // batch.reserve keeps a block of room
	clear(buf[end:])
	off := start - int64(head)
	if err := l.preallocate(off + int64(len(buf))); err != nil {
		if errors.Is(err, syscall.EINVAL) {
			return l.fallBack(err)
		}
		return l.failed(fmt.Errorf("%w: cannot preallocate %s: %v", storage.ErrUnavailable, l.f.Name(), err))
	}
	t0 := time.Now()
	err := writeDirectAt(l.f, l.asyncWriter(), buf, off)
	if l.observeSync != nil {
		l.observeSync(l.signal, time.Since(t0))
	}
	if errors.Is(err, syscall.EINVAL) {
		// Refused before any I/O (alignment, a filesystem that
		// takes the open but not the write), at the segment's first
		// write or later: the batch goes through the page cache, at
		// the same offset, after the acknowledged records.
		return l.fallBack(err)
	}
	if err != nil {
		return l.failed(fmt.Errorf("%w: cannot write to %s: %v", storage.ErrUnavailable, l.f.Name(), err))
	}
	l.size = start + int64(b.len())
	last := end &^ (blockSize - 1)
	copy(l.tail[:], buf[last:end])
	return nil
}

// aioRetryAfter is how long a log whose io_setup found the system's AIO
// contexts used up (EAGAIN: aio-max-nr, held by other logs and processes)
// commits with pwrite before it asks again: contexts come back as their
// holders close, and one failed system call a minute keeps asking off the
// commit path.
const aioRetryAfter = time.Minute

// newAIO sets up an AIO writer (newAIOWriter; tests replace it).
var newAIO = newAIOWriter

// asyncWriter returns the log's AIO writer (aio_linux.go), set up at its
// first direct commit, or nil where the system has none: the commit is
// then a pwrite. A system without AIO (no kernel support, a sandbox's
// refusal) is not asked again; one whose contexts are used up is, after
// aioRetryAfter.
func (l *signalLog) asyncWriter() *aioWriter {
	if l.aio != nil || l.noAIO {
		return l.aio
	}
	if !l.aioRetry.IsZero() && time.Now().Before(l.aioRetry) {
		return nil
	}
	w, err := newAIO()
	if err != nil {
		if errors.Is(err, syscall.EAGAIN) {
			if l.aioRetry.IsZero() {
				l.logger.Info("asynchronous I/O contexts used up; direct writes block a thread each until one is free", "signal", l.signal.String(), "err", err)
			}
			l.aioRetry = time.Now().Add(aioRetryAfter)
			return nil
		}
		l.noAIO = true
		l.logger.Info("no asynchronous I/O; direct writes block a thread each", "signal", l.signal.String(), "err", err)
		return nil
	}
	l.aio, l.aioRetry = w, time.Time{}
	return w
}

// preallocate extends the segment with zeros, durably, so that it holds
// at least to bytes: preallocChunk beyond what it holds, and at most to
// its maximum size unless to is beyond it. If the disk cannot take that
// much, it extends the segment to what the commit needs (to) alone: a
// filling disk refuses the write that does not fit, not the one that
// does.
func (l *signalLog) preallocate(to int64) error {
	if to <= l.alloc {
		return nil
	}
	target := max(to, min(l.alloc+preallocChunk, alignUp(l.maxSegmentSize)))
	err := l.fillZeros(target)
	if err != nil && target > to && l.alloc < to {
		err = l.fillZeros(to)
	}
	return err
}

// fillZeros writes zeros from l.alloc to target.
func (l *signalLog) fillZeros(target int64) error {
	zero := zeroSource()
	var iov [preallocChunk/hugePage + 1][]byte
	for off := l.alloc; off < target; {
		n := 0
		var size int64
		for n < len(iov) && off+size < target {
			iov[n] = zero[:min(int64(len(zero)), target-off-size)]
			size += int64(len(iov[n]))
			n++
		}
		if err := writevAt(l.f, iov[:n], off); err != nil {
			return err
		}
		off += size
		l.alloc = off
	}
	return nil
}

// trimTail cuts the zeros preallocated after the last record of a
// directly written segment that is being closed, so that a closed
// segment ends with its last record. If it fails, readers skip the
// zeros (see recordZero).
func (l *signalLog) trimTail() {
	if !l.direct || l.f == nil || l.alloc <= l.size {
		return
	}
	err := l.f.Truncate(l.size)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		l.logger.Warn("cannot cut the preallocated tail of a segment; readers skip it", "file", l.f.Name(), "offset", l.size, "err", err)
		return
	}
	l.alloc = l.size
}

// openDirect reopens the segment file f, whose header is written, for
// direct writes if the log may use them and the filesystem allows it;
// otherwise it returns f.
func (l *signalLog) openDirect(f *os.File) (*os.File, bool) {
	if l.sync != SyncAlways || directFlags == 0 || l.noDirect {
		return f, false
	}
	d, err := os.OpenFile(f.Name(), os.O_RDWR|directFlags, 0)
	if errors.Is(err, syscall.EINVAL) {
		l.noDirectAnyMore(err)
		return f, false
	}
	if err != nil {
		// Out of file descriptors, say: this segment is written
		// through the page cache, the next tries again.
		l.logger.Warn("cannot open a segment for direct writes; it is written through the page cache", "file", f.Name(), "err", err)
		return f, false
	}
	f.Close()
	return d, true
}

// noDirectAnyMore makes the log write through the page cache from now
// on: the filesystem or the disk refused a direct write.
func (l *signalLog) noDirectAnyMore(err error) {
	l.noDirect = true
	l.logger.Info("the filesystem refuses direct writes; segments are written through the page cache and fsynced", "signal", l.signal.String(), "err", err)
}

// errNoDirect says that commitDirect wrote nothing and the segment is
// now open for buffered writes: commit them so.
var errNoDirect = errors.New("direct writes refused")

// fallBack reopens the active segment for buffered writes after a direct
// write was refused. The zeros preallocated after its records are cut
// first: a segment written through the page cache ends at its last
// record (trimTail cuts only a directly written one's), and grows as
// readers of one expect.
func (l *signalLog) fallBack(cause error) error {
	l.trimTail()
	f, err := os.OpenFile(l.f.Name(), os.O_RDWR, 0)
	if err != nil {
		return l.failed(fmt.Errorf("%w: cannot reopen %s: %v", storage.ErrUnavailable, l.f.Name(), err))
	}
	l.f.Close()
	l.f, l.direct = f, false
	l.noDirectAnyMore(cause)
	return errNoDirect
}
