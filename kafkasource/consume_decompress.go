package kafkasource

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Decompression of fetched record batches, bounded twice.
//
// A compressed batch is decompressed whole, and every batch of a fetch
// response is decompressed before any of its records reaches Run. Whoever
// can write to a topic chooses what its batches decompress to: zstd turns
// a few kilobytes into gigabytes. franz-go bounds one batch (1 GiB by
// default, kgo.MaxDecompressBatchBytes) but not their sum: a 16 MiB fetch
// of 2 KiB batches that each decompress to just under the bound would
// hold thousands of times the bound. boundedDecompressor replaces
// franz-go's decompressor to bound both:
//
//   - one batch at maxBatch: a batch over it is refused with
//     kgo.ErrMaxDecompress, which stops its partition; Run skips the
//     batch (consume_skip.go);
//   - the decompressed bytes held at budget: past it, a batch is refused
//     with errDecompressBudget, which franz-go treats as the end of the
//     response (the batch is fetched again later; nothing is skipped), or,
//     for a response's first batch, as an error of the fetch, retried.
//     Run calls released with the records it has stored: their keys,
//     values and headers, a little less than the batches they came from
//     (record framing, records of aborted transactions), and drained once
//     it has stored every record fetched, which starts the count again.
//
// So the decompressed bytes held are at most about budget + maxBatch, plus
// as much again if a response was being decompressed when drained reset
// the count.
//
// A batch that does not decompress at all (its codec's data is corrupt:
// the batch's CRC held, so its producer wrote it so) is refused like one
// too large, with an error that wraps kgo.ErrMaxDecompress: franz-go
// otherwise keeps such an error on the partition and fetches the batch
// again for ever ("the client cannot progress"), so one corrupt batch,
// written by anyone who may produce to the topic, would stop its partition
// for good. Run skips it (consume_skip.go) and it is counted in
// otlplite_kafka_consume_corrupt_batches_total. Decompression is
// deterministic: fetching the batch again cannot help.
type boundedDecompressor struct {
	maxBatch  int
	budget    int64
	held      atomic.Int64
	throttled *metrics.Counter
	corrupt   *metrics.Counter

	zstdOnce sync.Once
	zstdDec  *zstd.Decoder
	zstdErr  error
}

// errDecompressBudget refuses a batch while the decompressed batches held
// reach the budget.
var errDecompressBudget = errors.New("the decompressed record batches held reach the consumer's budget; the batch is fetched again once the records before it are stored")

// xerialMagic begins snappy data framed as the Java client's
// SnappyOutputStream writes it: the magic, a version and a compatible
// version (4 bytes each), then blocks, each a big-endian length and a raw
// snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// errCorruptBatch refuses a batch whose compressed records do not
// decompress. It wraps kgo.ErrMaxDecompress so that franz-go reports the
// batch's offsets (kgo.ErrDecompressTooLarge) and Run skips it.
type errCorruptBatch struct{ err error }

func (e *errCorruptBatch) Error() string   { return e.err.Error() + " (the batch is skipped)" }
func (e *errCorruptBatch) Unwrap() []error { return []error{e.err, kgo.ErrMaxDecompress} }

func newBoundedDecompressor(maxBatch int, budget int64, throttled, corrupt *metrics.Counter) *boundedDecompressor {
	return &boundedDecompressor{maxBatch: maxBatch, budget: budget, throttled: throttled, corrupt: corrupt}
}

// Decompress implements kgo.Decompressor.
func (d *boundedDecompressor) Decompress(src []byte, codec kgo.CompressionCodecType) ([]byte, error) {
	if codec == kgo.CodecNone {
		return src, nil
	}
	if d.held.Load() >= d.budget {
		d.throttled.Inc()
		return nil, errDecompressBudget
	}
	out, err := d.decompress(src, codec)
	if err != nil {
		if !errors.Is(err, kgo.ErrMaxDecompress) {
			d.corrupt.Inc()
			err = &errCorruptBatch{err}
		}
		return nil, err
	}
	d.held.Add(int64(len(out)))
	return out, nil
}

// drained tells the decompressor that no record it decompressed is held
// any more: Run stored every record fetched and none is buffered.
func (d *boundedDecompressor) drained() { d.held.Store(0) }

// released tells the decompressor that recs are stored: what they hold of
// compressed batches is no longer held. The count never goes below zero
// (drained may have reset it meanwhile).
func (d *boundedDecompressor) released(recs []*kgo.Record) {
	var n int64
	for _, r := range recs {
		if r.Attrs.CompressionType() == 0 {
			continue
		}
		n += int64(len(r.Key) + len(r.Value))
		for _, h := range r.Headers {
			n += int64(len(h.Key) + len(h.Value))
		}
	}
	for {
		held := d.held.Load()
		if d.held.CompareAndSwap(held, max(held-n, 0)) {
			return
		}
	}
}

func (d *boundedDecompressor) tooLarge(codec string) error {
	return fmt.Errorf("%w: %s batch decompresses to more than %d bytes", kgo.ErrMaxDecompress, codec, d.maxBatch)
}

func (d *boundedDecompressor) decompress(src []byte, codec kgo.CompressionCodecType) ([]byte, error) {
	switch codec {
	case kgo.CodecGzip:
		r, _ := gzipReaders.Get().(*gzip.Reader)
		defer func() {
			if r != nil {
				gzipReaders.Put(r)
			}
		}()
		var err error
		if r == nil {
			r, err = gzip.NewReader(bytes.NewReader(src))
		} else {
			err = r.Reset(bytes.NewReader(src))
		}
		if err != nil {
			return nil, fmt.Errorf("cannot decompress gzip batch: %w", err)
		}
		return d.readAll(r, "gzip")
	case kgo.CodecLz4:
		r, _ := lz4Readers.Get().(*lz4.Reader)
		if r == nil {
			r = lz4.NewReader(nil)
		}
		defer lz4Readers.Put(r)
		r.Reset(bytes.NewReader(src))
		return d.readAll(r, "lz4")
	case kgo.CodecSnappy:
		if bytes.HasPrefix(src, xerialMagic) && len(src) >= 16 {
			return d.xerial(src[16:])
		}
		return d.snappyBlock(nil, src)
	case kgo.CodecZstd:
		d.zstdOnce.Do(func() {
			// MaxMemory refuses a frame declaring more than maxBatch
			// before allocating and stops one growing past it; the
			// window is bounded likewise.
			d.zstdDec, d.zstdErr = zstd.NewReader(nil, zstd.WithDecoderLowmem(true), zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxMemory(uint64(d.maxBatch)), zstd.WithDecoderMaxWindow(uint64(max(d.maxBatch, zstd.MinWindowSize))))
		})
		if d.zstdErr != nil {
			return nil, d.zstdErr
		}
		out, err := d.zstdDec.DecodeAll(src, nil)
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return nil, d.tooLarge("zstd")
		}
		if err != nil {
			return nil, fmt.Errorf("cannot decompress zstd batch: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown compression codec %d", codec)
}

// Readers and buffers are reused across batches, as franz-go's own
// decompressor does: a new lz4 reader allocates its block buffers, a gzip
// reader its window.
var (
	gzipReaders, lz4Readers sync.Pool
	readBuffers             sync.Pool // *bytes.Buffer
)

// maxPooledBuffer is the largest buffer kept for reuse: one a bomb grew to
// the batch bound must not stay in the pool.
const maxPooledBuffer = 4 << 20

// readAll reads r to its end, refusing more than maxBatch bytes, into a
// pooled buffer, and returns a copy of exactly the size read.
func (d *boundedDecompressor) readAll(r io.Reader, codec string) ([]byte, error) {
	buf, _ := readBuffers.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			readBuffers.Put(buf)
		}
	}()
	n, err := buf.ReadFrom(io.LimitReader(r, int64(d.maxBatch)+1))
	if err != nil {
		return nil, fmt.Errorf("cannot decompress %s batch: %w", codec, err)
	}
	if n > int64(d.maxBatch) {
		return nil, d.tooLarge(codec)
	}
	return slices.Clone(buf.Bytes()), nil
}

// maxSnappyRatio bounds what a snappy block decodes to per byte of the
// block: its densest element is a 3-byte copy of 64 bytes (google/snappy
// format_description.txt), so no block decodes to more than 64/3 times
// its length. A header that claims more is a lie, refused before
// allocating: otherwise an 11-byte batch claiming MaxBatchBytes would cost
// that much memory and its clearing for each such batch fetched.
const maxSnappyRatio = 22

// snappyBlock appends the decoded raw snappy block src to dst, checking
// the length the block declares, against the limit and against what src
// can hold, before allocating for it.
func (d *boundedDecompressor) snappyBlock(dst, src []byte) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return nil, fmt.Errorf("cannot decompress snappy batch: %w", err)
	}
	if len(dst)+n > d.maxBatch {
		return nil, d.tooLarge("snappy")
	}
	if n > maxSnappyRatio*len(src) {
		return nil, fmt.Errorf("cannot decompress snappy batch: a %d-byte block claims %d bytes, more than snappy can encode in it", len(src), n)
	}
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	if _, err := s2.Decode(dst[start:], src); err != nil {
		return nil, fmt.Errorf("cannot decompress snappy batch: %w", err)
	}
	return dst, nil
}

// xerial decodes the blocks of Java-framed snappy.
func (d *boundedDecompressor) xerial(src []byte) ([]byte, error) {
	var out []byte
	for len(src) > 0 {
		if len(src) < 4 {
			return nil, errors.New("cannot decompress snappy batch: truncated block length")
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return nil, errors.New("cannot decompress snappy batch: block runs past the batch")
		}
		var err error
		if out, err = d.snappyBlock(out, src[:n]); err != nil {
			return nil, err
		}
		src = src[n:]
	}
	return out, nil
}
