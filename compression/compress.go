package compression

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

var (
	gzipWriters sync.Pool
	zlibWriters sync.Pool
	zstdEncoder *zstd.Encoder
	zstdOnce    sync.Once
)

// Compress appends the compression of src with c to dst. It is the client
// side of Decompress: snappy is written in the framed format, deflate as zlib
// (RFC 1950), gzip and zstd at their default levels.
func Compress(dst []byte, c Codec, src []byte) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	switch c {
	case Identity:
		return append(dst, src...), nil
	case Gzip:
		zw, _ := gzipWriters.Get().(*gzip.Writer)
		if zw == nil {
			zw = gzip.NewWriter(buf)
		} else {
			zw.Reset(buf)
		}
		if _, err := zw.Write(src); err != nil {
			return dst, fmt.Errorf("cannot gzip: %w", err)
		}
		if err := zw.Close(); err != nil {
			return dst, fmt.Errorf("cannot gzip: %w", err)
		}
		zw.Reset(nil)
		gzipWriters.Put(zw)
	case Zstd:
		zstdOnce.Do(func() {
			zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		})
		return zstdEncoder.EncodeAll(src, dst), nil
	case Snappy:
		sw := s2.NewWriter(buf, s2.WriterSnappyCompat(), s2.WriterConcurrency(1))
		if _, err := sw.Write(src); err != nil {
			return dst, fmt.Errorf("cannot snappy-compress: %w", err)
		}
		if err := sw.Close(); err != nil {
			return dst, fmt.Errorf("cannot snappy-compress: %w", err)
		}
	case Deflate:
		zw, _ := zlibWriters.Get().(*zlib.Writer)
		if zw == nil {
			zw = zlib.NewWriter(buf)
		} else {
			zw.Reset(buf)
		}
		if _, err := zw.Write(src); err != nil {
			return dst, fmt.Errorf("cannot deflate: %w", err)
		}
		if err := zw.Close(); err != nil {
			return dst, fmt.Errorf("cannot deflate: %w", err)
		}
		zw.Reset(nil)
		zlibWriters.Put(zw)
	default:
		return dst, fmt.Errorf("%w: %s", ErrUnsupported, c)
	}
	return buf.Bytes(), nil
}
