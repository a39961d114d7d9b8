package otlpjson

import (
	"encoding/binary"
	"math"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// Attributes are most of an OTLP/JSON request: a span of the benchmark
// payloads has ten of them, each written as
//
//	{"key":"http.method","value":{"stringValue":"GET"}}
//
// Decoding one through decodeObject costs two nested objects, four key
// matches, four path entries and the seen and oneof bookkeeping
// (BENCHMARKS.md §1.2). The fast paths below transcode a KeyValue whose
// value is a scalar AnyValue, and an AnyValue holding a scalar, with none of
// that. They are speculative: on anything else (other key order, more or
// fewer keys, null, a nested value, an error) they restore the position and
// the output and report false, so that decodeObject decodes the object and
// reports any error with its usual path and offset. Whitespace, escapes and
// every spelling of a scalar value that decodeValue accepts are handled, so
// the fast paths take all scalar attributes, whoever wrote them.

// The keys the fast paths expect, quoted. Constants, so that the compiler
// compares them with a load or two instead of calling memequal.
// With the colon, they match the compact form in one comparison.
const (
	qKey         = `"key"`
	qValue       = `"value"`
	qStringValue = `"stringValue"`
	qIntValue    = `"intValue"`

	qKeyColon         = qKey + ":"
	qValueColon       = qValue + ":"
	qStringValueColon = qStringValue + ":"
	qIntValueColon    = qIntValue + ":"
)

// keyValueFast transcodes the KeyValue object at the current position (at
// its '{') into the payload of its length-delimited field, if the object is
// {"key": string, "value": {scalar member}} in that order, and reports
// whether it did; otherwise it consumes and appends nothing.
//
//	message KeyValue {
//	  string key = 1;
//	  AnyValue value = 2;
//	  int32 key_strindex = 3;
//	}
func (d *decoder) keyValueFast() bool {
	// decodeObject would reject the KeyValue or its AnyValue as too deep.
	if d.generic || d.depth+1 >= MaxDepth {
		return false
	}
	pos, mark := d.pos, len(d.dst)
	if d.keyValueMembers() {
		return true
	}
	d.pos, d.dst = pos, d.dst[:mark]
	return false
}

// keyValueMembers is the body of keyValueFast, without the restore. Like
// anyValueMembers it scans with a local index, which the compiler keeps in
// a register, and stores d.pos only where it calls the general code.
func (d *decoder) keyValueMembers() bool {
	src := d.src
	i := skipWSAt(src, d.pos+1) // after '{'
	var ok bool
	switch {
	case len(src)-i >= len(qKeyColon) && string(src[i:i+len(qKeyColon)]) == qKeyColon:
		i = skipWSAt(src, i+len(qKeyColon))
	case len(src)-i >= len(qKey) && string(src[i:i+len(qKey)]) == qKey:
		if i, ok = colonAt(src, i+len(qKey)); !ok {
			return false
		}
	default:
		return false
	}
	key, i, ok := d.stringAt(i)
	// A key past the output limit is decodeObject's to refuse.
	if !ok || len(key) > d.limitEnd-len(d.dst) {
		return false
	}
	// key has no presence: proto3 omits the empty string, as decodeValue
	// does. The appends go through a local slice, kept in registers.
	dst := d.dst
	if len(key) > 0 {
		dst = append(dst, otlppb.KeyValueKey<<3|byte(wtLen))
		dst = binary.AppendUvarint(dst, uint64(len(key)))
		dst = append(dst, key...)
	}
	i = skipWSAt(src, i)
	if i >= len(src) || src[i] != ',' {
		return false
	}
	i = skipWSAt(src, i+1)
	switch {
	case len(src)-i >= len(qValueColon) && string(src[i:i+len(qValueColon)]) == qValueColon:
		i = skipWSAt(src, i+len(qValueColon))
	case len(src)-i >= len(qValue) && string(src[i:i+len(qValue)]) == qValue:
		if i, ok = colonAt(src, i+len(qValue)); !ok {
			return false
		}
	default:
		return false
	}
	if i >= len(src) || src[i] != '{' {
		return false
	}
	// The tag of the value and one byte for its length (beginLen).
	d.dst = append(dst, otlppb.KeyValueValue<<3|byte(wtLen), 0)
	start := len(d.dst)
	d.pos = i
	if !d.anyValueMembers() {
		return false
	}
	d.endLen(start)
	i = skipWSAt(src, d.pos)
	if i >= len(src) || src[i] != '}' {
		return false
	}
	d.pos = i + 1
	return true
}

// anyValueFast transcodes the AnyValue object at the current position (at
// its '{') into the payload of its length-delimited field, if the object
// has exactly one member and that member is a scalar (not arrayValue,
// kvlistValue or null), and reports whether it did; otherwise it consumes
// and appends nothing. Log bodies take this path.
func (d *decoder) anyValueFast() bool {
	if d.generic || d.depth >= MaxDepth {
		return false
	}
	pos, mark := d.pos, len(d.dst)
	if d.anyValueMembers() {
		return true
	}
	d.pos, d.dst = pos, d.dst[:mark]
	return false
}

// anyValueMembers is the body of anyValueFast, without the restore.
//
//	message AnyValue {
//	  oneof value {
//	    string string_value = 1;
//	    bool bool_value = 2;
//	    int64 int_value = 3;
//	    double double_value = 4;
//	    ArrayValue array_value = 5;
//	    KeyValueList kvlist_value = 6;
//	    bytes bytes_value = 7;
//	    int32 string_value_strindex = 8;
//	  }
//	}
func (d *decoder) anyValueMembers() bool {
	src := d.src
	i := skipWSAt(src, d.pos+1) // after '{'
	// The common members, stringValue and intValue, compact or not, have
	// their own cases; member is their field number.
	member, ok := uint32(0), true
	switch {
	case len(src)-i >= len(qStringValueColon) && string(src[i:i+len(qStringValueColon)]) == qStringValueColon:
		i, member = skipWSAt(src, i+len(qStringValueColon)), otlppb.AnyValueStringValue
	case len(src)-i >= len(qIntValueColon) && string(src[i:i+len(qIntValueColon)]) == qIntValueColon:
		i, member = skipWSAt(src, i+len(qIntValueColon)), otlppb.AnyValueIntValue
	case len(src)-i >= len(qStringValue) && string(src[i:i+len(qStringValue)]) == qStringValue:
		i, ok = colonAt(src, i+len(qStringValue))
		member = otlppb.AnyValueStringValue
	case len(src)-i >= len(qIntValue) && string(src[i:i+len(qIntValue)]) == qIntValue:
		i, ok = colonAt(src, i+len(qIntValue))
		member = otlppb.AnyValueIntValue
	}
	if !ok {
		return false
	}
	switch member {
	case otlppb.AnyValueStringValue:
		// A oneof member: written even when empty.
		var s []byte
		if s, i, ok = d.stringAt(i); !ok || len(s) > d.limitEnd-len(d.dst) {
			return false
		}
		dst := append(d.dst, otlppb.AnyValueStringValue<<3|byte(wtLen))
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		d.dst = append(dst, s...)
		d.pos = i
	case otlppb.AnyValueIntValue:
		// proto3 JSON writes int64 as a string of digits; other forms
		// (numbers, signs, exponents) and errors are decodeValue's.
		if v, end, ok := quotedDigits(src, i); ok && v <= math.MaxInt64 {
			d.dst = binary.AppendUvarint(append(d.dst, otlppb.AnyValueIntValue<<3|byte(wtVarint)), v)
			d.pos = end
			break
		}
		d.pos = i
		if d.peek() == 'n' || d.decodeValue(&schema[mAnyValue].fields[schema[mAnyValue].fieldIndex(otlppb.AnyValueIntValue)], false) != nil {
			return false
		}
	default:
		// The other scalar members, in field order.
		m := &schema[mAnyValue]
		var f *field
		for k := range m.fields {
			if c := &m.fields[k]; c.kind != kMessage && literalAt(src, i, c.quoted) {
				f = c
				i += len(c.quoted)
				break
			}
		}
		if f == nil {
			return false
		}
		i, ok := colonAt(src, i)
		if !ok || i >= len(src) || src[i] == 'n' {
			return false
		}
		// Exactly what decodeObject does for a scalar member: decodeValue
		// touches neither the path nor the depth, and writes a oneof
		// member even when it holds the default value.
		d.pos = i
		if d.decodeValue(f, false) != nil {
			return false
		}
	}
	i = skipWSAt(src, d.pos)
	if i >= len(src) || src[i] != '}' {
		return false
	}
	d.pos = i + 1
	return true
}

// stringAt reads the JSON string at src[i] and returns its value and the
// index after it. Strings without escapes, control characters or non-ASCII
// bytes are sliced from the input; others are left to readString.
func (d *decoder) stringAt(i int) ([]byte, int, bool) {
	src := d.src
	if i < len(src) && src[i] == '"' {
		if end, closed := scanString(src, i+1); closed {
			return src[i+1 : end], end + 1, true
		}
	}
	return d.stringAtSlow(i)
}

func (d *decoder) stringAtSlow(i int) ([]byte, int, bool) {
	d.pos = i
	s, err := d.readString()
	return s, d.pos, err == nil
}

// literalAt reports whether src[i:] starts with lit.
func literalAt(src []byte, i int, lit string) bool {
	return len(src)-i >= len(lit) && string(src[i:i+len(lit)]) == lit
}

// colonAt skips the ':' after an object key at src[i] and the whitespace
// around it, and reports whether it was there. The test for the compact
// form inlines.
func colonAt(src []byte, i int) (int, bool) {
	if i+1 < len(src) && src[i] == ':' && src[i+1] > ' ' {
		return i + 1, true
	}
	return colonAtSlow(src, i)
}

func colonAtSlow(src []byte, i int) (int, bool) {
	i = skipWSAt(src, i)
	if i >= len(src) || src[i] != ':' {
		return i, false
	}
	return skipWSAt(src, i+1), true
}
