//go:build otelarrow

package arrowreceiver

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Protobuf appenders for the OTLP the encoder writes (the same helpers as
// stefreceiver/pb.go, which does this for STEF): every length is known
// when it is written, either computed (key-values, scalar values) or
// filled in when the nested message is closed (appendLen, endLen).

func appendTag(b []byte, field, wire int) []byte {
	return appendVarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	return appendVarint(appendTag(b, field, 0), v)
}

// appendVarintNonZero omits a zero, as proto3 does.
func appendVarintNonZero(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendVarintField(b, field, v)
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = appendVarint(appendTag(b, field, 2), uint64(len(v)))
	return append(b, v...)
}

func appendStringField(b []byte, field int, v string) []byte {
	b = appendVarint(appendTag(b, field, 2), uint64(len(v)))
	return append(b, v...)
}

// appendStringNonEmpty omits an empty string, as proto3 does.
func appendStringNonEmpty(b []byte, field int, v string) []byte {
	if v == "" {
		return b
	}
	return appendStringField(b, field, v)
}

func appendFixed64Field(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, 1), v)
}

// appendFixed64NonZero omits a zero, as proto3 does.
func appendFixed64NonZero(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendFixed64Field(b, field, v)
}

// appendFixed32NonZero omits a zero, as proto3 does.
func appendFixed32NonZero(b []byte, field int, v uint32) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint32(appendTag(b, field, 5), v)
}

// appendLen starts a length-delimited field whose content is then appended
// by the caller; endLen fills in its length. Five bytes are kept for the
// length (a varint of up to 4 GiB, beyond any bound: the output is
// limited to MaxRecvMsgSize), and endLen moves the content back over
// those the length does not need, so what is stored is the minimal
// encoding. Only the container being closed moves: the open ones hold
// offsets before it, which do not change.
func appendLen(b []byte, field int) ([]byte, int) {
	b = appendTag(b, field, 2)
	return append(b, 0, 0, 0, 0, 0), len(b)
}

func endLen(b []byte, at int) []byte {
	n := uint64(len(b) - at - 5)
	var tmp [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(tmp[:], n)
	copy(b[at:], tmp[:k])
	copy(b[at+k:], b[at+5:])
	return b[:len(b)-(5-k)]
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

func float64bits(f float64) uint64 { return math.Float64bits(f) }
