package compression

import (
	"errors"

	"github.com/klauspost/compress/zstd"
)

// zstdMaxWindow bounds the window a zstd frame may declare (RFC 8878
// section 3.1.1.1.2): 8 MiB is what zstd -19 uses and what other
// implementations accept by default.
const zstdMaxWindow = 8 << 20

// errZstdCorrupt is a zstd stream whose frames cannot be walked.
var errZstdCorrupt = errors.New("corrupt zstd frame")

// zstdHistoryBytes returns the history buffer the decoder allocates for the
// frames of src: the largest over the frames of klauspost/compress's ring,
// the declared window plus room for two blocks (zstd/history.go,
// ensureBlockRing). A frame header declares its window and the decoder
// allocates it before the first block: 21 bytes claiming an 8 MiB window
// cost 8.25 MiB, held by the pooled decoder and outside every account. So
// it is charged, as what the request holds, before decoding starts.
//
// It walks the frames without decoding them: each frame's header, then its
// block headers (three bytes each, with the size of what follows), then its
// checksum; skippable frames are skipped. That costs a few instructions
// per block, each at least three bytes of src. A stream that cannot be
// walked is corrupt: the decoder would refuse it too.
func zstdHistoryBytes(src []byte) (int, error) {
	most := 0
	for len(src) > 0 {
		var h zstd.Header
		if err := h.Decode(src); err != nil || h.HeaderSize <= 0 || h.HeaderSize > len(src) {
			return 0, errZstdCorrupt
		}
		if h.Skippable {
			n := uint64(h.HeaderSize) + uint64(h.SkippableSize)
			if n > uint64(len(src)) {
				return 0, errZstdCorrupt
			}
			src = src[n:]
			continue
		}
		window := h.WindowSize
		if h.SingleSegment {
			window = max(h.FrameContentSize, zstd.MinWindowSize)
		}
		if window > zstdMaxWindow {
			return 0, errZstdCorrupt // the decoder refuses it, before allocating
		}
		const blockSpace = 128<<10 + 16 // the largest block, and the decoder's overrun
		most = max(most, int(window)+2*min(int(window)+16, blockSpace))
		src = src[h.HeaderSize:]
		for last := false; !last; {
			if len(src) < 3 {
				return 0, errZstdCorrupt
			}
			bh := uint32(src[0]) | uint32(src[1])<<8 | uint32(src[2])<<16
			last = bh&1 != 0
			size := int(bh >> 3)
			switch bh >> 1 & 3 {
			case 1: // RLE: one byte, repeated size times
				size = 1
			case 3:
				return 0, errZstdCorrupt
			}
			if 3+size > len(src) {
				return 0, errZstdCorrupt
			}
			src = src[3+size:]
		}
		if h.HasCheckSum {
			if len(src) < 4 {
				return 0, errZstdCorrupt
			}
			src = src[4:]
		}
	}
	return most, nil
}
