package stefreceiver

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/splunk/stef/go/pkg"

	"github.com/otlp-lite/otlp-lite/ingest"
)

// MaxZstdWindow is the largest zstd window a STEF stream's frames may
// declare: the STEF writer's (pkg.FrameEncoder's zstd.NewWriter at its
// default level, 8 MiB). A larger one is refused before any of it is
// allocated, so a zstd stream holds at most StateCostZstd.
const MaxZstdWindow = 8 << 20

// unzstd is the byte stream the STEF reader reads: the client's STEF
// stream with its zstd frames decompressed here, by a decoder whose
// window is bounded (MaxZstdWindow), rather than by the library's, which
// allocates whatever window a frame declares (pkg.FrameDecoder.Init, v0.1.1).
//
// The fixed header is read and checked with the library's own parser
// (pkg.BaseReader.ReadFixedHeader) and passed on saying CompressionNone;
// each frame (flags byte, uvarint uncompressed size, uvarint compressed
// size, zstd data: pkg.FrameEncoder.CloseFrame) is passed on as an
// uncompressed frame (flags byte, uvarint uncompressed size, content), its
// content decoded as the reader reads it, so nothing but the decoder's
// state is held. As in the library, one zstd frame spans the STEF frames
// until one is flagged RestartCompression. A frame whose zstd data declares
// a window above the bound, decodes to fewer or more bytes than the frame
// declares, or is not zstd, ends the stream (errBadFrame). A stream that is
// not compressed is passed on as it is, its frames' headers read on the
// way (onFrame).
type unzstd struct {
	src *bufio.Reader
	// compressed: the stream's header says zstd.
	compressed bool
	hdrDone    bool
	// out is what is to be passed on before anything else: the header,
	// or a frame's own header.
	out   []byte
	frame [1 + binary.MaxVarintLen64]byte
	dec   *zstd.Decoder
	// decoders is where the decoder comes from and goes back to (a
	// Receiver's spares); nil: made for this stream alone.
	decoders *ingest.Spares[*zstd.Decoder]
	in       frameInput
	left     uint64 // decoded bytes of the current frame still to pass on
	// fresh: none of the current frame's content was passed on yet;
	// csize is its zstd data's size, prev the previous frame's declared
	// size.
	fresh            bool
	csize, prev, cur uint64
	frames           int
	err              error
	// onFrame, when set, is told each frame's declared uncompressed
	// size before the frame is passed on (and before the reader reads
	// it, growing its buffers to it); an error it returns ends the
	// stream.
	onFrame func(size uint64) error
}

// frameInput gives the decoder one STEF frame's zstd data and no more.
type frameInput struct {
	src *bufio.Reader
	n   int64
}

func (r *frameInput) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	n, err := r.src.Read(p)
	r.n -= int64(n)
	return n, err
}

// errBadFrame is a STEF frame this reader refuses; its message says why.
type errBadFrame struct{ msg string }

func (e *errBadFrame) Error() string { return e.msg }

func badFrame(format string, args ...any) error {
	return &errBadFrame{fmt.Sprintf(format, args...)}
}

func newUnzstd(src io.Reader) *unzstd {
	u := &unzstd{src: bufio.NewReader(src)}
	u.in.src = u.src
	return u
}

// Read implements io.Reader.
func (u *unzstd) Read(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	if !u.hdrDone {
		if err := u.header(); err != nil {
			u.err = err
			return 0, err
		}
		u.hdrDone = true
	}
	for {
		if len(u.out) > 0 {
			n := copy(p, u.out)
			u.out = u.out[n:]
			return n, nil
		}
		if u.left > 0 {
			if !u.compressed {
				return u.plain(p)
			}
			return u.content(p)
		}
		if err := u.nextFrame(); err != nil {
			u.err = err
			return 0, err
		}
	}
}

// buffered reports whether u holds input not yet passed on: bytes read
// from its source, or a frame's header or content still to pass on. It
// does not read.
func (u *unzstd) buffered() bool {
	return len(u.out) > 0 || u.left > 0 || u.src.Buffered() > 0
}

// header reads the fixed header and queues it, saying CompressionNone.
func (u *unzstd) header() error {
	hdr := make([]byte, len(pkg.HdrSignature))
	if _, err := io.ReadFull(u.src, hdr); err != nil {
		return err // io.EOF: the stream ended before it began
	}
	size, err := binary.ReadUvarint(u.src)
	if err != nil {
		return eofIsUnexpected(err)
	}
	if size < 2 || size > pkg.FixedHdrContentSizeLimit {
		return pkg.ErrInvalidHeader
	}
	hdr = binary.AppendUvarint(hdr, size)
	start := len(hdr)
	hdr = append(hdr, make([]byte, size)...)
	if _, err := io.ReadFull(u.src, hdr[start:]); err != nil {
		return eofIsUnexpected(err)
	}
	// The library's own parser checks it.
	br := pkg.BaseReader{Source: bufio.NewReader(bytes.NewReader(hdr))}
	if err := br.ReadFixedHeader(); err != nil {
		return err
	}
	if br.FixedHeader.Compression == pkg.CompressionZstd {
		u.compressed = true
		hdr[start+1] &^= pkg.HdrFlagsCompressionMethod
		if u.dec, err = u.getDecoder(); err != nil {
			return err
		}
	}
	u.out = hdr
	return nil
}

// nextFrame reads a compressed frame's header, queues the uncompressed
// frame's, and points the decoder at its zstd data.
func (u *unzstd) nextFrame() error {
	b, err := u.src.ReadByte()
	if err != nil {
		return err // io.EOF between frames: the stream's end
	}
	flags := pkg.FrameFlags(b)
	if flags|pkg.FrameFlagsMask != pkg.FrameFlagsMask {
		return badFrame("invalid STEF frame flags %#x", b)
	}
	usize, err := binary.ReadUvarint(u.src)
	if err != nil {
		return eofIsUnexpected(err)
	}
	if !u.compressed {
		if usize > pkg.FrameSizeLimit {
			return pkg.ErrFrameSizeLimit
		}
		if err := u.frameStarts(usize); err != nil {
			return err
		}
		u.left = usize
		u.out = binary.AppendUvarint(append(u.frame[:0], b), usize)
		return nil
	}
	csize, err := binary.ReadUvarint(u.src)
	if err != nil {
		return eofIsUnexpected(err)
	}
	if usize > pkg.FrameSizeLimit || csize > pkg.FrameSizeLimit {
		return pkg.ErrFrameSizeLimit
	}
	if err := u.frameStarts(usize); err != nil {
		return err
	}
	u.in.n = int64(csize)
	if u.frames == 1 || flags&pkg.RestartCompression != 0 {
		// Reset reads the zstd frame's header: a window above the bound
		// is refused here, before it is allocated.
		if err := u.dec.Reset(&u.in); err != nil {
			return u.zstdError(err)
		}
	}
	u.left, u.csize, u.fresh = usize, csize, true
	if usize == 0 && u.in.n > 0 {
		return badFrame("STEF frame %d: its zstd data decodes to more than its declared 0 bytes", u.frames)
	}
	u.prev, u.cur = u.cur, usize
	u.out = binary.AppendUvarint(append(u.frame[:0], b), usize)
	return nil
}

// frameStarts tells onFrame of a frame, then counts it (u.frames is the
// previous frame's number while onFrame runs).
func (u *unzstd) frameStarts(usize uint64) error {
	if u.onFrame != nil {
		if err := u.onFrame(usize); err != nil {
			return err
		}
	}
	u.frames++
	return nil
}

// plain passes on the current frame's content, not compressed.
func (u *unzstd) plain(p []byte) (int, error) {
	if uint64(len(p)) > u.left {
		p = p[:u.left]
	}
	n, err := u.src.Read(p)
	u.left -= uint64(n)
	return n, err
}

// content passes on the current frame's decoded content.
func (u *unzstd) content(p []byte) (int, error) {
	if uint64(len(p)) > u.left {
		p = p[:u.left]
	}
	n, err := u.dec.Read(p)
	if u.fresh && n > 0 && u.in.n == int64(u.csize) {
		// The writer flushes a block at each frame's end, and a block's
		// output comes only once its input is read: output before any of
		// this frame's input is what the previous frame's data decoded
		// to beyond its declared size.
		u.err = badFrame("STEF frame %d: its zstd data decodes to more than its declared %d bytes", u.frames-1, u.prev)
		return 0, u.err
	}
	u.fresh = false
	u.left -= uint64(n)
	if err != nil && u.left > 0 {
		u.err = u.zstdError(err)
		return n, u.err
	}
	if u.left == 0 && u.in.n > 0 {
		u.err = badFrame("STEF frame %d: its zstd data decodes to more than its declared size, or has %d bytes past it", u.frames, u.in.n)
		return n, u.err
	}
	return n, nil
}

func (u *unzstd) zstdError(err error) error {
	switch {
	case errors.Is(err, zstd.ErrWindowSizeExceeded), errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return badFrame("STEF frame %d: its zstd data declares a window larger than %d MiB: compress with a window of at most %d MiB (the STEF writer's default)", u.frames, MaxZstdWindow>>20, MaxZstdWindow>>20)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return badFrame("STEF frame %d: its zstd data ends before its declared size", u.frames)
	}
	return badFrame("STEF frame %d: bad zstd data: %v", u.frames, err)
}

// getDecoder returns a decoder an ended stream left (u.decoders), or a
// new one. A decoder's history is a ring of its window and two blocks
// (8.3 MiB at MaxZstdWindow), allocated and cleared on a stream's first
// block, which cost a new stream about as much as decoding a few thousand
// points (a tenth of the server's CPU on streams of 8,192-point frames).
func (u *unzstd) getDecoder() (*zstd.Decoder, error) {
	if u.decoders == nil {
		if d, ok := decodeDecoders.Get().(*zstd.Decoder); ok {
			return d, nil
		}
	} else if d, ok := u.decoders.Get(); ok {
		return d, nil
	}
	return newDecoder()
}

// decodeDecoders keeps the zstd decoders of DecodeMetrics and DecodeSpans
// (tools, benchmarks, the fuzz targets) for their next call, as a
// Receiver's spares keep its streams' (charged); a Receiver's streams
// never use it.
var decodeDecoders sync.Pool // *zstd.Decoder

func newDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1), // synchronous: decodes only what is read
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(MaxZstdWindow),
		// The frames' checksums are not verified (2 % of the server's
		// CPU on 8,192-point frames), as the streaming mode's decoder
		// (compression.NewStreamDecoder) does not: the transport
		// (TCP, TLS) carries the bytes intact, and the STEF reader
		// refuses what does not decode.
		zstd.IgnoreChecksum(true))
}

// close gives u's decoder back for another stream (u.decoders keeps it,
// charged as a whole stream's StateCostZstd, or lets it go). u must not be
// used afterwards.
func (u *unzstd) close() {
	if u.dec == nil {
		return
	}
	// Reset forgets the stream (its source and its history: a frame
	// of the next stream cannot refer to what this one decoded).
	if err := u.dec.Reset(nil); err == nil {
		if u.decoders == nil {
			decodeDecoders.Put(u.dec)
		} else {
			u.decoders.Put(u.dec, StateCostZstd)
		}
	}
	u.dec = nil
	u.err = errClosed
}

var errClosed = errors.New("STEF reader closed")

func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
