package otlpview

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// The scalar readers below return ok=false when the field arrived with a
// wire type its declaration does not allow; the caller then ignores it, as
// protobuf-go treats such a field as unknown.

// readInt32 reads an int32 or enum field. protobuf encodes negative int32 as
// 10-byte varints of the sign-extended value and decoders truncate to 32
// bits, which easyproto's Int32/Enum refuse to do.
func readInt32(fc *otlppb.Field) (int32, bool) {
	u, ok := fc.Uint64()
	return int32(u), ok
}

// readUint32 reads a uint32 field, truncating like protobuf-go.
func readUint32(fc *otlppb.Field) (uint32, bool) {
	u, ok := fc.Uint64()
	return uint32(u), ok
}

// readSint32 reads a zigzag-encoded sint32, truncating to 32 bits first like
// protobuf-go.
func readSint32(fc *otlppb.Field) (int32, bool) {
	u, ok := fc.Uint64()
	v := uint32(u)
	return int32(v>>1) ^ -int32(v&1), ok
}

// readBool reads a bool: any non-zero varint is true.
func readBool(fc *otlppb.Field) (bool, bool) {
	u, ok := fc.Uint64()
	return u != 0, ok
}

// appendFixed64s appends the values of a repeated fixed64/double field in
// either encoding. Non-matching wire types are ignored (unknown field).
func appendFixed64s(dst []uint64, fc *otlppb.Field) ([]uint64, error) {
	if v, ok := fc.Fixed64(); ok {
		return append(dst, v), nil
	}
	data, ok := fc.MessageData()
	if !ok {
		return dst, nil
	}
	if len(data)%8 != 0 {
		return dst, fmt.Errorf("packed field #%d is %d bytes, not a multiple of 8", fc.FieldNum, len(data))
	}
	dst = slices.Grow(dst, len(data)/8)
	for len(data) >= 8 {
		dst = append(dst, binary.LittleEndian.Uint64(data))
		data = data[8:]
	}
	return dst, nil
}

// appendDoubles is appendFixed64s for double fields.
func appendDoubles(dst []float64, fc *otlppb.Field) ([]float64, error) {
	if v, ok := fc.Double(); ok {
		return append(dst, v), nil
	}
	data, ok := fc.MessageData()
	if !ok {
		return dst, nil
	}
	if len(data)%8 != 0 {
		return dst, fmt.Errorf("packed field #%d is %d bytes, not a multiple of 8", fc.FieldNum, len(data))
	}
	dst = slices.Grow(dst, len(data)/8)
	for len(data) >= 8 {
		dst = append(dst, math.Float64frombits(binary.LittleEndian.Uint64(data)))
		data = data[8:]
	}
	return dst, nil
}

// appendVarints appends the values of a repeated uint64 field in either
// encoding.
func appendVarints(dst []uint64, fc *otlppb.Field) ([]uint64, error) {
	if v, ok := fc.Uint64(); ok {
		return append(dst, v), nil
	}
	data, ok := fc.MessageData()
	if !ok {
		return dst, nil
	}
	for len(data) > 0 {
		v, n := binary.Uvarint(data)
		if n <= 0 {
			return dst, fmt.Errorf("cannot read packed varint in field #%d", fc.FieldNum)
		}
		dst = append(dst, v)
		data = data[n:]
	}
	return dst, nil
}

// at locates err, found in element idx of the repeated field name (idx <
// 0: in the singular field name), for otlppb.ErrorPosition; the
// enclosing messages prefix their own fields on the way out. The
// callback's error passes through unchanged. It is kept out of line, as
// the error path should be: inlined into every decoder, it cost the walks
// up to 1.8% more instructions (callgrind), through register shuffles
// around the hot calls of the bigger functions.
//
//go:noinline
func at(err error, name string, idx int) error {
	if err == errCallback {
		return err
	}
	return otlppb.ErrorAt(err, name, idx)
}

// levelNames are the field names of the three levels of a request of one
// signal (resources, scopes, items), in error positions.
type levelNames [3]string

var (
	traceLevels   = levelNames{"resource_spans", "scope_spans", "spans"}
	metricLevels  = levelNames{"resource_metrics", "scope_metrics", "metrics"}
	logLevels     = levelNames{"resource_logs", "scope_logs", "log_records"}
	profileLevels = levelNames{"resource_profiles", "scope_profiles", "profiles"}
)

// bytesToString returns a string aliasing b, as easyproto's String does, so
// that views do not copy.
func bytesToString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// stringToBytes returns the bytes of s without copying; they must not be
// modified.
func stringToBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// int64s returns v as int64s without copying: protobuf's int64 is the
// varint of the two's complement, which is what appendVarints read.
func int64s(v []uint64) []int64 {
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(v))), len(v))
}
