package otlpcolumns

import "encoding/binary"

// DeclaredLen returns the length of the message src encodes, as Decode
// reads it before writing any output: an untransformed message's own
// length, a transformed one's declared length. It reports false for what
// Decode refuses at once (empty, an unknown flag, a bad length); it does
// not check the length against a limit, nor that the columns hold it. A
// caller charges it before Decode (and Decode's charges to it), so that
// it may wait for room for a message's output before decoding it.
func DeclaredLen(src []byte) (int, bool) {
	if len(src) == 0 {
		return 0, false
	}
	switch src[0] {
	case flagRaw:
		return len(src) - 1, true
	case flagColumns:
		n, k := binary.Uvarint(src[1:])
		if k <= 0 || n > uint64(maxInt) {
			return 0, false
		}
		return int(n), true
	}
	return 0, false
}

const maxInt = int(^uint(0) >> 1)
