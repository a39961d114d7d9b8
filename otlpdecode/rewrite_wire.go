package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Protobuf wire types (https://protobuf.dev/programming-guides/encoding/#structure).
const (
	wireVarint = 0
	wireI64    = 1
	wireLen    = 2
	wireI32    = 5
)

var errTruncated = errors.New("truncated protobuf field")

// nextField splits the first field off b, the encoding of a protobuf
// message. It returns the field number, the whole field as it appears on
// the wire (tag, length and value: what a splitter copies), the value of a
// length-delimited field (nil for other wire types) and the rest of b.
//
// The splitter moves fields around without decoding them, which is why it
// needs the raw bytes: every top-level field of an OTLP request is
// self-contained, so copying a field's bytes copies its meaning (protobuf
// encoding, "Concatenated messages": a message may be split between any
// two fields and the parts concatenated back).
func nextField(b []byte) (num int, raw, value, rest []byte, err error) {
	tag, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, nil, nil, errTruncated
	}
	num = int(tag >> 3)
	if num <= 0 || tag>>3 > 1<<29-1 {
		return 0, nil, nil, nil, fmt.Errorf("invalid protobuf field number %d", tag>>3)
	}
	size := n
	switch wt := tag & 7; wt {
	case wireVarint:
		_, m := binary.Uvarint(b[n:])
		if m <= 0 {
			return 0, nil, nil, nil, errTruncated
		}
		size += m
	case wireI64:
		size += 8
	case wireI32:
		size += 4
	case wireLen:
		l, m := binary.Uvarint(b[n:])
		if m <= 0 || l > uint64(len(b)-n-m) {
			return 0, nil, nil, nil, errTruncated
		}
		value = b[n+m : n+m+int(l)]
		size += m + int(l)
	default:
		// Groups (3, 4) are deprecated and never used by OTLP.
		return 0, nil, nil, nil, fmt.Errorf("unsupported protobuf wire type %d in field %d", wt, num)
	}
	if size > len(b) {
		return 0, nil, nil, nil, errTruncated
	}
	return num, b[:size], value, b[size:], nil
}

// appendLenField appends the tag and length of a length-delimited field;
// the caller appends its n bytes of value.
func appendLenField(dst []byte, num int, n int) []byte {
	dst = binary.AppendUvarint(dst, uint64(num)<<3|wireLen)
	return binary.AppendUvarint(dst, uint64(n))
}

// lenFieldSize is the encoded size of a length-delimited field of number
// num (< 16, a one-byte tag) with an n-byte value.
func lenFieldSize(n int) int {
	return 1 + uvarintSize(uint64(n)) + n
}

func uvarintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
