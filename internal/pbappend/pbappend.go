// Package pbappend appends protobuf fields to a byte slice, for the
// receivers that write OTLP themselves from another encoding (STEF, Arrow):
// every length is known when it is written, either computed by the caller
// (UvarintLen) or filled in when a nested message is closed (OpenLen,
// CloseLen). Wire format: https://protobuf.dev/programming-guides/encoding/.
// The helpers are small enough for the compiler to inline at each call.
package pbappend

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Wire types of the protobuf encoding.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireLen     = 2
	wireFixed32 = 5
)

// Varint appends v as a varint.
func Varint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// Tag appends the tag of field with wire type wire.
func Tag(b []byte, field, wire int) []byte {
	return Varint(b, uint64(field)<<3|uint64(wire))
}

// VarintField appends field as a varint.
func VarintField(b []byte, field int, v uint64) []byte {
	return Varint(Tag(b, field, wireVarint), v)
}

// VarintNonZero appends field as a varint, or nothing for 0, as proto3 does.
func VarintNonZero(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return VarintField(b, field, v)
}

// BytesField appends field as length-delimited bytes.
func BytesField(b []byte, field int, v []byte) []byte {
	b = Varint(Tag(b, field, wireLen), uint64(len(v)))
	return append(b, v...)
}

// StringField appends field as a length-delimited string.
func StringField(b []byte, field int, v string) []byte {
	b = Varint(Tag(b, field, wireLen), uint64(len(v)))
	return append(b, v...)
}

// StringNonEmpty appends field, or nothing for "", as proto3 does.
func StringNonEmpty(b []byte, field int, v string) []byte {
	if v == "" {
		return b
	}
	return StringField(b, field, v)
}

// Fixed64 appends v as 8 little-endian bytes, without a tag.
func Fixed64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// Fixed64Field appends field as fixed64.
func Fixed64Field(b []byte, field int, v uint64) []byte {
	return Fixed64(Tag(b, field, wireFixed64), v)
}

// Fixed64NonZero appends field as fixed64, or nothing for 0, as proto3 does.
func Fixed64NonZero(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return Fixed64Field(b, field, v)
}

// DoubleField appends field as a double.
func DoubleField(b []byte, field int, v float64) []byte {
	return Fixed64Field(b, field, math.Float64bits(v))
}

// Fixed32Field appends field as fixed32.
func Fixed32Field(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(Tag(b, field, wireFixed32), v)
}

// Fixed32NonZero appends field as fixed32, or nothing for 0, as proto3 does.
func Fixed32NonZero(b []byte, field int, v uint32) []byte {
	if v == 0 {
		return b
	}
	return Fixed32Field(b, field, v)
}

// Zigzag maps a signed integer to the sint64 encoding's unsigned one.
func Zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// UvarintLen is the length of v's varint encoding.
func UvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// lenReserve is the room OpenLen keeps for a length: a varint of up to
// 2^35-1, beyond any message a receiver accepts (MaxRecvMsgSize).
const lenReserve = 5

// OpenLen starts a length-delimited field whose content the caller then
// appends; CloseLen, given the offset OpenLen returned, fills in its
// length. CloseLen moves the content back over the reserved bytes the
// length does not need, so what is written is the minimal encoding. Only
// the container being closed moves: the open ones hold offsets before it,
// which do not change.
func OpenLen(b []byte, field int) ([]byte, int) {
	b = Tag(b, field, wireLen)
	return append(b, 0, 0, 0, 0, 0), len(b) // lenReserve zeros
}

// CloseLen ends the field OpenLen started at offset at.
func CloseLen(b []byte, at int) []byte {
	n := uint64(len(b) - at - lenReserve)
	var tmp [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(tmp[:], n)
	copy(b[at:], tmp[:k])
	copy(b[at+k:], b[at+lenReserve:])
	return b[:len(b)-(lenReserve-k)]
}

// Len is a length-delimited field opened by OpenLenFor: its length goes
// at At, in the Reserved bytes kept for it. At < 0: none is open.
type Len struct{ At, Reserved int }

// NoLen is the Len of no open field.
var NoLen = Len{At: -1}

// OpenLenFor is OpenLen keeping room for the length of a field of about
// expect bytes (the caller's guess: the last such field's size): when the
// length's varint takes as many bytes, CloseLenFor writes it in place
// without moving the content. A field of many KB closed by CloseLen
// moved all of it, once per level of nesting (a ResourceMetrics holding a
// request's points moved them at its metric's, its scope's and its own
// close).
func OpenLenFor(b []byte, field, expect int) ([]byte, Len) {
	b = Tag(b, field, wireLen)
	n := UvarintLen(uint64(max(expect, 0)))
	at := len(b)
	return append(b, make([]byte, n)...), Len{At: at, Reserved: n}
}

// CloseLenFor ends the field OpenLenFor started: it writes the length in
// the minimal encoding, moving the content back or forth only when the
// length takes fewer or more bytes than were kept for it.
func CloseLenFor(b []byte, l Len) []byte {
	n := uint64(len(b) - l.At - l.Reserved)
	k := UvarintLen(n)
	switch {
	case k < l.Reserved:
		copy(b[l.At+k:], b[l.At+l.Reserved:])
		b = b[:len(b)-(l.Reserved-k)]
	case k > l.Reserved:
		end := len(b)
		b = append(b, make([]byte, k-l.Reserved)...)
		copy(b[l.At+k:], b[l.At+l.Reserved:end])
	}
	binary.PutUvarint(b[l.At:], n)
	return b
}

// Content returns the size of the open field l's content so far.
func (l Len) Content(b []byte) int { return len(b) - l.At - l.Reserved }
