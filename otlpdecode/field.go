package otlpdecode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/VictoriaMetrics/easyproto"
)

// maxFieldNum is the largest field number protobuf allows (2^29-1,
// https://protobuf.dev/programming-guides/proto3/#assigning).
const maxFieldNum = 1<<29 - 1

// skippedField is the FieldNum nextField reports for a group it skipped. No
// valid field has this number, so every decoder's switch ignores it.
const skippedField = math.MaxUint32

// protobuf wire types (https://protobuf.dev/programming-guides/encoding/#structure).
const (
	wireVarint     = 0
	wireI64        = 1
	wireLen        = 2
	wireStartGroup = 3
	wireEndGroup   = 4
	wireI32        = 5
)

var errFieldNum = errors.New("invalid field number")

// wireField is one field of a protobuf message, as read by nextField. Its
// accessors mirror easyproto.FieldContext's: each reports false when the
// field's wire type is not the one it reads, so that a field sent with an
// unexpected wire type is ignored like an unknown field.
//
// The checker reads fields with its own type rather than
// easyproto.FieldContext because that type's fields are unexported: its
// reader cannot be inlined into the walks, and the walk of a span paid two
// calls per field (a wrapper, then easyproto's NextField), about half of CheckTraces'
// time. The hot loops now read the commonest fields inline (readShort,
// skipScalar) and everything else in one call (nextField), which hands
// what is unusual to easyproto, the reference for every other encoding.
type wireField struct {
	FieldNum uint32
	wire     uint8
	data     []byte // wireLen
	value    uint64 // wireVarint, wireI64, wireI32
}

// MessageData returns the payload of a length-delimited field.
func (f *wireField) MessageData() ([]byte, bool) {
	if f.wire != wireLen {
		return nil, false
	}
	return f.data, true
}

// Bytes is MessageData, for bytes fields.
func (f *wireField) Bytes() ([]byte, bool) { return f.MessageData() }

// String returns a string field's payload without copying.
func (f *wireField) String() (string, bool) {
	if f.wire != wireLen {
		return "", false
	}
	return bytesToString(f.data), true
}

// Uint64 returns a varint field's value.
func (f *wireField) Uint64() (uint64, bool) {
	return f.value, f.wire == wireVarint
}

// Fixed64 returns a fixed64 (or double) field's value.
func (f *wireField) Fixed64() (uint64, bool) {
	return f.value, f.wire == wireI64
}

// Fixed32 returns a fixed32 (or float) field's value.
func (f *wireField) Fixed32() (uint32, bool) {
	return uint32(f.value), f.wire == wireI32
}

// readShort reads the commonest field of OTLP: a length-delimited field
// with a one-byte tag and a length under 128.
func (f *wireField) readShort(src []byte) ([]byte, bool) {
	if len(src) >= 2 {
		// The tag byte (src[0]) has no continuation bit, wire type LEN
		// and a field number other than 0; the length byte (src[1]) has
		// no continuation bit.
		if tl := uint16(src[0]) | uint16(src[1])<<8; tl&0x8087 == wireLen && tl&0x78 != 0 {
			if end := 2 + int(src[1]); end <= len(src) {
				f.FieldNum, f.wire, f.data = uint32(src[0]>>3), wireLen, src[2:end]
				return src[end:], true
			}
		}
	}
	return src, false
}

// skipScalar skips a field the caller never inspects when it is a
// fixed64, fixed32 or one-byte varint with a one-byte tag (timestamps,
// dropped counts, enums, flags); ok is false for anything else, which the
// caller then reads with readShort or nextField. A span is a third
// such fields, and skipping them here saves a call each.
func skipScalar(src []byte) (tail []byte, ok bool) {
	if len(src) < 2 || src[0] < 8 {
		return src, false
	}
	switch src[0] & 0x87 {
	case wireI64:
		if len(src) >= 9 {
			return src[9:], true
		}
	case wireVarint:
		if src[1] < 0x80 {
			return src[2:], true
		}
	case wireI32:
		if len(src) >= 5 {
			return src[5:], true
		}
	}
	return src, false
}

// nextField reads the next field of src into f and returns the rest of src.
//
// It accepts exactly what easyproto's NextField accepts, plus the checks
// protobuf-go makes: field number 0 and numbers above 2^29-1 are
// malformed. A group (wire types 3/4, deprecated but still valid on the
// wire) is skipped as a whole and reported as skippedField, because no
// OTLP field is a group and protobuf-go keeps such fields as unknown
// fields.
//
// A field with a one-byte tag (all of OTLP's but a few, such as
// Span.flags) is read here, in one call; a longer tag, a group or a
// malformed field goes through easyproto's reader, so that its rules and
// errors stay the reference. It is too large to inline: the hot loops try
// readShort and skipScalar, which inline, before calling it.
func nextField(f *wireField, src []byte) ([]byte, error) {
	if len(src) >= 2 && src[0] < 0x80 && src[0] >= 8 {
		num := uint32(src[0] >> 3)
		switch src[0] & 7 {
		case wireLen:
			if n, k := binary.Uvarint(src[1:]); k > 0 && n <= uint64(len(src)-1-k) {
				f.FieldNum, f.wire = num, wireLen
				f.data = src[1+k : 1+k+int(n)]
				return src[1+k+int(n):], nil
			}
		case wireI64:
			if len(src) >= 9 {
				f.FieldNum, f.wire = num, wireI64
				f.value = binary.LittleEndian.Uint64(src[1:])
				return src[9:], nil
			}
		case wireVarint:
			if v, k := binary.Uvarint(src[1:]); k > 0 {
				f.FieldNum, f.wire, f.value = num, wireVarint, v
				return src[1+k:], nil
			}
		case wireI32:
			if len(src) >= 5 {
				f.FieldNum, f.wire = num, wireI32
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
		f.wire, f.data = wireLen, data
	} else if v, ok := fc.Uint64(); ok {
		f.wire, f.value = wireVarint, v
	} else if v, ok := fc.Fixed64(); ok {
		f.wire, f.value = wireI64, v
	} else if v, ok := fc.Fixed32(); ok {
		f.wire, f.value = wireI32, uint64(v)
	} else {
		f.wire = wireStartGroup // a skipped group: FieldNum is skippedField
	}
	return tail, nil
}

// NextField is the field reader of the Check* functions for other packages
// that walk OTLP protobuf with easyproto (otlpjson's encoder, otlpview), so
// that they accept exactly what Check accepts: field numbers 0 and above
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

// skipGroup is the slow path of nextField: src starts with a field easyproto
// could not read. If it is a start-group tag, the group is skipped up to its
// matching end-group tag; otherwise origErr is returned.
func skipGroup(fc *easyproto.FieldContext, src []byte, origErr error) ([]byte, error) {
	tag, n := binary.Uvarint(src)
	if n <= 0 || tag&7 != wireStartGroup {
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
	fc.FieldNum = skippedField
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
		case wireVarint:
			_, n = binary.Uvarint(src)
			if n <= 0 {
				return src, fmt.Errorf("cannot read varint field #%d", fieldNum)
			}
			src = src[n:]
		case wireI64:
			if len(src) < 8 {
				return src, fmt.Errorf("cannot read i64 field #%d", fieldNum)
			}
			src = src[8:]
		case wireI32:
			if len(src) < 4 {
				return src, fmt.Errorf("cannot read i32 field #%d", fieldNum)
			}
			src = src[4:]
		case wireLen:
			l, n := binary.Uvarint(src)
			if n <= 0 || uint64(len(src)-n) < l {
				return src, fmt.Errorf("cannot read len field #%d", fieldNum)
			}
			src = src[n+int(l):]
		case wireStartGroup:
			var err error
			src, err = skipGroupBody(src, fieldNum, depth+1)
			if err != nil {
				return src, err
			}
		case wireEndGroup:
			if fieldNum != num {
				return src, fmt.Errorf("end of group #%d inside group #%d", fieldNum, num)
			}
			return src, nil
		default:
			return src, fmt.Errorf("unknown wire type %d", tag&7)
		}
	}
}

// isPackedFixed reports whether fc is a packed run of fixed-size elements
// of the given size; a malformed run makes the whole message malformed.
func checkPackedFixed(fc *wireField, size int) error {
	data, ok := fc.MessageData()
	if !ok {
		return nil
	}
	if len(data)%size != 0 {
		return fmt.Errorf("packed field #%d is %d bytes, not a multiple of %d", fc.FieldNum, len(data), size)
	}
	return nil
}

// checkPackedVarints verifies that a packed varint run is well-formed.
func checkPackedVarints(fc *wireField) error {
	data, ok := fc.MessageData()
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
			return fmt.Errorf("cannot read packed varint in field #%d", fc.FieldNum)
		}
		data = data[n:]
	}
	return nil
}

// posError is a decoding error and the position, inside the request, of the
// message that could not be decoded. Positions are prepended on the way out
// of the recursion, so the happy path never formats anything.
type posError struct {
	path  string
	elems int  // elements in path
	cut   bool // inner elements were dropped (see maxPathElems)
	err   error
}

// maxPathElems caps the elements a posError keeps: the outermost ones,
// which locate the item (the deepest envelope, resource_metrics down to an
// exemplar's filtered attribute value, has 9). Without the cap, an error
// from AnyValue nested to the depth limit would name every level, and
// building that path one level at a time would cost time and memory
// quadratic in the depth.
const maxPathElems = 16

func (e *posError) Error() string {
	if e.path == "" {
		return "cannot decode request: " + e.err.Error()
	}
	if e.cut {
		return "cannot decode " + e.path + "...: " + e.err.Error()
	}
	return "cannot decode " + e.path + ": " + e.err.Error()
}

func (e *posError) Unwrap() error { return e.err }

// at prefixes err's position with name[idx] (idx < 0: just name).
func at(err error, name string, idx int) error {
	var elem string
	if idx >= 0 {
		elem = fmt.Sprintf("%s[%d]", name, idx)
	} else {
		elem = name
	}
	if pe, ok := err.(*posError); ok {
		switch {
		case pe.path == "":
			pe.path = elem
		case pe.elems == maxPathElems:
			// Drop the innermost element; names hold no dots.
			pe.path = elem + "." + pe.path[:strings.LastIndexByte(pe.path, '.')]
			pe.cut = true
			return pe
		default:
			pe.path = elem + "." + pe.path
		}
		pe.elems++
		return pe
	}
	return &posError{path: elem, elems: 1, err: err}
}

// topLevel wraps an error that has no position yet.
func topLevel(err error) error {
	if _, ok := err.(*posError); ok {
		return err
	}
	return &posError{err: err}
}

// ErrorAt locates err in element idx of the repeated field name (idx < 0:
// in the singular field name) of the message being decoded, as the Check*
// functions locate theirs, for packages that decode OTLP requests with
// NextField (otlpview): each enclosing message adds its own field on the
// way out, the request itself with name "", and ErrorPosition then splits
// the result. Call it on the error path only: it formats the position.
func ErrorAt(err error, name string, idx int) error {
	if name == "" {
		return topLevel(err)
	}
	return at(err, name, idx)
}

// ErrorPosition splits an error returned by a Check* or AppendValid*
// function, or by otlpview's decoders and iterators, into the position of
// the bad data inside the request (e.g.
// "resource_spans[0].scope_spans[0].spans[5].attributes[3]", with "..."
// appended when inner levels were cut) and what is wrong there. ok is
// false for errors that carry no position. The handler sends both as a
// google.rpc.BadRequest field violation.
func ErrorPosition(err error) (field, description string, ok bool) {
	pe, isPos := errors.AsType[*posError](err)
	if !isPos || pe.path == "" {
		return "", "", false
	}
	field = pe.path
	if pe.cut {
		field += "..."
	}
	return field, pe.err.Error(), true
}
