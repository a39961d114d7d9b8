package stefreceiver

import (
	"encoding/binary"
	"math"
)

// Protobuf appenders for the OTLP messages the decoder writes: fields are
// written in number order where it matters to readers that look for an id
// first, and every length is known when it is written (each nested message
// is built in a buffer of its own, then copied).

func appendVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendTag(b []byte, field, wire int) []byte {
	return appendVarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	return appendVarint(appendTag(b, field, 0), v)
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

func appendDoubleField(b []byte, field int, v float64) []byte {
	return appendFixed64Field(b, field, math.Float64bits(v))
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// appendLen starts a length-delimited field whose content is then appended
// by the caller; endLen fills in its length. Five bytes are kept for the
// length (a varint of up to 4 GiB, beyond any bound), and endLen moves the
// content back over those the length does not need, so what is stored is
// the minimal encoding. Only the container being closed moves: the open
// ones hold offsets before it, which do not change.
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

func appendFixed64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func float64bits(f float64) uint64 { return math.Float64bits(f) }

func appendFixed32Field(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(appendTag(b, field, 5), v)
}
