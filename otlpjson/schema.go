package otlpjson

// This file holds the types of the schema table (schematable.go) and the code
// that looks fields up in it by number and by JSON key; init derives the
// lookup indexes from the table and checks it.

import "encoding/binary"

// kind is the protobuf scalar type of a field, which decides both its wire type
// and its JSON representation (proto3 JSON mapping,
// https://protobuf.dev/programming-guides/json/, with the OTLP exceptions from
// opentelemetry-proto docs/specification.md "JSON Protobuf Encoding").
type kind uint8

const (
	kString kind = iota // JSON string, UTF-8
	kBytes              // JSON string, base64
	kHexID              // bytes field holding a trace/span id: JSON string, hex (OTLP exception)
	// kProfileID is Profile.profile_id: 32 hex digits on output when it
	// holds 16 bytes, as the Collector's pdata (the only OTLP/JSON reader
	// of profiles there is, pdata/internal/profileid.go) reads and writes
	// it, and base64 otherwise; on input both. specification.md "JSON
	// Protobuf Encoding" names only trace and span ids in its hex
	// exception, but pdata fails on base64 ("length mismatch"), so the
	// form written is the one that is read. A 16-byte id in base64 is 24
	// characters, never 32, so the two readings cannot be confused; the
	// receiver refuses ids of any other length (otlpdecode).
	kProfileID
	kBool     // JSON true/false
	kInt32    // JSON number
	kSint32   // JSON number, zigzag varint on the wire
	kInt64    // JSON string with decimal digits (numbers accepted on input)
	kUint32   // JSON number
	kUint64   // JSON string, varint on the wire
	kFixed32  // JSON number
	kFixed64  // JSON string
	kSfixed64 // JSON string
	kDouble   // JSON number, or "NaN", "Infinity", "-Infinity"
	kEnum     // JSON number on output (OTLP exception), number or name on input
	kMessage  // JSON object
)

// wireType is the protobuf wire type (https://protobuf.dev/programming-guides/encoding/#structure).
type wireType uint8

const (
	wtVarint wireType = 0
	wtI64    wireType = 1
	wtLen    wireType = 2
	wtI32    wireType = 5
)

// wireType returns the wire type of a single (unpacked) value of kind k.
func (k kind) wireType() wireType {
	switch k {
	case kString, kBytes, kHexID, kProfileID, kMessage:
		return wtLen
	case kFixed64, kSfixed64, kDouble:
		return wtI64
	case kFixed32:
		return wtI32
	default:
		return wtVarint
	}
}

// packable reports whether repeated fields of kind k use packed encoding in proto3.
func (k kind) packable() bool {
	return k.wireType() != wtLen
}

// is64BitInt reports whether k is a 64-bit integer, which proto3 JSON writes as a string.
func (k kind) is64BitInt() bool {
	switch k {
	case kInt64, kUint64, kFixed64, kSfixed64:
		return true
	}
	return false
}

// fieldFlags holds the cardinality and presence of a field.
type fieldFlags uint8

const (
	// fRepeated marks a repeated field: JSON array.
	fRepeated fieldFlags = 1 << iota
	// fOptional marks a proto3 `optional` scalar: it has explicit presence,
	// so its default value is still written when present.
	fOptional
	// fOneof marks a member of the message's oneof (every OTLP message has at
	// most one oneof): it has explicit presence and at most one member is set.
	fOneof
)

// msgID indexes schema; its values are declared with the table (schematable.go).
type msgID uint8

// field describes one protobuf field and its JSON form.
type field struct {
	num   uint32     // protobuf field number
	name  string     // JSON name (lowerCamelCase), used on output and accepted on input
	alias string     // proto field name (snake_case), accepted on input as protojson and the collector do
	kind  kind       // scalar type or kMessage
	flags fieldFlags // fRepeated, fOptional, fOneof
	msg   msgID      // message type for kMessage
	enum  *enumType  // value names for kEnum

	// key is `"name":`, precomputed for the encoder; quoted is `"name"`,
	// which the decoder compares with the input to match an expected key.
	key    string
	quoted string
	// omitDefault is set for singular fields without presence, whose
	// proto3 default value is not written.
	omitDefault bool
	// qhead holds the first 8 bytes of quoted (little-endian, zero-padded)
	// and qmask selects them, so that keyAt compares them in one step.
	qhead, qmask uint64
}

// keyAt reports whether src[i:] starts with f's quoted JSON name, given w,
// the word at src[i:] (wordAt). Most names are rejected or matched by one
// masked comparison: zero padding past the end of src never matches the
// bytes of a name.
func (f *field) keyAt(src []byte, i int, w uint64) bool {
	q := f.quoted
	return w&f.qmask == f.qhead && (len(q) <= 8 || (len(src)-i >= len(q) && string(src[i+8:i+len(q)]) == q[8:]))
}

// wordAt returns the 8 bytes at src[i:] as a little-endian word,
// zero-padded past the end of src.
func wordAt(src []byte, i int) uint64 {
	if len(src)-i >= 8 {
		return binary.LittleEndian.Uint64(src[i : i+8])
	}
	var w uint64
	for k := len(src) - 1; k >= i; k-- {
		w = w<<8 | uint64(src[k])
	}
	return w
}

func (f *field) repeated() bool { return f.flags&fRepeated != 0 }
func (f *field) oneof() bool    { return f.flags&fOneof != 0 }

// hasPresence reports whether the field's default value is written when set
// (messages, oneof members and proto3 `optional` scalars).
func (f *field) hasPresence() bool {
	return f.kind == kMessage || f.flags&(fOptional|fOneof) != 0
}

// special marks messages whose JSON form is not the generic field-by-field object.
type special uint8

const (
	specialNone special = iota
	// specialAny is google.protobuf.Any: {"@type": url, ...fields of the packed message}.
	// Only google.rpc.RetryInfo is transcoded; other packed types are dropped.
	specialAny
)

// message describes one protobuf message type.
type message struct {
	// name is the message name as errors and MessageType.String show it:
	// relative to pkg (nested names joined with "."), or fully qualified
	// when pkg is empty.
	name    string
	pkg     string  // protobuf package, for Schema
	fields  []field // ordered by field number
	special special

	// order lists the field numbers in .proto declaration order (oneof
	// members where the oneof is declared) when it differs from number
	// order. Writers that follow the declaration order, like protojson and
	// pdata, emit keys in this order.
	order []uint32

	// byNum maps a field number to its index in fields plus one; built by init.
	byNum []uint8
	// first is the index of the first declared field and next[i] the index
	// of the field declared after field i (wrapping around): the keys
	// Unmarshal expects first and after field i. Built by init.
	first uint8
	next  []uint8
}

// fieldIndex returns the index in m.fields of field number num, or -1.
func (m *message) fieldIndex(num uint32) int {
	if uint64(num) >= uint64(len(m.byNum)) {
		return -1
	}
	return int(m.byNum[num]) - 1
}

// lookup returns the index of the field named key (JSON name or proto name), or -1.
func (m *message) lookup(key []byte) int {
	return m.lookupFrom(key, 0)
}

// lookupFrom is lookup starting at field index hint and wrapping around,
// so that the field after the previous key's is compared first.
func (m *message) lookupFrom(key []byte, hint int) int {
	n := len(m.fields)
	if hint >= n {
		hint = 0
	}
	for i := hint; i < n; i++ {
		if f := &m.fields[i]; string(key) == f.name || string(key) == f.alias {
			return i
		}
	}
	for i := 0; i < hint; i++ {
		if f := &m.fields[i]; string(key) == f.name || string(key) == f.alias {
			return i
		}
	}
	return -1
}

// enumType lists the value names of a dense enum (value i is names[i]).
type enumType struct {
	names []string
}

// value returns the number of the enum value named name.
func (e *enumType) value(name []byte) (int32, bool) {
	for i, n := range e.names {
		if string(name) == n {
			return int32(i), true
		}
	}
	return 0, false
}

func init() {
	for i := range schema {
		m := &schema[i]
		maxNum := uint32(0)
		for j := range m.fields {
			f := &m.fields[j]
			f.key = `"` + f.name + `":`
			f.quoted = `"` + f.name + `"`
			f.omitDefault = !f.repeated() && !f.hasPresence()
			for k := 0; k < 8 && k < len(f.quoted); k++ {
				f.qhead |= uint64(f.quoted[k]) << (8 * k)
				f.qmask |= 0xff << (8 * k)
			}
			if j > 0 && f.num <= m.fields[j-1].num {
				panic("BUG: otlpjson schema for " + m.name + " is not ordered by field number")
			}
			if (f.kind == kMessage) != (f.msg != mNone) || (f.kind == kEnum) != (f.enum != nil) {
				panic("BUG: otlpjson schema for " + m.name + "." + f.name + " has an inconsistent kind")
			}
			maxNum = max(maxNum, f.num)
		}
		if len(m.fields) > 32 {
			// The decoder tracks seen fields in a uint32 bitmap.
			panic("BUG: otlpjson schema for " + m.name + " has too many fields")
		}
		m.byNum = make([]uint8, maxNum+1)
		for j := range m.fields {
			m.byNum[m.fields[j].num] = uint8(j + 1)
		}
		order := m.order
		if order == nil {
			for j := range m.fields {
				order = append(order, m.fields[j].num)
			}
		}
		if len(order) != len(m.fields) {
			panic("BUG: otlpjson schema for " + m.name + " has an incomplete declaration order")
		}
		m.next = make([]uint8, len(m.fields))
		seen := make(map[uint32]bool)
		for j, num := range order {
			fi := m.fieldIndex(num)
			if fi < 0 || seen[num] {
				panic("BUG: otlpjson schema for " + m.name + " has an invalid declaration order")
			}
			seen[num] = true
			m.next[fi] = uint8(m.fieldIndex(order[(j+1)%len(order)]))
		}
		if len(order) > 0 {
			m.first = uint8(m.fieldIndex(order[0]))
		}
	}
}
