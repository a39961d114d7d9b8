package kafkaconn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrBatchTooLarge is wrapped by BatchDecompressor's refusal of a batch
// whose records decompress to more than its limit.
var ErrBatchTooLarge = errors.New("record batch too large")

// BatchDecompressor decompresses the records of Kafka record batches, each
// to at most a limit: whoever can write to a topic chooses what its batches
// decompress to (zstd turns a few kilobytes into gigabytes), so every codec
// stops at the limit, and what a header claims (zstd's frame size, snappy's
// length) is checked before anything is allocated for it. The Kafka source
// (kafkasource, as franz-go's decompressor) and the Kafka sink's read of its
// keys at start (storage/kafka) both use it. It is safe for concurrent use.
type BatchDecompressor struct {
	limit int

	zstdOnce sync.Once
	zstdDec  *zstd.Decoder
	zstdErr  error
}

// NewBatchDecompressor returns a decompressor refusing batches that
// decompress to more than limit bytes.
func NewBatchDecompressor(limit int) *BatchDecompressor {
	return &BatchDecompressor{limit: limit}
}

// Limit returns the most a batch may decompress to.
func (d *BatchDecompressor) Limit() int { return d.limit }

// Close releases the zstd decoder.
func (d *BatchDecompressor) Close() {
	if d.zstdDec != nil {
		d.zstdDec.Close()
	}
}

// Append appends to dst the records src of a batch compressed with codec
// (gzip, snappy raw or in the Java client's framing, lz4, zstd) and returns
// the result. With dst nil the result is a slice of exactly the records'
// size that the caller owns (the Kafka source's records keep it); otherwise
// dst is grown as needed, to be reused. An error wraps ErrBatchTooLarge
// when the records are more than the limit, and says why otherwise (the
// codec's data is corrupt). A batch of no codec is the caller's.
func (d *BatchDecompressor) Append(dst, src []byte, codec kgo.CompressionCodecType) ([]byte, error) {
	switch codec {
	case kgo.CodecGzip:
		r, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if r == nil {
			r, err = gzip.NewReader(bytes.NewReader(src))
		} else {
			err = r.Reset(bytes.NewReader(src))
		}
		if err != nil {
			return nil, fmt.Errorf("cannot decompress gzip batch: %w", err)
		}
		defer gzipReaders.Put(r)
		return d.readAll(dst, r, "gzip")
	case kgo.CodecLz4:
		r, _ := lz4Readers.Get().(*lz4.Reader)
		if r == nil {
			r = lz4.NewReader(nil)
		}
		defer lz4Readers.Put(r)
		r.Reset(bytes.NewReader(src))
		return d.readAll(dst, r, "lz4")
	case kgo.CodecSnappy:
		if bytes.HasPrefix(src, xerialMagic) && len(src) >= 16 {
			return d.xerial(dst, src[16:])
		}
		return d.snappyBlock(dst, src)
	case kgo.CodecZstd:
		d.zstdOnce.Do(func() {
			// MaxMemory refuses a frame declaring more than the limit
			// before allocating and stops one growing past it; the
			// window is bounded likewise.
			d.zstdDec, d.zstdErr = zstd.NewReader(nil, zstd.WithDecoderLowmem(true), zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxMemory(uint64(d.limit)), zstd.WithDecoderMaxWindow(uint64(max(d.limit, zstd.MinWindowSize))))
		})
		if d.zstdErr != nil {
			return nil, d.zstdErr
		}
		out, err := d.zstdDec.DecodeAll(src, dst)
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) || len(out)-len(dst) > d.limit {
			return nil, d.tooLarge("zstd")
		}
		if err != nil {
			return nil, fmt.Errorf("cannot decompress zstd batch: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown compression codec %d", codec)
}

func (d *BatchDecompressor) tooLarge(codec string) error {
	return fmt.Errorf("%w: %s batch decompresses to more than %d bytes", ErrBatchTooLarge, codec, d.limit)
}

// xerialMagic begins snappy data framed as the Java client's
// SnappyOutputStream writes it: the magic, a version and a compatible
// version (4 bytes each), then blocks, each a big-endian length and a raw
// snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

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

// readAll appends r's bytes to dst, refusing more than the limit; with dst
// nil, into a pooled buffer, returning a copy of exactly the size read.
func (d *BatchDecompressor) readAll(dst []byte, r io.Reader, codec string) ([]byte, error) {
	var buf *bytes.Buffer
	if dst == nil {
		buf, _ = readBuffers.Get().(*bytes.Buffer)
		if buf == nil {
			buf = new(bytes.Buffer)
		}
		buf.Reset()
		defer func() {
			if buf.Cap() <= maxPooledBuffer {
				readBuffers.Put(buf)
			}
		}()
	} else {
		buf = bytes.NewBuffer(dst)
	}
	n, err := buf.ReadFrom(io.LimitReader(r, int64(d.limit)+1))
	if err != nil {
		return nil, fmt.Errorf("cannot decompress %s batch: %w", codec, err)
	}
	if n > int64(d.limit) {
		return nil, d.tooLarge(codec)
	}
	if dst == nil {
		return slices.Clone(buf.Bytes()), nil
	}
	return buf.Bytes(), nil
}

// maxSnappyRatio bounds what a snappy block decodes to per byte of the
// block: its densest element is a 3-byte copy of 64 bytes (google/snappy
// format_description.txt), so no block decodes to more than 64/3 times
// its length. A header that claims more is a lie, refused before
// allocating: otherwise an 11-byte batch claiming the limit would cost
// that much memory and its clearing for each such batch fetched.
const maxSnappyRatio = 22

// snappyBlock appends the decoded raw snappy block src to dst, checking
// the length the block declares, against the limit and against what src
// can hold, before allocating for it.
func (d *BatchDecompressor) snappyBlock(dst, src []byte) ([]byte, error) {
	return d.snappyBlockFrom(dst, len(dst), src)
}

// snappyBlockFrom is snappyBlock for a batch whose records begin at
// dst[start:] (the limit is the batch's).
func (d *BatchDecompressor) snappyBlockFrom(dst []byte, start int, src []byte) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return nil, fmt.Errorf("cannot decompress snappy batch: %w", err)
	}
	if len(dst)-start+n > d.limit {
		return nil, d.tooLarge("snappy")
	}
	if n > maxSnappyRatio*len(src) {
		return nil, fmt.Errorf("cannot decompress snappy batch: a %d-byte block claims %d bytes, more than snappy can encode in it", len(src), n)
	}
	at := len(dst)
	dst = slices.Grow(dst, n)[:at+n]
	if _, err := s2.Decode(dst[at:], src); err != nil {
		return nil, fmt.Errorf("cannot decompress snappy batch: %w", err)
	}
	return dst, nil
}

// xerial appends the decoded blocks of Java-framed snappy to dst.
func (d *BatchDecompressor) xerial(dst, src []byte) ([]byte, error) {
	start := len(dst)
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
		if dst, err = d.snappyBlockFrom(dst, start, src[:n]); err != nil {
			return nil, err
		}
		src = src[n:]
	}
	return dst, nil
}
