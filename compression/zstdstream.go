package compression

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// Stateful stream compression (the export stream's "zstd" stream
// compression, docs/streaming.md): one zstd frame spans the whole stream,
// and the encoder flushes a block at the end of every message, so each
// message is decodable as soon as it has arrived, while the resource
// attributes, keys and names it repeats from earlier messages (within the
// window) cost almost nothing.
//
// A stream message (the gRPC message's payload, its compressed flag 0) is
//
//	0x00 || uvarint(len(plain)) || the zstd bytes the encoder wrote for plain
//
// The zero byte marks it: no protobuf message starts with one (a tag of
// field number 0 is invalid), so a receiver tells a stream message from a
// plain one (IsStreamMessage), and a sender may send plain messages until
// it knows the receiver accepts stream messages. The plain length comes
// first so that the receiver can bound and charge
// the message before it decodes any of it, and knows where the message
// ends in the decoded stream without reading past it.

// DefaultStreamWindow is the window a stream encoder uses and a stream
// decoder accepts by default: 1 MiB. Measured on the OpenTelemetry demo data
// (bench/streamzstd), it keeps nearly all of the gain of larger windows
// (what a message repeats is mostly in the last few messages), and costs
// StreamDecoderCost(1 MiB) = 1.75 MiB per stream on the server.
const DefaultStreamWindow = 1 << 20

// MinStreamWindow and MaxStreamWindow bound the window a stream may use:
// zstd's least window (1 KiB) and zstdMaxWindow, what a per-message zstd
// frame may declare.
const (
	MinStreamWindow = zstd.MinWindowSize
	MaxStreamWindow = zstdMaxWindow
)

// StreamDecoderCost returns the memory a stream decoder with this window
// holds for its stream's life: the history ring (the window plus room for
// two blocks, as zstdHistoryBytes counts it), one block decoder's three
// block-sized buffers (a block's compressed bytes, its literals and its
// output, each allocated at the largest block's size by the first block
// that needs it: a stream of bytes that compress little, honest ids or
// noise, fills all three) and its entropy tables and the rest (Huffman and
// FSE tables, the decoder's structs: under 64 KiB, counted twice): 1.75
// MiB for a 1 MiB window, where a decoder was measured holding 1.42 MiB on
// the demo's repetitive data (TestStreamDecoderCost) and 1.76 MB after a
// single-segment frame of noise (TestReviewResetHoldsWithinCost: 1.5 MiB
// was charged then).
func StreamDecoderCost(window int) int64 {
	const blockSpace = 128<<10 + 32
	return int64(window) + 5*blockSpace + 128<<10
}

// Stream compression errors.
var (
	// ErrStreamCorrupt: a stream message that is not what the encoder
	// writes (garbage, a message that needs bytes of the next one, or
	// bytes past its declared length). The decoder cannot go on.
	ErrStreamCorrupt = errors.New("corrupt stateful zstd stream")
	// ErrStreamWindow: the stream's frame declares a window larger than
	// the decoder accepts.
	ErrStreamWindow = errors.New("stream declares a zstd window larger than negotiated")
)

// StreamEncoder compresses the messages of one stream with one zstd
// encoder. It is not safe for concurrent use.
type StreamEncoder struct {
	enc *zstd.Encoder
	out sliceWriter
}

type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// DefaultStreamLevel is the zstd level a stream encoder uses by default:
// 7, klauspost/compress's "better" level. Measured on the OpenTelemetry
// demo data (bench/cmd/wirebytes, tuned on the first half of the requests
// and checked on the second), it sends 8-16 % fewer bytes than level 3
// (SDK-sized traces 0.59x per-message zstd instead of 0.64x, which puts
// the stream under OTel-Arrow's bytes; metrics 0.21x instead of 0.24x) for
// 1.3-1.8 times per-message zstd's compression CPU on the client (level 3:
// 0.8-1.1 times; level 11 saves 5-16 % more for 4-6 times). The decoder,
// and so the server's CPU, is the same for every level.
const DefaultStreamLevel = 7

// NewStreamEncoder returns an encoder whose window is window bytes (a power
// of two between MinStreamWindow and MaxStreamWindow), at
// DefaultStreamLevel.
func NewStreamEncoder(window int) (*StreamEncoder, error) {
	return NewStreamEncoderLevel(window, DefaultStreamLevel)
}

// NewStreamEncoderLevel is NewStreamEncoder at a zstd level (1 to 22,
// mapped to klauspost/compress's four levels by zstd.EncoderLevelFromZstd).
// The decoder is the same for every level.
func NewStreamEncoderLevel(window, level int) (*StreamEncoder, error) {
	e := &StreamEncoder{}
	enc, err := zstd.NewWriter(&e.out,
		zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(window),
		zstd.WithEncoderCRC(false), // the frame never ends; gRPC runs over TCP/TLS
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, err
	}
	e.enc = enc
	return e, nil
}

// AppendMessage appends the stream message carrying plain to dst. Once it
// is called the message must be sent: the decoder's state follows the
// encoder's, message by message.
func (e *StreamEncoder) AppendMessage(dst, plain []byte) ([]byte, error) {
	dst = append(dst, streamMarker)
	dst = binary.AppendUvarint(dst, uint64(len(plain)))
	e.out.b = dst
	if _, err := e.enc.Write(plain); err != nil {
		return dst, err
	}
	if err := e.enc.Flush(); err != nil {
		return dst, err
	}
	dst = e.out.b
	e.out.b = nil
	return dst, nil
}

// streamMarker is a stream message's first byte.
const streamMarker = 0

// IsStreamMessage reports whether msg is a stream message (its first byte
// is the marker), rather than a plain protobuf message.
func IsStreamMessage(msg []byte) bool { return len(msg) > 0 && msg[0] == streamMarker }

// Close releases the encoder.
func (e *StreamEncoder) Close() { e.enc.Reset(nil) }

// StreamDecoder decompresses the messages of one stream. It is not safe for
// concurrent use. After an error it cannot go on: the stream must end.
type StreamDecoder struct {
	dec *zstd.Decoder
	in  messageReader
	err error
}

// messageReader gives the decoder the zstd bytes of the current message
// and no more: a decoder that needs more than a message holds (a message
// cut short, or garbage) gets an error, never a wait for the next one.
type messageReader struct{ b []byte }

var errNeedMore = errors.New("message ends inside a zstd block")

func (r *messageReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, errNeedMore
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	if len(r.b) == 0 {
		// An empty slice of the caller's message still pins it, after
		// the request that charged it is done
		// (TestStreamDecoderKeepsNoInput).
		r.b = nil
	}
	return n, nil
}

// NewStreamDecoder returns a decoder that refuses a frame declaring a
// window larger than maxWindow. It holds about StreamDecoderCost(maxWindow)
// once the frame has started.
func NewStreamDecoder(maxWindow int) (*StreamDecoder, error) {
	d := &StreamDecoder{}
	dec, err := zstd.NewReader(&d.in,
		zstd.WithDecoderConcurrency(1), // synchronous: decodes only what is read
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(uint64(maxWindow)),
		zstd.IgnoreChecksum(true))
	if err != nil {
		return nil, err
	}
	d.dec = dec
	return d, nil
}

// streamChunk is how much decoded output is charged at a time: the
// charge follows the output, or a buffer allocated for it, never the
// declared length alone.
const streamChunk = 64 << 10

// maxFirstRatio bounds the buffer DecodeMessage allocates for a message
// before decoding it: its declared length, but at most this many times its
// compressed bytes (or streamChunk). Honest messages on the demo data
// decode to at most 112 times their bytes (metrics, SDK-sized, each
// repeating the last; 8,192 points per request: 45 times), so they get
// one buffer; a message that lies is held to 256 times its bytes, less
// than what its real output can reach from repeat matches (a 4 KiB message
// decoding to 4 MiB, TestStreamBombCharged), and the charge comes first.
const maxFirstRatio = 256

// growthRoom is the part of a message's length that a buffer allocated for
// it gets beyond it (one eighth): requests that a batch processor cuts vary
// by a few percent from one to the next (the OpenTelemetry demo's traces cut
// at 8,192 spans: within 10 %), so a stream's pooled buffers reach a size
// that takes them all after a few messages, for an eighth more memory in
// the buffers a stream's requests are decoded into.
const growthRoom = 8

// DecodeMessage appends to dst the plain message that the stream message
// msg carries. A declared length above limit is ErrTooLarge, before any
// decoding; grow, if not nil, is charged before decoding for the
// declared length (and growthRoom more when dst has no room for it and a
// buffer is allocated), at most maxFirstRatio times msg's length, then for
// more as the output grows, and its error returned as it is (wrapped in
// chargeError's unwrap chain).
func (d *StreamDecoder) DecodeMessage(dst, msg []byte, limit int, grow func(int) error) ([]byte, error) {
	return d.DecodeMessageReserve(dst, msg, limit, grow, grow)
}

// DecodeMessageReserve is DecodeMessage with what an honest message needs
// charged to reserve before any decoding, and only the rest to grow as the
// output proves it: reserve is charged once, before the first byte is
// decoded, for the message's declared length (and growthRoom more, when
// dst has no room for it and a buffer is allocated), at most maxFirstRatio
// times msg's length (or streamChunk); grow for anything beyond (a message
// that lies about its length). So reserve may wait for room (a caller
// whose stream is not read meanwhile: the declared length is known, and
// bounded, before a byte of output is held), and grow must not. An error
// of either is returned as it is (in chargeError's unwrap chain), and the
// decoder cannot go on: the message was not decoded.
func (d *StreamDecoder) DecodeMessageReserve(dst, msg []byte, limit int, reserve, grow func(int) error) ([]byte, error) {
	if d.err != nil {
		return dst, d.err
	}
	if !IsStreamMessage(msg) {
		d.err = fmt.Errorf("%w: not a stream message", ErrStreamCorrupt)
		return dst, d.err
	}
	msg = msg[1:]
	n, k := binary.Uvarint(msg)
	if k <= 0 {
		d.err = fmt.Errorf("%w: bad message length", ErrStreamCorrupt)
		return dst, d.err
	}
	if n > uint64(limit) {
		d.err = ErrTooLarge
		return dst, d.err
	}
	d.in.b = msg[k:]
	want := len(dst) + int(n)
	// fresh: none of this message's output is read yet. The encoder
	// flushes a block at every message's end, so the decoder holds no
	// output of its own between messages; output that comes before any
	// of this message's input is read is what the previous message
	// decoded to beyond its declared length, and the stream is corrupt
	// (it would otherwise begin this message).
	fresh := true
	// ahead is what grow has charged beyond len(dst): the capacity a
	// growth allocated is charged before it is allocated (a message that
	// declares more than it holds must not make us hold more than we
	// charged), and a read into capacity already there is charged as the
	// read's room.
	ahead := 0
	charge := func(n int) error {
		if grow == nil || n <= ahead {
			return nil
		}
		if err := grow(n - ahead); err != nil {
			return chargeError{err}
		}
		ahead = n
		return nil
	}
	// The output's buffer: when dst has no room for the message, one of
	// the declared length, allocated (and charged) before any decoding, so
	// that the message decodes into it with no copy of what it has decoded
	// so far. Growing with the output instead (as below, and as this did
	// before) copied up to the whole message at its end, and a stream of
	// messages each a little larger than the last (a pooled buffer sized
	// to the previous one) reallocated and copied again and again: 40 % of
	// the decode's CPU at 8,192 points per request (perf samples of
	// wirebytes's cell, bench/results/streamdec-decode.txt). A message
	// whose compressed bytes are fewer than its declared length over
	// maxFirstRatio gets only that many times its bytes, then growth with
	// the output: a message that lies about its length makes us hold no
	// more than that before its output proves the rest.
	need := want - len(dst)
	// first is what the message is charged before decoding (reserve):
	// its declared length, or for a message whose compressed bytes are
	// fewer than that over maxFirstRatio, that many times its bytes.
	first := need
	if len(d.in.b) < need/maxFirstRatio {
		first = min(need, max(streamChunk, maxFirstRatio*len(d.in.b))) // 256 × len: less than need
	}
	room := first
	if first == need && cap(dst)-len(dst) < need {
		// An honest message's buffer gets growthRoom more than it needs
		// (within limit), charged with it: pooled, it then takes the
		// stream's next messages, each a little larger or smaller than
		// the last, without a new buffer for every one larger than any
		// before it (BenchmarkStreamZstdMessage in handler).
		// The room is held to maxFirstRatio too: a message of n bytes
		// declaring 256 n gets no room beyond it (288 n before).
		room = max(need, min(need+need/growthRoom, limit, maxFirstRatio*len(d.in.b)))
	}
	if room > 0 && reserve != nil {
		if err := reserve(room); err != nil {
			// The room is for the stream's next messages: a message
			// that fits the budget without it is decoded
			// (TestReviewGrowthRoomNeverRefuses).
			if room <= need || reserve(need) != nil {
				d.err = chargeError{err}
				return dst, d.err
			}
			room = need
		}
		ahead = room
	}
	if room > cap(dst)-len(dst) {
		nb := make([]byte, len(dst), len(dst)+room)
		copy(nb, dst)
		dst = nb
	}
	for len(dst) < want {
		m := min(want-len(dst), streamChunk)
		if cap(dst)-len(dst) < m {
			room := max(m, min(want-len(dst), 2*cap(dst)))
			if err := charge(room); err != nil {
				d.err = err
				return dst, d.err
			}
			nb := make([]byte, len(dst), len(dst)+room)
			copy(nb, dst)
			dst = nb
		}
		if err := charge(m); err != nil {
			d.err = err
			return dst, d.err
		}
		var got int
		var err error
		if fresh {
			before := len(d.in.b)
			got, err = d.dec.Read(dst[len(dst) : len(dst)+m])
			if got > 0 && len(d.in.b) == before && before > 0 {
				d.err = fmt.Errorf("%w: the previous message decodes to more than its declared length", ErrStreamCorrupt)
				return dst, d.err
			}
			fresh = false
			if err == nil && got < m {
				var more int
				more, err = io.ReadFull(d.dec, dst[len(dst)+got:len(dst)+m])
				got += more
			}
		} else {
			got, err = io.ReadFull(d.dec, dst[len(dst):len(dst)+m])
		}
		dst = dst[:len(dst)+got]
		ahead -= got
		if err != nil {
			switch {
			case errors.Is(err, zstd.ErrDecoderSizeExceeded), errors.Is(err, zstd.ErrWindowSizeExceeded):
				d.err = ErrStreamWindow
			case errors.Is(err, errNeedMore), err == io.EOF, err == io.ErrUnexpectedEOF:
				d.err = fmt.Errorf("%w: message ends before its %d bytes", ErrStreamCorrupt, n)
			default:
				d.err = fmt.Errorf("%w: %v", ErrStreamCorrupt, err)
			}
			return dst, d.err
		}
	}
	if len(d.in.b) > 0 {
		d.err = fmt.Errorf("%w: %d bytes past the message's end", ErrStreamCorrupt, len(d.in.b))
		return dst, d.err
	}
	return dst, nil
}

// Reset makes d a decoder for a new stream, as NewStreamDecoder with the
// same window returns one, but keeping its memory: the history ring (the
// window and two blocks, allocated and cleared on a stream's first block)
// and its block decoder's buffers, which a new decoder allocates again.
// Nothing of the stream it decoded is reachable by the next: its error,
// its input and its history are forgotten (zstd's frame restarts; a block
// of the next stream that refers to bytes before its own is corrupt, as
// on a new decoder: TestStreamDecoderResetForgets). An error is the
// decoder's own (closed): d must then not be used.
func (d *StreamDecoder) Reset() error {
	d.in.b = nil
	d.err = nil
	return d.dec.Reset(&d.in)
}

// Close releases the decoder.
func (d *StreamDecoder) Close() { d.dec.Close() }
