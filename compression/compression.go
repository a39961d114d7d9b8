// Package compression decompresses request bodies for both gRPC
// (grpc-encoding) and OTLP/HTTP (Content-Encoding), with pooled decoders and a
// hard limit on the decompressed size.
//
// It is its own package because the gRPC and the OTLP/HTTP paths share it and
// neither should import the other. The limit is enforced while decompressing:
// output is produced in bounded chunks into a reused buffer and decoding stops
// as soon as the limit is passed, so a decompression bomb costs at most the
// limit in memory, never the size it claims.
package compression

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/otlp-lite/otlp-lite/internal/quote"
)

// Codec names a supported compression format.
type Codec uint8

// The supported codecs.
const (
	Identity Codec = iota
	Gzip
	Zstd
	Snappy
	Deflate
	// LZ4 is the LZ4 frame format (lz4.go); decompression only.
	LZ4
)

// String returns the codec's canonical encoding name, as it appears in
// grpc-encoding and Content-Encoding headers.
func (c Codec) String() string {
	switch c {
	case Identity:
		return "identity"
	case Gzip:
		return "gzip"
	case Zstd:
		return "zstd"
	case Snappy:
		return "snappy"
	case Deflate:
		return "deflate"
	case LZ4:
		return "lz4"
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

// Supported is the comma-separated list of codecs, for grpc-accept-encoding.
const Supported = "identity,gzip,zstd,snappy,deflate"

// ErrUnsupported is returned by Parse for an unknown encoding name.
var ErrUnsupported = errors.New("unsupported compression")

// ErrTooLarge is returned by Decompress when the decompressed data would
// exceed the limit.
var ErrTooLarge = errors.New("decompressed data exceeds the size limit")

// Parse maps an encoding name (case-insensitive, surrounding spaces ignored)
// to its Codec. The empty string means Identity. "x-gzip" is accepted for gzip
// (RFC 9110 section 8.4.1.3), "zlib" for deflate, and "x-snappy-framed" for
// snappy, as some OTLP/HTTP clients send those.
func Parse(name string) (Codec, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "identity":
		return Identity, nil
	case "gzip", "x-gzip":
		return Gzip, nil
	case "zstd":
		return Zstd, nil
	case "snappy", "x-snappy-framed":
		return Snappy, nil
	case "deflate", "zlib":
		return Deflate, nil
	}
	return Identity, fmt.Errorf("%w %s (supported: %s)", ErrUnsupported, quote.String(name), Supported)
}

// ParseContentCoding is Parse for an OTLP/HTTP Content-Encoding: the
// gRPC codecs and lz4, which the Collector's confighttp accepts (its
// configgrpc does not, nor does grpc-go, so grpc-encoding lz4 stays
// unsupported).
func ParseContentCoding(name string) (Codec, error) {
	if strings.EqualFold(strings.TrimSpace(name), "lz4") {
		return LZ4, nil
	}
	c, err := Parse(name)
	if err != nil {
		err = fmt.Errorf("%w %s (supported: %s,lz4)", ErrUnsupported, quote.String(name), Supported)
	}
	return c, err
}

// Decompress appends the decompression of src to dst and returns the result.
// It returns ErrTooLarge, without growing dst past len(dst)+limit+chunk, when
// the output would be longer than limit bytes. For Identity it only checks the
// limit and appends src.
//
// Snappy accepts both the framed format (what gRPC snappy compressors and
// most OTLP clients send) and the raw block format; deflate accepts zlib
// (RFC 1950, what HTTP calls deflate) and, if the zlib header is absent, raw
// deflate (RFC 1951), as browsers do; lz4 is the LZ4 frame format, as the
// Collector's confighttp sends it.
func Decompress(dst []byte, c Codec, src []byte, limit int) ([]byte, error) {
	return DecompressCharged(dst, c, src, limit, nil)
}

// DecompressCharged is Decompress with a charge callback: it is called with
// the number of bytes of output each time output is produced, before more is
// produced, and an error it returns stops decompression and is returned. The
// receiver uses it to count decompressed bytes against its memory budget as
// they appear, so a bomb is stopped by the budget, not only by the per-request
// limit.
//
// No codec allocates what a header claims: the output grows with what
// decoding produces, and is charged as it does.
func DecompressCharged(dst []byte, c Codec, src []byte, limit int, charge func(n int) error) ([]byte, error) {
	switch c {
	case Identity:
		if len(src) > limit {
			return dst, ErrTooLarge
		}
		if charge != nil {
			if err := charge(len(src)); err != nil {
				return dst, err
			}
		}
		return append(dst, src...), nil
	case Gzip:
		return decompressGzip(dst, src, limit, charge)
	case Zstd:
		return decompressZstd(dst, src, limit, charge)
	case Snappy:
		return decompressSnappy(dst, src, limit, charge)
	case Deflate:
		return decompressDeflate(dst, src, limit, charge)
	case LZ4:
		return decompressLZ4(dst, src, limit, charge)
	}
	return dst, fmt.Errorf("%w: %s", ErrUnsupported, c)
}

// readChunk is how much output is produced per read. Keeping it small bounds
// the overshoot past the limit; 32 KiB matches the decoders' own window.
const readChunk = 32 << 10

// firstRead is the first allocation of an empty buffer.
const firstRead = 4 << 10

// ReadAll appends everything r yields to dst, failing with ErrTooLarge once
// more than limit bytes have arrived; the buffer grows with what arrives,
// never with what a header claims. charge, if not nil, is called with the
// size of each read before the next one; an error it returns stops the read
// and is returned (wrapped, for errors.Is/As). The decompressors use it, and
// so does OTLP/HTTP for request bodies.
func ReadAll(dst []byte, r io.Reader, limit int, charge func(int) error) ([]byte, error) {
	return readAllSized(dst, r, limit, 0, charge)
}

// ReadAllSized is ReadAll for a body that declares its size (OTLP/HTTP's
// Content-Length; 0 or less: unknown). The buffer grows as ReadAll's, with
// what arrives, but not past the declared size while the body keeps to it:
// a body of that size leaves a buffer of that size, where ReadAll's
// doubling leaves up to twice it (a 1 MiB body, a 2 MiB buffer, which a
// pool then keeps). The claim bounds the allocation and never raises it: a
// body that claims more than it sends costs what ReadAll's would.
func ReadAllSized(dst []byte, r io.Reader, limit, size int, charge func(int) error) ([]byte, error) {
	return readAllSized(dst, r, limit, size, charge)
}

// readAllLimited appends r's output to dst, failing with ErrTooLarge once more
// than limit bytes have been produced.
func readAllLimited(dst []byte, r io.Reader, limit int, charge func(int) error) ([]byte, error) {
	return readAllSized(dst, r, limit, 0, charge)
}

// readAllSized is readAllLimited for a reader that declares size bytes (0
// or less: unknown).
func readAllSized(dst []byte, r io.Reader, limit, size int, charge func(int) error) ([]byte, error) {
	start := len(dst)
	for {
		if len(dst)-start > limit {
			return dst[:start], ErrTooLarge
		}
		got := len(dst) - start
		sized := size > 0 && got < size // the declared size is still ahead
		atSize := size > 0 && got == size
		if atSize && cap(dst) == len(dst) {
			// The declared size arrived into a buffer of that size: a
			// byte read aside tells the end from a longer body, without
			// growing the buffer for an EOF.
			var probe [1]byte
			n, err := r.Read(probe[:])
			if n > 0 {
				dst = append(dst, probe[0])
				if charge != nil {
					if cerr := charge(n); cerr != nil {
						return dst[:start], chargeError{cerr}
					}
				}
			}
			switch {
			case err == io.EOF && n == 0:
				return dst, nil
			case err != nil && err != io.EOF:
				return dst[:start], err
			}
			continue // a longer body: read on as ReadAll does
		}
		// At the declared size with room left, the next read is into that
		// room: it finds the end, with no growth for it.
		if cap(dst)-len(dst) < readChunk/2 && !(sized && cap(dst) >= start+size) && !atSize {
			// Grow geometrically but never beyond what the limit allows
			// plus one chunk, so a bomb cannot make us reserve more. The
			// first steps follow what arrived (from firstRead up), so a
			// reader that sends nothing, as a client lying about its
			// Content-Length, makes us allocate almost nothing.
			step := readChunk
			if got < readChunk {
				step = max(got, firstRead)
			}
			want := max(cap(dst)*2, len(dst)+step)
			if hard := start + limit + readChunk; want > hard {
				want = max(hard, len(dst)+readChunk/2)
			}
			if sized {
				want = min(want, start+size) // more than len(dst): got < size
			}
			nb := make([]byte, len(dst), want)
			copy(nb, dst)
			dst = nb
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if n > 0 && charge != nil {
			if cerr := charge(n); cerr != nil {
				return dst[:start], chargeError{cerr}
			}
		}
		if err == io.EOF {
			if len(dst)-start > limit {
				return dst[:start], ErrTooLarge
			}
			return dst, nil
		}
		if err != nil {
			return dst[:start], err
		}
	}
}

var bytesReaderPool = sync.Pool{New: func() any { return new(bytes.Reader) }}

func getBytesReader(src []byte) *bytes.Reader {
	br := bytesReaderPool.Get().(*bytes.Reader)
	br.Reset(src)
	return br
}

func putBytesReader(br *bytes.Reader) {
	br.Reset(nil)
	bytesReaderPool.Put(br)
}

var gzipPool sync.Pool

func decompressGzip(dst, src []byte, limit int, charge func(int) error) ([]byte, error) {
	br := getBytesReader(src)
	defer putBytesReader(br)
	if err := gzipExtraFits(src); err != nil {
		return dst, err
	}
	zr, _ := gzipPool.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(br)
	} else {
		err = zr.Reset(br)
	}
	if err != nil {
		return dst, fmt.Errorf("cannot read gzip header: %w", err)
	}
	// Member by member (RFC 1952 section 2.2: a gzip file is a series of
	// members), so that each member's header is checked against what
	// arrived before the reader allocates what it claims (gzipExtraFits).
	start := len(dst)
	for {
		zr.Multistream(false)
		dst, err = readAllLimited(dst, zr, limit-(len(dst)-start), charge)
		if err != nil || br.Len() == 0 {
			break
		}
		if err = gzipExtraFits(src[len(src)-br.Len():]); err != nil {
			break
		}
		if err = zr.Reset(br); err != nil {
			err = fmt.Errorf("cannot read gzip header: %w", err)
			break
		}
	}
	gzipPool.Put(zr)
	if err != nil {
		if err != ErrTooLarge && !isChargeErr(err, charge) && !errors.Is(err, errGzipExtra) {
			err = fmt.Errorf("cannot decompress gzip: %w", err)
		}
		return dst[:start], err
	}
	return dst, nil
}

// errGzipExtra is a gzip member whose FEXTRA field is longer than the
// bytes that follow its length.
var errGzipExtra = errors.New("cannot read gzip header: extra field longer than the data")

// gzipExtraFits checks the gzip member header at the start of b: an extra
// field (FEXTRA, RFC 1952 section 2.3.1.1) must fit in b. The reader
// allocates the length the header claims, up to 64 KiB, before reading
// it: 13 bytes cost a 64 KiB allocation, 76 times a small request's CPU
// per wire byte. Anything else about the header is the reader's to check.
func gzipExtraFits(b []byte) error {
	const flagExtra = 1 << 2
	if len(b) < 10 || b[3]&flagExtra == 0 {
		return nil
	}
	if len(b) < 12 || 12+(int(b[10])|int(b[11])<<8) > len(b) {
		return errGzipExtra
	}
	return nil
}

var zstdPool sync.Pool

func decompressZstd(dst, src []byte, limit int, charge func(int) error) ([]byte, error) {
	// The decoder's history is sized by what the frame headers declare:
	// held for the request, so charged for it (zstdHistoryBytes).
	hist, err := zstdHistoryBytes(src)
	if err != nil {
		return dst, fmt.Errorf("cannot decompress zstd: %w", err)
	}
	if charge != nil {
		if err := charge(hist); err != nil {
			return dst, chargeError{err}
		}
	}
	br := getBytesReader(src)
	defer putBytesReader(br)
	zr, _ := zstdPool.Get().(*zstd.Decoder)
	if zr == nil {
		// Concurrency 1 decodes synchronously in the calling goroutine: no
		// background goroutines per pooled decoder. The window limit stops
		// a frame from demanding a huge history buffer (zstd's default max
		// is 64 MiB; 8 MiB is what zstd -19 uses and what other
		// implementations accept by default, RFC 8878 section 3.1.1.1.2).
		zr, err = zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderLowmem(true))
	} else {
		err = zr.Reset(br)
	}
	if err != nil {
		return dst, fmt.Errorf("cannot start zstd decoder: %w", err)
	}
	dst, err = readAllLimited(dst, zr, limit, charge)
	// Drop the reference to src before pooling.
	_ = zr.Reset(nil)
	zstdPool.Put(zr)
	if err != nil && err != ErrTooLarge && !isChargeErr(err, charge) {
		err = fmt.Errorf("cannot decompress zstd: %w", err)
	}
	return dst, err
}

// snappyFramedMagic starts every snappy framed stream: the stream identifier
// chunk of the framing format ("framing_format.txt" in google/snappy).
var snappyFramedMagic = []byte("\xff\x06\x00\x00sNaPpY")

var snappyPool sync.Pool

func decompressSnappy(dst, src []byte, limit int, charge func(int) error) ([]byte, error) {
	if !bytes.HasPrefix(src, snappyFramedMagic) {
		// Block format. Its header claims the decoded length, which is
		// not trusted: an 11-byte block claiming 60 MiB cost a 60 MiB
		// allocation (35-150x the CPU of one claiming 100 B). The
		// block's elements are walked first (snappyBlockLen, a few
		// instructions per element, no output), and the output is
		// allocated and charged only if they spell the length claimed.
		n, err := snappyBlockLen(src, limit)
		if err != nil {
			if err == ErrTooLarge {
				return dst, err
			}
			return dst, fmt.Errorf("cannot decompress snappy: %w", err)
		}
		if charge != nil {
			if err := charge(n); err != nil {
				return dst, err
			}
		}
		start := len(dst)
		dst = append(dst, make([]byte, n)...)
		out, err := s2.Decode(dst[start:], src)
		if err != nil {
			return dst[:start], fmt.Errorf("cannot decompress snappy: %w", err)
		}
		return dst[:start+len(out)], nil
	}
	br := getBytesReader(src)
	defer putBytesReader(br)
	sr, _ := snappyPool.Get().(*s2.Reader)
	if sr == nil {
		sr = s2.NewReader(br, s2.ReaderMaxBlockSize(64<<10))
	} else {
		sr.Reset(br)
	}
	dst, err := readAllLimited(dst, sr, limit, charge)
	sr.Reset(nil)
	snappyPool.Put(sr)
	if err != nil && err != ErrTooLarge && !isChargeErr(err, charge) {
		err = fmt.Errorf("cannot decompress snappy: %w", err)
	}
	return dst, err
}

var zlibPool, flatePool sync.Pool

// isZlibHeader reports whether b starts with a valid RFC 1950 header:
// compression method 8 and a header checksum divisible by 31.
func isZlibHeader(b []byte) bool {
	return len(b) >= 2 && b[0]&0x0f == 8 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0
}

func decompressDeflate(dst, src []byte, limit int, charge func(int) error) ([]byte, error) {
	br := getBytesReader(src)
	defer putBytesReader(br)
	var r io.Reader
	if isZlibHeader(src) {
		zr, _ := zlibPool.Get().(io.ReadCloser)
		var err error
		if zr == nil {
			zr, err = zlib.NewReader(br)
		} else {
			err = zr.(zlib.Resetter).Reset(br, nil)
		}
		if err != nil {
			return dst, fmt.Errorf("cannot read zlib header: %w", err)
		}
		defer zlibPool.Put(zr)
		r = zr
	} else {
		fr, _ := flatePool.Get().(io.ReadCloser)
		if fr == nil {
			fr = flate.NewReader(br)
		} else {
			_ = fr.(flate.Resetter).Reset(br, nil)
		}
		defer flatePool.Put(fr)
		r = fr
	}
	dst, err := readAllLimited(dst, r, limit, charge)
	if err != nil && err != ErrTooLarge && !isChargeErr(err, charge) {
		err = fmt.Errorf("cannot decompress deflate: %w", err)
	}
	return dst, err
}

// chargeError marks errors returned by a charge callback so they pass
// through unwrapped.
type chargeError struct{ err error }

func (e chargeError) Error() string { return e.err.Error() }
func (e chargeError) Unwrap() error { return e.err }

func isChargeErr(err error, charge func(int) error) bool {
	if charge == nil {
		return false
	}
	var ce chargeError
	return errors.As(err, &ce)
}
