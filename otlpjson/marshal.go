package otlpjson

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// Marshal appends to dst the OTLP/JSON encoding of the protobuf message src
// of type t and returns the extended buffer. ExportTraceServiceRequest has
// the same wire format as TracesData, and likewise for metrics, logs and
// profiles.
//
// The output is canonical, so that Unmarshal followed by Marshal reproduces
// it byte for byte: no whitespace, keys in field-number order, proto3 default
// values omitted except for oneof members and `optional` fields that are
// present, 64-bit integers as decimal strings, enums as integers, trace and
// span ids and 16-byte profile ids as lowercase hex (the form the
// Collector's pdata reads), other bytes as padded standard base64.
//
// Protobuf merge semantics apply to src as in proto.Unmarshal: the last value
// of a repeated scalar field wins, repeated occurrences of a message field are
// merged, the last member set in a oneof wins, and unknown fields (including
// known field numbers with an unexpected wire type) are skipped. Invalid UTF-8
// in string fields is replaced by U+FFFD.
//
// On error Marshal returns dst unchanged and an *Error.
func Marshal(dst []byte, t MessageType, src []byte) ([]byte, error) {
	m := t.msg()
	if m == nil {
		return dst, fmt.Errorf("otlpjson: unknown %s", t)
	}
	if len(src) > math.MaxInt32 {
		// Protobuf messages are limited to 2 GiB; entry offsets rely on it.
		return dst, &Error{Path: m.name, Reason: "message larger than 2 GiB"}
	}
	e := encoderPool.Get().(*encoder)
	n := len(dst)
	e.dst = dst
	e.src = src
	e.root = m.name
	e.spans = append(e.spans[:0], span{0, uint32(len(src))})
	err := e.encodeMessage(m, 0, 1)
	dst = e.dst
	e.reset()
	encoderPool.Put(e)
	if err != nil {
		return dst[:n], err
	}
	return dst, nil
}

var encoderPool = sync.Pool{New: func() any { return &encoder{} }}

// encoder holds the reusable state of one Marshal call.
type encoder struct {
	dst []byte
	src []byte

	// ents is a stack of the fields of the messages being encoded, one
	// segment per nesting level, so that each message's fields can be
	// written in field-number order without allocating.
	ents []entry

	// spans is a stack of the input ranges holding the messages being
	// encoded. A non-repeated message field that occurs several times is
	// the merge of its occurrences, which protobuf defines as the
	// concatenation of their bytes; encoding the ranges one after the other
	// gives that without copying.
	spans []span

	path  []pathElem
	depth int
	root  string
}

// span is the input range src[start:end].
type span struct {
	start, end uint32
}

// entry is one field of a protobuf message in wire order. It holds no
// pointers, so that appending entries costs no GC write barriers.
type entry struct {
	v      uint64 // value of a varint/fixed field
	start  uint32 // payload of a length-delimited field: e.src[start:end]
	end    uint32
	ord    int32 // position of the field in its message
	fi     uint8 // index into message.fields
	wt     wireType
	packed bool // a packed repeated scalar
}

// data returns the payload of the length-delimited field g.
func (e *encoder) data(g *entry) []byte {
	return e.src[g.start:g.end]
}

func (e *encoder) reset() {
	e.dst = nil
	e.src = nil
	e.ents = e.ents[:0]
	e.spans = e.spans[:0]
	e.path = e.path[:0]
	e.depth = 0
	e.root = ""
}

func (e *encoder) errorf(off int, format string, args ...any) error {
	return &Error{
		Path:   formatPath(e.root, e.path),
		Offset: off,
		Reason: fmt.Sprintf(format, args...),
	}
}

// wireTypeOf returns the wire type of the field read into fc. easyproto keeps
// it private, but every typed accessor reports whether it matches.
func wireTypeOf(fc *easyproto.FieldContext) wireType {
	if _, ok := fc.MessageData(); ok {
		return wtLen
	}
	if _, ok := fc.Uint64(); ok {
		return wtVarint
	}
	if _, ok := fc.Fixed64(); ok {
		return wtI64
	}
	return wtI32
}

// rawValue returns the value of a non-length-delimited field as the wire
// carries it: the varint, or the little-endian fixed64/fixed32 bits.
func rawValue(fc *easyproto.FieldContext) uint64 {
	if v, ok := fc.Uint64(); ok {
		return v
	}
	if v, ok := fc.Fixed64(); ok {
		return v
	}
	v, _ := fc.Fixed32()
	return uint64(v)
}

// encodeMessage appends the JSON object for the protobuf message m whose
// bytes are the concatenation of the input ranges e.spans[lo:hi].
func (e *encoder) encodeMessage(m *message, lo, hi int) error {
	if e.depth >= MaxDepth {
		return e.errorf(int(e.spans[lo].start), "message nesting exceeds %d levels", MaxDepth)
	}
	e.depth++

	// Pass 1: collect the known fields in wire order.
	base := len(e.ents)
	sorted := true
	prev := -1
	oneofFi, oneofStart := -1, int32(0)
	ord := int32(0)
	var fc easyproto.FieldContext
	for i := lo; i < hi; i++ {
		sp := e.spans[i]
		tail := e.src[sp.start:sp.end]
		for ; len(tail) > 0; ord++ {
			fieldOff := int(sp.end) - len(tail)
			var err error
			// The one field reader of the module (otlppb), so that
			// everything the receiver accepts and stores can be
			// exported: it skips groups (deprecated but valid
			// protobuf; protobuf-go keeps them as unknown fields,
			// which JSON does not show).
			tail, err = otlppb.NextField(&fc, tail)
			if err != nil {
				return e.errorf(fieldOff, "cannot read %s field: %s", m.name, err)
			}
			fi := m.fieldIndex(fc.FieldNum)
			if fi < 0 {
				continue
			}
			f := &m.fields[fi]
			packed := false
			if wt := wireTypeOf(&fc); wt != f.kind.wireType() {
				if wt != wtLen || !f.repeated() || !f.kind.packable() {
					// protobuf-go keeps a known field number with an unexpected
					// wire type as an unknown field, which JSON does not show.
					continue
				}
				packed = true
			}
			if f.oneof() && fi != oneofFi {
				// A oneof member replaces any other member set before it.
				oneofFi, oneofStart = fi, ord
			}
			g := entry{ord: ord, fi: uint8(fi), wt: f.kind.wireType(), packed: packed}
			if data, ok := fc.MessageData(); ok {
				g.end = sp.end - uint32(len(tail))
				g.start = g.end - uint32(len(data))
				g.wt = wtLen
			} else {
				g.v = rawValue(&fc)
			}
			e.ents = append(e.ents, g)
			if fi < prev {
				sorted = false
			}
			prev = fi
		}
	}
	ents := e.ents[base:]
	if !sorted {
		// Encoders normally write fields in number order; sort only when
		// they did not, keeping repeated elements in their wire order.
		slices.SortStableFunc(ents, func(a, b entry) int { return int(a.fi) - int(b.fi) })
	}

	// Pass 2: write the fields in field-number order.
	e.dst = append(e.dst, '{')
	first := true
	for i := 0; i < len(ents); {
		fi := int(ents[i].fi)
		j := i + 1
		for j < len(ents) && int(ents[j].fi) == fi {
			j++
		}
		group := ents[i:j]
		i = j
		f := &m.fields[fi]
		if f.oneof() {
			if fi != oneofFi {
				continue
			}
			for len(group) > 1 && group[0].ord < oneofStart {
				group = group[1:]
			}
		}
		mark := len(e.dst)
		if !first {
			e.dst = append(e.dst, ',')
		}
		e.dst = append(e.dst, f.key...)
		var written bool
		if f.kind == kMessage || f.repeated() {
			// Only these can fail; they need the path for the error.
			e.path = append(e.path, pathElem{name: f.name, index: -1})
			var err error
			if written, err = e.encodeField(f, group); err != nil {
				return err
			}
			e.path = e.path[:len(e.path)-1]
		} else {
			written = e.encodeScalarField(f, group)
		}
		if !written {
			e.dst = e.dst[:mark]
			continue
		}
		first = false
	}
	e.dst = append(e.dst, '}')

	e.ents = e.ents[:base]
	e.depth--
	return nil
}

// encodeField writes the value of the repeated or message field f, whose
// occurrences in the message are group. It reports false for an empty
// repeated field, which is not written.
func (e *encoder) encodeField(f *field, group []entry) (bool, error) {
	if f.repeated() {
		return e.encodeRepeated(f, group)
	}
	// Occurrences of a non-repeated message field merge.
	lo := len(e.spans)
	for k := range group {
		e.spans = append(e.spans, span{group[k].start, group[k].end})
	}
	err := e.encodeMessage(&schema[f.msg], lo, len(e.spans))
	e.spans = e.spans[:lo]
	return true, err
}

// encodeScalarField writes the value of the non-repeated scalar field f,
// whose occurrences in the message are group. It reports false for a
// proto3 default value, which is not written.
func (e *encoder) encodeScalarField(f *field, group []entry) bool {
	// The last occurrence of a scalar wins.
	g := &group[len(group)-1]
	if g.wt == wtLen {
		data := e.data(g)
		if len(data) == 0 && !f.hasPresence() {
			return false
		}
		e.appendLenValue(f, data)
		return true
	}
	if !f.hasPresence() && isDefault(f.kind, g.v) {
		return false
	}
	e.appendScalar(f.kind, g.v)
	return true
}

// encodeRepeated writes the JSON array of a repeated field.
func (e *encoder) encodeRepeated(f *field, group []entry) (bool, error) {
	e.dst = append(e.dst, '[')
	n := 0
	top := len(e.path) - 1
	for k := range group {
		g := &group[k]
		switch {
		case f.kind == kMessage:
			sub := &schema[f.msg]
			e.path[top].index = n
			if sub.special == specialAny {
				mark := len(e.dst)
				if n > 0 {
					e.dst = append(e.dst, ',')
				}
				ok, err := e.encodeAny(e.data(g), int(g.start))
				if err != nil {
					return false, err
				}
				if !ok {
					e.dst = e.dst[:mark]
					continue
				}
			} else {
				if n > 0 {
					e.dst = append(e.dst, ',')
				}
				e.spans = append(e.spans, span{g.start, g.end})
				err := e.encodeMessage(sub, len(e.spans)-1, len(e.spans))
				e.spans = e.spans[:len(e.spans)-1]
				if err != nil {
					return false, err
				}
			}
			n++
		case f.kind.wireType() == wtLen:
			if n > 0 {
				e.dst = append(e.dst, ',')
			}
			e.appendLenValue(f, e.data(g))
			n++
		case g.packed:
			var err error
			if n, err = e.appendPacked(f.kind, e.data(g), n); err != nil {
				e.path[top].index = n
				return false, e.errorf(int(g.start), "malformed packed %s", err)
			}
		default:
			if n > 0 {
				e.dst = append(e.dst, ',')
			}
			e.appendScalar(f.kind, g.v)
			n++
		}
	}
	if n == 0 {
		return false, nil
	}
	e.dst = append(e.dst, ']')
	return true, nil
}

// appendPacked writes the elements of a packed repeated scalar field
// (https://protobuf.dev/programming-guides/encoding/#packed), continuing an
// array that already has n elements, and returns the new element count.
func (e *encoder) appendPacked(k kind, data []byte, n int) (int, error) {
	for len(data) > 0 {
		var v uint64
		switch k.wireType() {
		case wtVarint:
			var size int
			v, size = binary.Uvarint(data)
			if size <= 0 {
				return n, fmt.Errorf("varint")
			}
			data = data[size:]
		case wtI64:
			if len(data) < 8 {
				return n, fmt.Errorf("fixed64")
			}
			v = binary.LittleEndian.Uint64(data)
			data = data[8:]
		default:
			if len(data) < 4 {
				return n, fmt.Errorf("fixed32")
			}
			v = uint64(binary.LittleEndian.Uint32(data))
			data = data[4:]
		}
		if n > 0 {
			e.dst = append(e.dst, ',')
		}
		e.appendScalar(k, v)
		n++
	}
	return n, nil
}

// isDefault reports whether the wire value v of a numeric field of kind k is
// the proto3 default, which JSON omits. The value is first truncated to the
// field's width, as protobuf-go does when decoding.
func isDefault(k kind, v uint64) bool {
	switch k {
	case kInt32, kSint32, kUint32, kEnum, kFixed32:
		return uint32(v) == 0
	}
	// For doubles only +0 is the default: protobuf-go writes -0 on the wire.
	return v == 0
}

// appendScalar appends the JSON form of a numeric or bool value whose wire
// representation is v.
func (e *encoder) appendScalar(k kind, v uint64) {
	dst := e.dst
	switch k {
	case kBool:
		if v != 0 {
			dst = append(dst, "true"...)
		} else {
			dst = append(dst, "false"...)
		}
	case kInt32, kEnum:
		dst = strconv.AppendInt(dst, int64(int32(v)), 10)
	case kSint32:
		u := uint32(v)
		dst = strconv.AppendInt(dst, int64(int32(u>>1)^-int32(u&1)), 10)
	case kUint32, kFixed32:
		dst = strconv.AppendUint(dst, uint64(uint32(v)), 10)
	case kInt64, kSfixed64:
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, int64(v), 10)
		dst = append(dst, '"')
	case kUint64, kFixed64:
		dst = append(dst, '"')
		dst = strconv.AppendUint(dst, v, 10)
		dst = append(dst, '"')
	case kDouble:
		dst = appendJSONFloat(dst, math.Float64frombits(v))
	}
	e.dst = dst
}

// appendLenValue appends the JSON form of a string or bytes value.
func (e *encoder) appendLenValue(f *field, data []byte) {
	switch f.kind {
	case kString:
		e.dst = appendJSONString(e.dst, data)
	case kHexID:
		// OTLP/JSON writes trace and span ids as hex, not base64
		// (specification.md "JSON Protobuf Encoding").
		e.dst = append(e.dst, '"')
		e.dst = hex.AppendEncode(e.dst, data)
		e.dst = append(e.dst, '"')
	case kProfileID:
		// Hex as pdata reads it, when it is a profile id's 16 bytes
		// (see kProfileID); anything else stays base64, which Unmarshal
		// cannot mistake for hex.
		if len(data) != 16 {
			e.dst = append(e.dst, '"')
			e.dst = base64.StdEncoding.AppendEncode(e.dst, data)
			e.dst = append(e.dst, '"')
			return
		}
		e.dst = append(e.dst, '"')
		e.dst = hex.AppendEncode(e.dst, data)
		e.dst = append(e.dst, '"')
	default:
		e.dst = append(e.dst, '"')
		e.dst = base64.StdEncoding.AppendEncode(e.dst, data)
		e.dst = append(e.dst, '"')
	}
}
