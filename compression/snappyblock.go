package compression

import (
	"encoding/binary"
	"errors"
)

// errSnappyCorrupt is a snappy block whose elements do not spell its header.
var errSnappyCorrupt = errors.New("corrupt snappy block")

// snappyBlockLen walks the elements of the snappy block src (google/snappy
// format_description.txt) without producing output, and returns the length
// they decode to, which must be the length its header claims. It fails with
// ErrTooLarge when either passes limit, and with errSnappyCorrupt when an
// element is truncated, copies from before the start of the output, or the
// lengths disagree. It reads the Snappy format only: S2's extensions (a
// copy with offset 0 repeating the last offset, for up to 16 MiB from 5
// bytes) are not Snappy, and refusing them bounds what a block can spell to
// 64 bytes per 3-byte copy, 22 times its size.
//
// Each element costs a few instructions and covers at least one byte of
// src, so the walk costs what the input costs, whatever the header claims.
func snappyBlockLen(src []byte, limit int) (int, error) {
	claimed, k := binary.Uvarint(src)
	if k <= 0 || k > binary.MaxVarintLen32 || claimed > 0xffffffff {
		return 0, errSnappyCorrupt
	}
	if claimed > uint64(limit) {
		return 0, ErrTooLarge
	}
	want := int(claimed)
	s, d := k, 0
	for s < len(src) {
		tag := src[s]
		var length, offset int
		switch tag & 3 {
		case 0: // literal
			x := int(tag >> 2)
			s++
			if x >= 60 {
				n := x - 59 // 1-4 bytes of length follow
				if s+n > len(src) {
					return 0, errSnappyCorrupt
				}
				x = 0
				for i := n - 1; i >= 0; i-- {
					x = x<<8 | int(src[s+i])
				}
				s += n
			}
			length = x + 1
			if length > len(src)-s {
				return 0, errSnappyCorrupt
			}
			s += length
			d += length
			if d > want {
				return 0, errSnappyCorrupt
			}
			continue
		case 1: // copy, 1-byte offset
			if s+2 > len(src) {
				return 0, errSnappyCorrupt
			}
			length = 4 + int(tag>>2&7)
			offset = int(tag&0xe0)<<3 | int(src[s+1])
			s += 2
		case 2: // copy, 2-byte offset
			if s+3 > len(src) {
				return 0, errSnappyCorrupt
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint16(src[s+1:]))
			s += 3
		default: // copy, 4-byte offset
			if s+5 > len(src) {
				return 0, errSnappyCorrupt
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint32(src[s+1:]))
			s += 5
		}
		if offset <= 0 || offset > d {
			return 0, errSnappyCorrupt
		}
		d += length
		if d > want {
			return 0, errSnappyCorrupt
		}
	}
	if d != want {
		return 0, errSnappyCorrupt
	}
	return want, nil
}
