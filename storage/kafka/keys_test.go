package kafka

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// Test message builders: just enough protobuf to lay out attributes.

func lenf(num uint32, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	b := binary.AppendUvarint(nil, uint64(num)<<3|otlppb.WireLen)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestXXH64 checks xxh64 against the reference implementation's values
// (xxHash's sanity tests, seed 0), over every tail length path.
func TestXXH64(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"a", 0xd24ec4f1a98c6e5b},
		{"abc", 0x44bc2cf5ad770999},
		{"message digest", 0x066ed728fceeb3be},
		{"abcdefghijklmnopqrstuvwxyz", 0xcfe1f278fa89835c},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 0xaaa46907d3047814},
		{"12345678901234567890123456789012345678901234567890123456789012345678901234567890", 0xe04a477f19ee145d},
	} {
		if got := xxh64([]byte(tt.in)); got != tt.want {
			t.Errorf("xxh64(%q) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}

func TestAppendHexID(t *testing.T) {
	id := [16]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0, 0, 0, 0, 0, 0, 0, 0xff}
	if got, want := string(appendHexID(nil, id)), "0123456789abcdef00000000000000ff"; got != want {
		t.Errorf("key %q, want %q", got, want)
	}
	if got := appendHexID(nil, [16]byte{}); len(got) != 0 {
		t.Errorf("zero trace id keyed %q, want the empty key", got)
	}
}

// TestResourceKey checks the serialisation pdatautil.MapHash hashes on a
// map with every value kind, keys out of order, a duplicate key and a
// nested map and list (the Collector's own hashes of the same attributes
// are compared in interop/kafka_producer_test.go).
func TestResourceKey(t *testing.T) {
	str := func(s string) []byte { return lenf(otlppb.AnyValueStringValue, []byte(s)) }
	pair := func(k string, v []byte) []byte {
		return cat(lenf(otlppb.KeyValueKey, []byte(k)), lenf(otlppb.KeyValueValue, v))
	}
	kv := func(k string, v []byte) []byte { return lenf(otlppb.ResourceAttributes, pair(k, v)) }
	dbl := make([]byte, 9)
	dbl[0] = otlppb.AnyValueDoubleValue<<3 | otlppb.WireI64
	binary.LittleEndian.PutUint64(dbl[1:], 0x400921fb54442d18) // 3.141592653589793
	intValue := func(v byte) []byte { return []byte{otlppb.AnyValueIntValue<<3 | otlppb.WireVarint, v} }
	attrs := cat(
		kv("z", str("last")),
		kv("a", str("first")),
		kv("b", []byte{otlppb.AnyValueBoolValue<<3 | otlppb.WireVarint, 1}), // bool true
		kv("i", intValue(0x7f)), // int 127
		kv("d", dbl),            // double
		kv("x", lenf(otlppb.AnyValueBytesValue, []byte{0xde, 0xad})), // bytes
		kv("l", lenf(otlppb.AnyValueArrayValue, cat(lenf(otlppb.ArrayValueValues, str("e1")), lenf(otlppb.ArrayValueValues, intValue(2))))),
		kv("m", lenf(otlppb.AnyValueKvlistValue, cat(lenf(otlppb.KeyValueListValues, pair("k2", str("v2"))), lenf(otlppb.KeyValueListValues, pair("k1", str("v1")))))),
		kv("a", str("shadowed")), // Map.Get finds the first "a"
		lenf(otlppb.ResourceAttributes, lenf(otlppb.KeyValueKey, []byte("e"))), // no value: the empty value
	)
	rs := lenf(otlppb.ResourceSpansResource, attrs)
	var h attrHasher
	got, err := h.resourceKey(nil, rs)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	w := func(b ...byte) { want = append(want, b...) }
	ws := func(s string) { want = append(want, s...) }
	w(hashKey)
	ws("a")
	w(hashStr)
	ws("first")
	w(hashKey)
	ws("a")
	w(hashStr)
	ws("first")
	w(hashKey)
	ws("b")
	w(hashTrue)
	w(hashKey)
	ws("d")
	w(hashDouble)
	want = binary.LittleEndian.AppendUint64(want, 0x400921fb54442d18)
	w(hashKey)
	ws("e")
	w(hashEmpty)
	w(hashKey)
	ws("i")
	w(hashInt)
	want = binary.LittleEndian.AppendUint64(want, 127)
	w(hashKey)
	ws("l")
	w(hashSliceStart, hashStr)
	ws("e1")
	w(hashInt)
	want = binary.LittleEndian.AppendUint64(want, 2)
	w(hashSliceEnd)
	w(hashKey)
	ws("m")
	w(hashMapStart, hashKey)
	ws("k1")
	w(hashStr)
	ws("v1")
	w(hashKey)
	ws("k2")
	w(hashStr)
	ws("v2")
	w(hashMapEnd)
	w(hashKey)
	ws("x")
	w(hashBytes, 0xde, 0xad)
	w(hashKey)
	ws("z")
	w(hashStr)
	ws("last")
	var wantKey []byte
	wantKey = binary.LittleEndian.AppendUint64(wantKey, xxh64(want))
	wantKey = binary.LittleEndian.AppendUint64(wantKey, xxh64(append(want, hashExtra)))
	if hex.EncodeToString(got) != hex.EncodeToString(wantKey) {
		t.Errorf("key %x, want %x (serialisation %q)", got, wantKey, want)
	}
	empty, err := h.resourceKey(nil, lenf(otlppb.ResourceSpansResource))
	if err != nil || len(empty) != 16 || hex.EncodeToString(empty) != "00000000000000000000000000000000" {
		t.Errorf("resource without attributes keyed %x (%v), want 16 zero bytes", empty, err)
	}
}

// TestResourceKeyWrongWireType: an AnyValue member sent with another wire
// type than its own is ignored by the key, as every walk of the receiver
// (otlppb.Field) and protobuf-go ignore it (an unknown field), so the value
// hashes as the members that remain: here none, the empty value.
func TestResourceKeyWrongWireType(t *testing.T) {
	kv := func(k string, v []byte) []byte {
		return lenf(otlppb.ResourceAttributes, lenf(otlppb.KeyValueKey, []byte(k)), lenf(otlppb.KeyValueValue, v))
	}
	var h attrHasher
	empty, err := h.resourceKey(nil, lenf(otlppb.ResourceSpansResource, lenf(otlppb.ResourceAttributes, lenf(otlppb.KeyValueKey, []byte("a")))))
	if err != nil {
		t.Fatal(err)
	}
	fixed := make([]byte, 9)
	fixed[0] = otlppb.AnyValueBoolValue<<3 | otlppb.WireI64
	for name, value := range map[string][]byte{
		"bool_value as fixed64":  fixed,
		"int_value as bytes":     lenf(otlppb.AnyValueIntValue, []byte{1}),
		"string_value as varint": {otlppb.AnyValueStringValue<<3 | otlppb.WireVarint, 1},
		"kvlist_value as varint": {otlppb.AnyValueKvlistValue<<3 | otlppb.WireVarint, 0},
	} {
		got, err := h.resourceKey(nil, lenf(otlppb.ResourceSpansResource, kv("a", value)))
		if err != nil || !bytes.Equal(got, empty) {
			t.Errorf("%s: key %x (%v), want the empty value's %x", name, got, err, empty)
		}
	}
}
