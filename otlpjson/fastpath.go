package otlpjson

import (
	"encoding/binary"
)

// Attributes are most of an OTLP/JSON request: a span of the benchmark
// payloads has ten of them, each written as
//
//	{"key":"http.method","value":{"stringValue":"GET"}}
//
// Decoding one through decodeObject costs two nested objects, four key
// lookups, four path entries and the seen and oneof bookkeeping
// (BENCHMARKS.md §1.2). The fast paths below transcode a KeyValue whose
// value is a scalar AnyValue, and an AnyValue holding a scalar, with none of
// that. They are speculative: on anything else (other key order, more or
// fewer keys, null, a nested value, an error) they restore the position and
// the output and report false, so that decodeObject decodes the object and
// reports any error with its usual path and offset. Whitespace, escapes and
// every spelling of a scalar value that decodeValue accepts are handled, so
// the fast paths take all scalar attributes, whoever wrote them.

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

func (d *decoder) keyValueMembers() bool {
	d.pos++ // '{'
	d.skipWS()
	if !d.consumeLiteral(`"key"`) || !d.consumeColon() {
		return false
	}
	key, err := d.readString()
	if err != nil {
		return false
	}
	// key has no presence: proto3 omits the empty string, as decodeValue does.
	if len(key) > 0 {
		d.dst = append(d.dst, 1<<3|byte(wtLen))
		d.dst = binary.AppendUvarint(d.dst, uint64(len(key)))
		d.dst = append(d.dst, key...)
	}
	d.skipWS()
	if d.peek() != ',' {
		return false
	}
	d.pos++
	d.skipWS()
	if !d.consumeLiteral(`"value"`) || !d.consumeColon() || d.peek() != '{' {
		return false
	}
	d.dst = append(d.dst, 2<<3|byte(wtLen))
	start := d.beginLen()
	if !d.anyValueMembers() {
		return false
	}
	d.endLen(start)
	d.skipWS()
	if d.peek() != '}' {
		return false
	}
	d.pos++
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
	d.pos++ // '{'
	d.skipWS()
	// The members are compared in field order: stringValue, the most
	// common, first.
	m := &schema[mAnyValue]
	var f *field
	for i := range m.fields {
		if c := &m.fields[i]; c.kind != kMessage && d.consumeLiteral(c.quoted) {
			f = c
			break
		}
	}
	if f == nil || !d.consumeColon() || d.peek() == 'n' {
		return false
	}
	// Exactly what decodeObject does for a scalar member: decodeValue
	// touches neither the path nor the depth, and writes a oneof member
	// even when it holds the default value.
	if d.decodeValue(f, false) != nil {
		return false
	}
	d.skipWS()
	if d.peek() != '}' {
		return false
	}
	d.pos++
	return true
}

// consumeColon consumes the ':' after an object key and the whitespace
// around it, and reports whether it was there.
func (d *decoder) consumeColon() bool {
	d.skipWS()
	if d.peek() != ':' {
		return false
	}
	d.pos++
	d.skipWS()
	return true
}
