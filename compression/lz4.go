package compression

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// LZ4 request bodies (Content-Encoding: lz4) are LZ4 frames (the LZ4 Frame
// Format, lz4_Frame_format.md v1.6.x): what the Collector's confighttp
// writes with github.com/pierrec/lz4/v4 and reads back, and what Grafana
// Mimir accepts. This is a decoder of our own rather than that library: it
// is on the request path, whose dependencies are the standard library,
// golang.org/x and klauspost/compress, and the library's reader takes a
// block buffer of the size a frame header declares (4 MiB from a 7-byte
// descriptor) before any data arrives. Here the output goes straight into
// the request's buffer, growing with what the blocks produce, charged
// before it is, never past the limit; a declared content size over the limit is
// refused before any block is decoded.

// lz4 frame magic numbers (little endian on the wire).
const (
	lz4Magic         = 0x184D2204
	lz4SkipMagicMask = 0xFFFFFFF0
	lz4SkipMagic     = 0x184D2A50 // to 0x184D2A5F: skippable frames
	lz4LegacyMagic   = 0x184C2102
)

// lz4Window is how far back a match may reach: 65535 bytes (a 2-byte
// offset); linked blocks reach into the blocks before them.
const lz4Window = 65535

// The frame errors; each is wrapped as "cannot decompress lz4: ...".
var (
	errLZ4Magic    = errors.New("not an LZ4 frame (bad magic number)")
	errLZ4Legacy   = errors.New("legacy LZ4 frames (lz4 -l) are not supported: send the LZ4 frame format")
	errLZ4Header   = errors.New("bad LZ4 frame descriptor")
	errLZ4Dict     = errors.New("LZ4 frames with a dictionary are not supported")
	errLZ4Checksum = errors.New("LZ4 checksum mismatch")
	errLZ4Corrupt  = errors.New("corrupt LZ4 block")
	errLZ4Short    = errors.New("LZ4 frame cut short")
	errLZ4Size     = errors.New("LZ4 frame content size differs from its data")
)

// lz4Decoder decodes LZ4 frames into dst, within limit, charging output as
// it grows.
type lz4Decoder struct {
	dst     []byte
	start   int // len(dst) on entry: output is dst[start:]
	limit   int
	charge  func(int) error
	charged int // output charged so far (absolute index into dst)
}

func decompressLZ4(dst, src []byte, limit int, charge func(int) error) ([]byte, error) {
	d := lz4Decoder{dst: dst, start: len(dst), limit: limit, charge: charge, charged: len(dst)}
	err := d.frames(src)
	if err == nil {
		err = d.chargeOutput()
	}
	if err != nil {
		if err != ErrTooLarge && !isChargeErr(err, charge) {
			err = fmt.Errorf("cannot decompress lz4: %w", err)
		}
		return dst[:d.start], err
	}
	return d.dst, nil
}

// frames decodes the frames of src, one after the other (a concatenation
// of frames is one stream, as lz4 -d reads it); skippable frames are
// skipped.
func (d *lz4Decoder) frames(src []byte) error {
	if len(src) == 0 {
		return errLZ4Short
	}
	for len(src) > 0 {
		if len(src) < 4 {
			return errLZ4Short
		}
		magic := binary.LittleEndian.Uint32(src)
		switch {
		case magic == lz4Magic:
			n, err := d.frame(src)
			if err != nil {
				return err
			}
			src = src[n:]
		case magic&lz4SkipMagicMask == lz4SkipMagic:
			if len(src) < 8 {
				return errLZ4Short
			}
			size := uint64(binary.LittleEndian.Uint32(src[4:]))
			if uint64(len(src)-8) < size {
				return errLZ4Short
			}
			src = src[8+size:]
		case magic == lz4LegacyMagic:
			return errLZ4Legacy
		default:
			return errLZ4Magic
		}
	}
	return nil
}

// frame decodes the frame at the start of src and returns its length.
func (d *lz4Decoder) frame(src []byte) (int, error) {
	// Magic, FLG, BD, [content size], [dictionary ID], HC.
	if len(src) < 7 {
		return 0, errLZ4Short
	}
	flg, bd := src[4], src[5]
	if flg>>6 != 1 || flg&0x02 != 0 || bd&0x8f != 0 {
		return 0, fmt.Errorf("%w: version %d, reserved bits %#x %#x", errLZ4Header, flg>>6, flg&0x02, bd&0x8f)
	}
	independent, blockSum, hasSize, contentSum, hasDict := flg&0x20 != 0, flg&0x10 != 0, flg&0x08 != 0, flg&0x04 != 0, flg&0x01 != 0
	if hasDict {
		return 0, errLZ4Dict
	}
	var blockMax int
	switch bd >> 4 {
	case 4:
		blockMax = 64 << 10
	case 5:
		blockMax = 256 << 10
	case 6:
		blockMax = 1 << 20
	case 7:
		blockMax = 4 << 20
	default:
		return 0, fmt.Errorf("%w: block maximum size code %d", errLZ4Header, bd>>4)
	}
	descEnd := 6
	var contentSize uint64
	if hasSize {
		descEnd += 8
	}
	if len(src) < descEnd+1 {
		return 0, errLZ4Short
	}
	if hasSize {
		contentSize = binary.LittleEndian.Uint64(src[6:14])
		// The claim is checked against the limit before anything is
		// decoded, and against the data after: never allocated.
		if contentSize > uint64(d.limit-(len(d.dst)-d.start)) {
			return 0, ErrTooLarge
		}
	}
	if byte(xxh32(src[4:descEnd], 0)>>8) != src[descEnd] {
		return 0, fmt.Errorf("%w: frame descriptor", errLZ4Checksum)
	}
	p := descEnd + 1
	frameStart := len(d.dst)
	for {
		if len(src)-p < 4 {
			return 0, errLZ4Short
		}
		bs := binary.LittleEndian.Uint32(src[p:])
		p += 4
		if bs == 0 { // EndMark
			break
		}
		raw := bs&(1<<31) != 0
		size := int(bs &^ (1 << 31))
		if size > blockMax {
			return 0, fmt.Errorf("%w: block of %d bytes over the frame's maximum %d", errLZ4Corrupt, size, blockMax)
		}
		if len(src)-p < size {
			return 0, errLZ4Short
		}
		block := src[p : p+size]
		p += size
		if blockSum {
			if len(src)-p < 4 {
				return 0, errLZ4Short
			}
			if xxh32(block, 0) != binary.LittleEndian.Uint32(src[p:]) {
				return 0, fmt.Errorf("%w: block", errLZ4Checksum)
			}
			p += 4
		}
		blockStart := len(d.dst)
		if raw {
			if err := d.reserve(size); err != nil {
				return 0, err
			}
			d.dst = append(d.dst, block...)
		} else {
			base := blockStart
			if !independent {
				base = max(frameStart, blockStart-lz4Window)
			}
			if err := d.block(block, base, blockStart+blockMax); err != nil {
				return 0, err
			}
		}
	}
	out := d.dst[frameStart:]
	if hasSize && uint64(len(out)) != contentSize {
		return 0, fmt.Errorf("%w: %d bytes declared, %d decoded", errLZ4Size, contentSize, len(out))
	}
	if contentSum {
		if len(src)-p < 4 {
			return 0, errLZ4Short
		}
		if xxh32(out, 0) != binary.LittleEndian.Uint32(src[p:]) {
			return 0, fmt.Errorf("%w: content", errLZ4Checksum)
		}
		p += 4
	}
	return p, nil
}

// block decodes one compressed block (the LZ4 Block Format) onto d.dst.
// Matches may reach back to base (the block's start, or for linked blocks
// the window of the frame's output before it); the block's output must
// end by blockEnd (its frame's maximum block size).
//
// Output is written at o into the whole capacity of d.dst; a sequence
// that fits below fastEnd (the capacity, the limit, the next charge step
// and blockEnd, the nearest of them) is written without further checks;
// one that does not goes through room, which checks, charges and grows.
func (d *lz4Decoder) block(src []byte, base, blockEnd int) error {
	o := len(d.dst)
	buf := d.dst[:cap(d.dst)]
	fastEnd := d.fastEnd(buf, blockEnd)
	room := func(n int) error {
		if n > blockEnd-o {
			return fmt.Errorf("%w: output past the frame's block size", errLZ4Corrupt)
		}
		d.dst = buf[:o]
		if err := d.reserve(n); err != nil {
			return err
		}
		buf = d.dst[:cap(d.dst)]
		fastEnd = d.fastEnd(buf, blockEnd)
		return nil
	}
	i := 0
	for {
		if i >= len(src) {
			return fmt.Errorf("%w: ends without its last literals", errLZ4Corrupt)
		}
		token := src[i]
		i++
		lit := int(token >> 4)
		if lit == 15 {
			n, k := lz4Length(src[i:])
			if k < 0 {
				return fmt.Errorf("%w: literal length", errLZ4Corrupt)
			}
			lit += n
			i += k
		}
		if lit > len(src)-i {
			return fmt.Errorf("%w: literals past the block's end", errLZ4Corrupt)
		}
		if lit > fastEnd-o {
			if err := room(lit); err != nil {
				return err
			}
		}
		o += copy(buf[o:o+lit], src[i:])
		i += lit
		if i == len(src) {
			d.dst = buf[:o]
			return nil // the last sequence: literals only
		}
		if len(src)-i < 2 {
			return fmt.Errorf("%w: match offset cut short", errLZ4Corrupt)
		}
		off := int(binary.LittleEndian.Uint16(src[i:]))
		i += 2
		if off == 0 || off > o-base {
			return fmt.Errorf("%w: match offset %d before the start of the output", errLZ4Corrupt, off)
		}
		ml := int(token&15) + 4 // minmatch
		if ml == 15+4 {
			n, k := lz4Length(src[i:])
			if k < 0 {
				return fmt.Errorf("%w: match length", errLZ4Corrupt)
			}
			ml += n
			i += k
		}
		if ml > fastEnd-o {
			if err := room(ml); err != nil {
				return err
			}
		}
		if off >= ml {
			copy(buf[o:o+ml], buf[o-off:])
		} else {
			// An overlapping match repeats the off bytes before it:
			// copy them, then the doubled run, and so on.
			for n := 0; n < ml; {
				n += copy(buf[o+n:o+ml], buf[o-off:o+n])
			}
		}
		o += ml
	}
}

// fastEnd is where output at the end of buf must stop to be checked: at
// the capacity, the limit, the next charge step or blockEnd.
func (d *lz4Decoder) fastEnd(buf []byte, blockEnd int) int {
	end := min(len(buf), d.start+d.limit, blockEnd)
	if d.charge != nil {
		end = min(end, d.charged+readChunk-1)
	}
	return end
}

// lz4Length reads the bytes that extend a literal or match length: each
// adds its value, and a byte of 255 is followed by another. It returns the
// sum and the bytes read, or k < 0 if src ends first. The sum is at most
// 255 times the bytes read, so it is bounded by the block (and so checked
// against the output's bounds by the caller).
func lz4Length(src []byte) (n, k int) {
	for k < len(src) {
		b := src[k]
		k++
		n += int(b)
		if b != 255 {
			return n, k
		}
	}
	return 0, -1
}

// reserve makes room for n more bytes of output, failing with ErrTooLarge
// if they pass the limit. Output is charged before it is allocated and
// produced, in steps of at least readChunk (so a long match is charged
// whole first); the buffer grows geometrically, never past the limit.
func (d *lz4Decoder) reserve(n int) error {
	if n > d.limit-(len(d.dst)-d.start) {
		return ErrTooLarge
	}
	if ahead := len(d.dst) + n - d.charged; ahead >= readChunk && d.charge != nil {
		d.charged += ahead
		if err := d.charge(ahead); err != nil {
			return chargeError{err}
		}
	}
	if cap(d.dst)-len(d.dst) >= n {
		return nil
	}
	want := max(cap(d.dst)*2, len(d.dst)+n, len(d.dst)+firstRead)
	want = min(want, d.start+d.limit)
	nb := make([]byte, len(d.dst), want)
	copy(nb, d.dst)
	d.dst = nb
	return nil
}

// chargeOutput charges the output produced and not charged yet.
func (d *lz4Decoder) chargeOutput() error {
	n := len(d.dst) - d.charged
	if n <= 0 || d.charge == nil {
		return nil
	}
	d.charged = len(d.dst)
	if err := d.charge(n); err != nil {
		return chargeError{err}
	}
	return nil
}

// xxh32 is XXH32 (xxHash, 32 bits) of b with seed: the LZ4 frame's header,
// block and content checksum.
func xxh32(b []byte, seed uint32) uint32 {
	const (
		p1 = 2654435761
		p2 = 2246822519
		p3 = 3266489917
		p4 = 668265263
		p5 = 374761393
	)
	n := len(b)
	var h uint32
	if n >= 16 {
		v1, v2, v3, v4 := seed+p1+p2, seed+p2, seed, seed-p1
		for ; len(b) >= 16; b = b[16:] {
			v1 = bits.RotateLeft32(v1+binary.LittleEndian.Uint32(b[0:4])*p2, 13) * p1
			v2 = bits.RotateLeft32(v2+binary.LittleEndian.Uint32(b[4:8])*p2, 13) * p1
			v3 = bits.RotateLeft32(v3+binary.LittleEndian.Uint32(b[8:12])*p2, 13) * p1
			v4 = bits.RotateLeft32(v4+binary.LittleEndian.Uint32(b[12:16])*p2, 13) * p1
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + p5
	}
	h += uint32(n)
	for ; len(b) >= 4; b = b[4:] {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
