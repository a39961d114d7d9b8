package otlpjson

import (
	"encoding/binary"
	"math"
)

// Helpers building protobuf wire bytes field by field, so that tests control
// field order, duplicates and wire types exactly.

func pbTag(num uint32, wt wireType) []byte {
	return binary.AppendUvarint(nil, uint64(num)<<3|uint64(wt))
}

// pbVarint encodes a varint field.
func pbVarint(num uint32, v uint64) []byte {
	return binary.AppendUvarint(pbTag(num, wtVarint), v)
}

// pbFixed64 encodes a fixed64/sfixed64 field.
func pbFixed64(num uint32, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(pbTag(num, wtI64), v)
}

// pbDouble encodes a double field.
func pbDouble(num uint32, f float64) []byte {
	return pbFixed64(num, math.Float64bits(f))
}

// pbFixed32 encodes a fixed32 field.
func pbFixed32(num uint32, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(pbTag(num, wtI32), v)
}

// pbLen encodes a length-delimited field whose payload is the concatenation of parts.
func pbLen(num uint32, parts ...[]byte) []byte {
	var payload []byte
	for _, p := range parts {
		payload = append(payload, p...)
	}
	b := binary.AppendUvarint(pbTag(num, wtLen), uint64(len(payload)))
	return append(b, payload...)
}

// pbStr encodes a string field.
func pbStr(num uint32, s string) []byte {
	return pbLen(num, []byte(s))
}

// pbCat concatenates encoded fields into a message body.
func pbCat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	if b == nil {
		b = []byte{}
	}
	return b
}
