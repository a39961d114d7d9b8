// Package otlppb reads OTLP protobuf: the one field reader every walk of the
// module uses (Field, with its inlinable fast paths ReadShort and
// SkipScalar, and NextField for walks built on easyproto), the field
// numbers of every OTLP v1.11 message the receiver walks, named once
// (schema.go; rpc.go names those of the google.rpc status details the
// transports send), and the position of a decoding error inside a request
// (ErrorAt, ErrorPosition).
//
// It imports only easyproto and the standard library, so that every
// package that reads OTLP (the validation walk, the views, the JSON
// encoder, the Kafka rewrites, the clients) can sit above it.
package otlppb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/VictoriaMetrics/easyproto"
)

// maxFieldNum is the largest field number protobuf allows (2^29-1,
// https://protobuf.dev/programming-guides/proto3/#assigning).
const maxFieldNum = 1<<29 - 1

// SkippedField is the FieldNum Read and NextField report for a group they
// skipped. No valid field has this number, so every decoder's switch
// ignores it.
const SkippedField = math.MaxUint32

// The protobuf wire types
// (https://protobuf.dev/programming-guides/encoding/#structure), as
// Field.WireType reports them.
const (
	WireVarint     = 0
	WireI64        = 1
	WireLen        = 2
	WireStartGroup = 3
	WireEndGroup   = 4
	WireI32        = 5
)

var errFieldNum = errors.New("invalid field number")

// Field is one field of a protobuf message, as read by Read. Its
// accessors mirror easyproto.FieldContext's: each reports false when the
// field's wire type is not the one it reads, so that a field sent with an
// unexpected wire type is ignored like an unknown field. The payload of a
// length-delimited field aliases the buffer read: it lives as long as that
// buffer does.
//
// The walks read fields with this type rather than easyproto.FieldContext
// because that type's fields are unexported: its reader cannot be inlined
// into the walks, and the walk of a span paid two calls per field (a
// wrapper, then easyproto's NextField), about half of CheckTraces' time.
// The hot loops read the commonest fields inline (ReadShort, SkipScalar)
// and everything else in one call (Read), which hands what is unusual to
// easyproto, the reference for every other encoding.
type Field struct {
	FieldNum uint32
	wire     uint8
	data     []byte // WireLen
	value    uint64 // WireVarint, WireI64, WireI32
}

// WireType returns the wire type the field arrived with (Wire*); a skipped
// group reports WireStartGroup.
func (f *Field) WireType() uint8 { return f.wire }

// MessageData returns the payload of a length-delimited field.
func (f *Field) MessageData() ([]byte, bool) {
	if f.wire != WireLen {
		return nil, false
	}
	return f.data, true
}

// Bytes is MessageData, for bytes fields.
func (f *Field) Bytes() ([]byte, bool) { return f.MessageData() }

// String returns a string field's payload without copying.
func (f *Field) String() (string, bool) {
	if f.wire != WireLen {
		return "", false
	}
	return bytesToString(f.data), true
}

// Uint64 returns a varint field's value.
func (f *Field) Uint64() (uint64, bool) {
	return f.value, f.wire == WireVarint
}

// Fixed64 returns a fixed64 (or double) field's value.
func (f *Field) Fixed64() (uint64, bool) {
	return f.value, f.wire == WireI64
}

// Double returns a double field's value.
func (f *Field) Double() (float64, bool) {
	return math.Float64frombits(f.value), f.wire == WireI64
}

// Sfixed64 returns an sfixed64 field's value.
func (f *Field) Sfixed64() (int64, bool) {
	return int64(f.value), f.wire == WireI64
}

// Fixed32 returns a fixed32 (or float) field's value.
func (f *Field) Fixed32() (uint32, bool) {
	return uint32(f.value), f.wire == WireI32
}

// ReadShort reads the commonest field of OTLP, a length-delimited field
// with a one-byte tag and a length under 128, into f and returns the rest
// of src; ok is false (and src is returned whole) for any other field,
// which the caller then reads with Read. It inlines.
func (f *Field) ReadShort(src []byte) ([]byte, bool) {
	if len(src) >= 2 {
		// The tag byte (src[0]) has no continuation bit, wire type LEN
		// and a field number other than 0; the length byte (src[1]) has
		// no continuation bit.
		if tl := uint16(src[0]) | uint16(src[1])<<8; tl&0x8087 == WireLen && tl&0x78 != 0 {
			if end := 2 + int(src[1]); end <= len(src) {
				f.FieldNum, f.wire, f.data = uint32(src[0]>>3), WireLen, src[2:end]
				return src[end:], true
			}
		}
	}
	return src, false
}

// ShortLen reports whether src starts with what ReadShort reads, a
// length-delimited field with a one-byte tag and a length under 128, and
// returns its number and where it ends (its payload is src[2:end]),
// without filling a Field: for the loops over many small entries (a
// profiles dictionary), where that is measurably cheaper. It inlines.
func ShortLen(src []byte) (num uint32, end int, ok bool) {
	if len(src) >= 2 {
		if tl := uint16(src[0]) | uint16(src[1])<<8; tl&0x8087 == WireLen && tl&0x78 != 0 {
			if end = 2 + int(src[1]); end <= len(src) {
				return uint32(src[0] >> 3), end, true
			}
		}
	}
	return 0, 0, false
}

// SmallVarint reports whether src starts with a varint field with a
// one-byte tag and a value below 2^14 (one or two bytes), the shape of
// most indices of a profile, and returns its number, its value and its
// length in bytes; any other field is left to Read. It inlines.
func SmallVarint(src []byte) (num uint32, v uint64, n int, ok bool) {
	// The tag byte has no continuation bit, wire type VARINT and a field
	// number other than 0.
	if len(src) < 2 || src[0]&0x87 != WireVarint || src[0] == 0 {
		return
	}
	v, n = uint64(src[1]), 2
	if v >= 0x80 {
		if len(src) < 3 || src[2] >= 0x80 {
			return 0, 0, 0, false
		}
		v, n = v&0x7f|uint64(src[2])<<7, 3
	}
	return uint32(src[0] >> 3), v, n, true
}

// SkipScalar skips a field the caller never inspects when it is a
// fixed64, fixed32 or one-byte varint with a one-byte tag (timestamps,
// dropped counts, enums, flags); ok is false for anything else, which the
// caller then reads with ReadShort or Read. A span is a third such
// fields, and skipping them here saves a call each. It inlines.
func SkipScalar(src []byte) (tail []byte, ok bool) {
	if len(src) < 2 || src[0] < 8 {
		return src, false
	}
	switch src[0] & 0x87 {
	case WireI64:
		if len(src) >= 9 {
			return src[9:], true
		}
	case WireVarint:
		if src[1] < 0x80 {
			return src[2:], true
		}
	case WireI32:
		if len(src) >= 5 {
			return src[5:], true
		}
	}
	return src, false
}

// Read reads the next field of src into f and returns the rest of src.
//
// It accepts exactly what easyproto's NextField accepts, plus the checks
// protobuf-go makes: field number 0 and numbers above 2^29-1 are
// malformed. A group (wire types 3/4, deprecated but still valid on the
// wire) is skipped as a whole and reported as SkippedField, because no
// OTLP field is a group and protobuf-go keeps such fields as unknown
// fields (SkippedField).
//
// A field with a one-byte tag (all of OTLP's but a few, such as
// Span.flags) is read here, in one call; a longer tag, a group or a
// malformed field goes through easyproto's reader, so that its rules and
// errors stay the reference. It is too large to inline: the hot loops try
// ReadShort and SkipScalar, which inline, before calling it.
func (f *Field) Read(src []byte) ([]byte, error) {
	if len(src) >= 2 && src[0] < 0x80 && src[0] >= 8 {
		num := uint32(src[0] >> 3)
		switch src[0] & 7 {
		case WireLen:
			if n := int(src[1]); n < 0x80 && n <= len(src)-2 {
				f.FieldNum, f.wire, f.data = num, WireLen, src[2:2+n]
				return src[2+n:], nil
			}
			if n, k := binary.Uvarint(src[1:]); k > 0 && n <= uint64(len(src)-1-k) {
				f.FieldNum, f.wire = num, WireLen
				f.data = src[1+k : 1+k+int(n)]
				return src[1+k+int(n):], nil
			}
		case WireI64:
			if len(src) >= 9 {
				f.FieldNum, f.wire = num, WireI64
				f.value = binary.LittleEndian.Uint64(src[1:])
				return src[9:], nil
			}
		case WireVarint:
			if v := src[1]; v < 0x80 {
				f.FieldNum, f.wire, f.value = num, WireVarint, uint64(v)
				return src[2:], nil
			}
			if v, k := binary.Uvarint(src[1:]); k > 0 {
				f.FieldNum, f.wire, f.value = num, WireVarint, v
				return src[1+k:], nil
			}
		case WireI32:
			if len(src) >= 5 {
				f.FieldNum, f.wire = num, WireI32
				f.value = uint64(binary.LittleEndian.Uint32(src[1:]))
				return src[5:], nil
			}
		}
	}
	var fc easyproto.FieldContext
	tail, err := NextField(&fc, src)
	if err != nil {
		return tail, err
	}
	f.FieldNum = fc.FieldNum
	if data, ok := fc.MessageData(); ok {
		f.wire, f.data = WireLen, data
	} else if v, ok := fc.Uint64(); ok {
		f.wire, f.value = WireVarint, v
	} else if v, ok := fc.Fixed64(); ok {
		f.wire, f.value = WireI64, v
	} else if v, ok := fc.Fixed32(); ok {
		f.wire, f.value = WireI32, uint64(v)
	} else {
		f.wire = WireStartGroup // a skipped group: FieldNum is SkippedField
	}
	return tail, nil
}

// NextField is Read for packages that walk OTLP protobuf with easyproto
// (otlpjson's encoder), so that they accept exactly what every other walk
// accepts: field numbers 0 and above
// 2^29-1 are errors, and a group is skipped as a whole and reported with a
// FieldNum no OTLP message uses (math.MaxUint32), to be ignored as an
// unknown field.
func NextField(fc *easyproto.FieldContext, src []byte) ([]byte, error) {
	tail, err := fc.NextField(src)
	if err != nil || fc.FieldNum-1 >= maxFieldNum {
		return nextFieldError(fc, src, err)
	}
	return tail, nil
}

// nextFieldError is the rare path of NextField: a group to skip, or an
// error.
//
//go:noinline
func nextFieldError(fc *easyproto.FieldContext, src []byte, err error) ([]byte, error) {
	if err != nil {
		return skipGroup(fc, src, err)
	}
	return src, errFieldNum
}

// skipGroup is the slow path of NextField: src starts with a field easyproto
// could not read. If it is a start-group tag, the group is skipped up to its
// matching end-group tag; otherwise origErr is returned.
func skipGroup(fc *easyproto.FieldContext, src []byte, origErr error) ([]byte, error) {
	tag, n := binary.Uvarint(src)
	if n <= 0 || tag&7 != WireStartGroup {
		return src, origErr
	}
	num := tag >> 3
	if num-1 >= maxFieldNum {
		return src, errFieldNum
	}
	tail, err := skipGroupBody(src[n:], num, 0)
	if err != nil {
		return tail, err
	}
	fc.FieldNum = SkippedField
	return tail, nil
}

// skipGroupBody skips fields up to the end-group tag for field num.
func skipGroupBody(src []byte, num uint64, depth int) ([]byte, error) {
	if depth > 100 {
		return src, errors.New("groups nested too deeply")
	}
	for {
		tag, n := binary.Uvarint(src)
		if n <= 0 {
			return src, fmt.Errorf("cannot read the end of group #%d", num)
		}
		src = src[n:]
		fieldNum := tag >> 3
		if fieldNum-1 >= maxFieldNum {
			return src, errFieldNum
		}
		switch tag & 7 {
		case WireVarint:
			_, n = binary.Uvarint(src)
			if n <= 0 {
				return src, fmt.Errorf("cannot read varint field #%d", fieldNum)
			}
			src = src[n:]
		case WireI64:
			if len(src) < 8 {
				return src, fmt.Errorf("cannot read i64 field #%d", fieldNum)
			}
			src = src[8:]
		case WireI32:
			if len(src) < 4 {
				return src, fmt.Errorf("cannot read i32 field #%d", fieldNum)
			}
			src = src[4:]
		case WireLen:
			l, n := binary.Uvarint(src)
			if n <= 0 || uint64(len(src)-n) < l {
				return src, fmt.Errorf("cannot read len field #%d", fieldNum)
			}
			src = src[n+int(l):]
		case WireStartGroup:
			var err error
			src, err = skipGroupBody(src, fieldNum, depth+1)
			if err != nil {
				return src, err
			}
		case WireEndGroup:
			if fieldNum != num {
				return src, fmt.Errorf("end of group #%d inside group #%d", fieldNum, num)
			}
			return src, nil
		default:
			return src, fmt.Errorf("unknown wire type %d", tag&7)
		}
	}
}

// CheckPackedFixed reports an error if f is a packed run of fixed-size
// elements whose length is not a multiple of size; a malformed run makes
// the whole message malformed. A field of another wire type is no run:
// nil.
func (f *Field) CheckPackedFixed(size int) error {
	data, ok := f.MessageData()
	if !ok {
		return nil
	}
	if len(data)%size != 0 {
		return fmt.Errorf("packed field #%d is %d bytes, not a multiple of %d", f.FieldNum, len(data), size)
	}
	return nil
}

// CheckPackedVarints reports an error if f is a packed varint run that is
// not well-formed (nil for a field of another wire type).
func (f *Field) CheckPackedVarints() error {
	data, ok := f.MessageData()
	if !ok {
		return nil
	}
	for len(data) > 0 {
		if data[0] < 0x80 {
			data = data[1:]
			continue
		}
		_, n := binary.Uvarint(data)
		if n <= 0 {
			return fmt.Errorf("cannot read packed varint in field #%d", f.FieldNum)
		}
		data = data[n:]
	}
	return nil
}

// bytesToString returns b as a string without copying, as easyproto's
// String does; b must not be modified while the string is in use.
func bytesToString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
