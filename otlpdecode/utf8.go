package otlpdecode

import (
	"encoding/binary"
	"unicode/utf8"
)

// validUTF8 reports whether b is valid UTF-8, as utf8.Valid does, with a
// fast path for ASCII: it ORs b together eight bytes at a time (the last
// word overlapping the previous one instead of a byte loop) and falls back
// to utf8.Valid only when a byte has its high bit set.
//
// Why: attribute keys and values are short (a few to a few dozen bytes),
// and with ValidateUTF8 on, utf8.Valid's per-call set-up and byte-wise tail
// cost as much as the whole protobuf walk of a span (BENCHMARKS.md §1.1:
// CheckTraces 500x10 took 1.6x as long with validation as without).
// Nearly all telemetry strings are ASCII.
func validUTF8(b []byte) bool {
	n := len(b)
	var acc uint64
	switch {
	case n >= 8:
		i := 0
		for ; i+8 <= n; i += 8 {
			acc |= binary.LittleEndian.Uint64(b[i:])
		}
		if i < n {
			acc |= binary.LittleEndian.Uint64(b[n-8:])
		}
	case n >= 4:
		acc = uint64(binary.LittleEndian.Uint32(b) | binary.LittleEndian.Uint32(b[n-4:]))
	case n > 0:
		// One to three bytes: the first, middle and last cover them all.
		acc = uint64(b[0] | b[n/2] | b[n-1])
	}
	if acc&0x8080808080808080 == 0 {
		return true
	}
	return utf8.Valid(b)
}

// validUTF8String is validUTF8 for a string aliasing protobuf bytes.
func validUTF8String(s string) bool {
	return validUTF8(stringToBytes(s))
}
