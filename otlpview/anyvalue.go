package otlpview

import (
	"math"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// ValueKind is the kind of value an AnyValue holds.
type ValueKind uint8

// The AnyValue kinds. KindEmpty is an AnyValue with no value set, which
// common.proto says represents a null; it is also what an AnyValue holding
// only string_value_strindex reads as, since that field belongs to the
// Profiling signal and other signals must treat it as absent.
const (
	KindEmpty ValueKind = iota
	KindString
	KindBool
	KindInt
	KindDouble
	KindBytes
	KindArray
	KindKVList
)

var kindNames = [...]string{"Empty", "String", "Bool", "Int", "Double", "Bytes", "Array", "KVList"}

// String returns the kind's name, e.g. "KVList".
func (k ValueKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "ValueKind(?)"
}

// AnyValue is a view of an AnyValue message. Accessors for another kind
// than Kind() return the zero value.
type AnyValue struct {
	kind ValueKind
	num  uint64 // bool, int64 or float64 bits
	data []byte // string, bytes, or the ArrayValue / KeyValueList message
}

// Kind returns which value is set.
func (v *AnyValue) Kind() ValueKind { return v.kind }

// Str returns the string value. It aliases the source buffer.
func (v *AnyValue) Str() string {
	if v.kind != KindString {
		return ""
	}
	return bytesToString(v.data)
}

// Bool returns the bool value.
func (v *AnyValue) Bool() bool { return v.kind == KindBool && v.num != 0 }

// Int returns the int64 value.
func (v *AnyValue) Int() int64 {
	if v.kind != KindInt {
		return 0
	}
	return int64(v.num)
}

// Double returns the double value.
func (v *AnyValue) Double() float64 {
	if v.kind != KindDouble {
		return 0
	}
	return math.Float64frombits(v.num)
}

// Bytes returns the bytes value. It aliases the source buffer.
func (v *AnyValue) Bytes() []byte {
	if v.kind != KindBytes {
		return nil
	}
	return v.data
}

// Array returns the elements of an array value.
func (v *AnyValue) Array() Values {
	if v.kind != KindArray {
		return Values{}
	}
	return Values{src: v.data}
}

// KVList returns the pairs of a kvlist value.
func (v *AnyValue) KVList() KeyValues {
	if v.kind != KindKVList {
		return KeyValues{}
	}
	return KeyValues{src: v.data, field: otlppb.KeyValueListValues}
}

// decode sets v from an AnyValue message.
func (v *AnyValue) decode(src []byte) error {
	*v = AnyValue{}
	return v.merge(src)
}

// merge decodes an AnyValue message into v, keeping what src does not set:
// protobuf merges repeated occurrences of a singular message field. The
// last member of the oneof on the wire wins (for array_value and
// kvlist_value protobuf would concatenate two occurrences of the same
// member; views keep the last one).
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
func (v *AnyValue) merge(src []byte) error {
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return err
			}
		}
		switch fc.FieldNum {
		case otlppb.AnyValueStringValue:
			if b, ok := fc.Bytes(); ok {
				*v = AnyValue{kind: KindString, data: b}
			}
		case otlppb.AnyValueBoolValue:
			if b, ok := readBool(&fc); ok {
				*v = AnyValue{kind: KindBool}
				if b {
					v.num = 1
				}
			}
		case otlppb.AnyValueIntValue:
			if n, ok := fc.Uint64(); ok {
				*v = AnyValue{kind: KindInt, num: n}
			}
		case otlppb.AnyValueDoubleValue:
			if n, ok := fc.Fixed64(); ok {
				*v = AnyValue{kind: KindDouble, num: n}
			}
		case otlppb.AnyValueArrayValue:
			if b, ok := fc.MessageData(); ok {
				*v = AnyValue{kind: KindArray, data: b}
			}
		case otlppb.AnyValueKvlistValue:
			if b, ok := fc.MessageData(); ok {
				*v = AnyValue{kind: KindKVList, data: b}
			}
		case otlppb.AnyValueBytesValue:
			if b, ok := fc.Bytes(); ok {
				*v = AnyValue{kind: KindBytes, data: b}
			}
		case otlppb.AnyValueStringValueStrindex:
			if _, ok := fc.Uint64(); ok {
				*v = AnyValue{}
			}
		}
	}
	return nil
}

// KeyValue is a view of a KeyValue message.
//
//	message KeyValue {
//	  string key = 1;
//	  AnyValue value = 2;
//	  int32 key_strindex = 3;
//	}
//
// key_strindex belongs to the Profiling signal and is ignored, as
// common.proto asks of other signals.
type KeyValue struct {
	Key   string
	Value AnyValue
}

func (kv *KeyValue) decode(src []byte) error {
	kv.Key = ""
	kv.Value = AnyValue{}
	var fc otlppb.Field
	for len(src) > 0 {
		var ok bool
		if src, ok = fc.ReadShort(src); !ok {
			var err error
			if src, err = fc.Read(src); err != nil {
				return err
			}
		}
		switch fc.FieldNum {
		case otlppb.KeyValueKey:
			if s, ok := fc.String(); ok {
				kv.Key = s
			}
		case otlppb.KeyValueValue:
			if data, ok := fc.MessageData(); ok {
				if err := kv.Value.merge(data); err != nil {
					return at(err, "value", -1)
				}
			}
		}
	}
	return nil
}

// rawIter yields the payloads of every occurrence of one length-delimited
// field of a message, in wire order. It is the engine of all the lazy
// iterators of this package: each embeds one, which gives it Err.
type rawIter struct {
	src   []byte
	field uint32
	idx   int // index of the next element
	err   error
}

func (it *rawIter) next() ([]byte, bool) {
	var fc otlppb.Field
	for len(it.src) > 0 {
		var ok bool
		if it.src, ok = fc.ReadShort(it.src); !ok {
			var err error
			if it.src, err = fc.Read(it.src); err != nil {
				it.fail(err)
				return nil, false
			}
		}
		if fc.FieldNum != it.field {
			continue
		}
		if data, ok := fc.MessageData(); ok {
			it.idx++
			return data, true
		}
	}
	return nil, false
}

func (it *rawIter) fail(err error) {
	it.err = err
	it.src = nil
}

// count returns the number of elements; on malformed input, those before
// the error.
func (it rawIter) count() int {
	for {
		if _, ok := it.next(); !ok {
			return it.idx
		}
	}
}

// decoded ends the Next of an iterator over a repeated message field: it
// records err, found inside the element just read (name is the field's
// name in error positions), and reports whether the element was decoded.
// Every such Next has this form:
//
//	data, ok := it.next()
//	return ok && it.decoded(it.e.decode(data), "events")
//
// The iterators are not one generic Iter[T] because every generic form
// measured costs something (Go 1.26). Calling decode as a method of a
// type parameter goes through the instantiation's dictionary, which
// escape analysis cannot see through, so every iterator moves to the heap:
// one allocation per iterator (with KeyValueIter alone made generic, 1,500
// per walk of a 500-span request; TestZeroAllocs). Picking the concrete decode by a type switch on &it.v,
// or by a kind byte, allocates nothing but adds the dispatch, the
// dictionary argument and a bigger frame to every element: callgrind
// instructions per walk (BenchmarkTracesDecoder/500x10/attributes,
// MetricsDecoder, LogsDecoder) went from 4,902,663, 61,288 and 237,530 to
// 5,045,084, 63,221 and 245,110 (type switch, +2.9%, +3.2%, +3.2%) and
// to 5,023,135, 63,397 and 241,452 (kind byte, +2.5%, +3.4%, +1.7%).
func (it *rawIter) decoded(err error, name string) bool {
	if err != nil {
		it.failElem(name, err)
		return false
	}
	return true
}

// failElem records an error found inside element it.idx-1. It is kept out
// of line so that decoded inlines.
//
//go:noinline
func (it *rawIter) failElem(name string, err error) {
	it.fail(at(err, name, it.idx-1))
}

// Err returns the decoding error that stopped the iteration, if any.
func (it *rawIter) Err() error { return it.err }

// KeyValues is a repeated KeyValue field (attributes, metadata, a kvlist),
// decoded lazily.
type KeyValues struct {
	src   []byte
	field uint32
}

// Iter returns an iterator over the pairs, in wire order.
func (kvs KeyValues) Iter() KeyValueIter {
	return KeyValueIter{rawIter: rawIter{src: kvs.src, field: kvs.field}}
}

// Len counts the pairs. It walks the enclosing message; on malformed
// input it counts the pairs before the error.
func (kvs KeyValues) Len() int {
	return rawIter{src: kvs.src, field: kvs.field}.count()
}

// KeyValueIter iterates over a KeyValues.
//
//	it := span.Attributes.Iter()
//	for it.Next() {
//		kv := it.KeyValue()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
type KeyValueIter struct {
	rawIter
	kv KeyValue
}

// Next decodes the next pair. It returns false at the end or on error.
func (it *KeyValueIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.kv.decode(data), "values")
}

// KeyValue returns the current pair, valid until the next call to Next.
func (it *KeyValueIter) KeyValue() *KeyValue { return &it.kv }

// Values is the elements of an array AnyValue, decoded lazily.
//
//	message ArrayValue {
//	  repeated AnyValue values = 1;
//	}
type Values struct {
	src []byte
}

// Iter returns an iterator over the elements.
func (vs Values) Iter() ValueIter {
	return ValueIter{rawIter: rawIter{src: vs.src, field: otlppb.ArrayValueValues}}
}

// Len counts the elements.
func (vs Values) Len() int {
	return rawIter{src: vs.src, field: otlppb.ArrayValueValues}.count()
}

// ValueIter iterates over Values.
type ValueIter struct {
	rawIter
	v AnyValue
}

// Next decodes the next element.
func (it *ValueIter) Next() bool {
	data, ok := it.next()
	return ok && it.decoded(it.v.decode(data), "values")
}

// Value returns the current element, valid until the next call to Next.
func (it *ValueIter) Value() *AnyValue { return &it.v }

// Strings is a repeated string field, decoded lazily.
type Strings struct {
	src   []byte
	field uint32
}

// Iter returns an iterator over the strings.
func (ss Strings) Iter() StringIter {
	return StringIter{rawIter: rawIter{src: ss.src, field: ss.field}}
}

// StringIter iterates over Strings.
type StringIter struct {
	rawIter
	s string
}

// Next moves to the next string.
func (it *StringIter) Next() bool {
	data, ok := it.next()
	if ok {
		it.s = bytesToString(data)
	}
	return ok
}

// String returns the current string. It aliases the source buffer.
func (it *StringIter) String() string { return it.s }
