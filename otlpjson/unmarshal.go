package otlpjson

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unsafe"

	"github.com/otlp-lite/otlp-lite/internal/quote"
)

// Unmarshal transcodes the OTLP/JSON message of type t in src to protobuf
// bytes appended to dst, and returns the extended buffer.
//
// Input follows the proto3 JSON mapping with the OTLP rules
// (specification.md "JSON Protobuf Encoding"): keys may be lowerCamelCase or
// the snake_case proto names; trace and span ids are hex, in either case;
// enums may be integers or value names; integers may be numbers or strings,
// in exponent form too if integral; doubles may also be "NaN", "Infinity",
// "-Infinity" or quoted numbers; bytes are base64, standard or URL-safe,
// padded or not; null stands for an absent field; unknown keys are ignored.
// A key given twice, or two members of one oneof, are errors, as in protojson.
//
// The output is deterministic: fields appear in input order, proto3 default
// values of fields without presence are omitted, and repeated scalars are
// packed.
//
// On error Unmarshal returns dst unchanged and an *Error whose message says
// what is wrong and where, e.g.
// `cannot decode resourceSpans[0].scopeSpans[1].spans[3].traceId: invalid hex at offset 312`.
func Unmarshal(dst []byte, t MessageType, src []byte) ([]byte, error) {
	return unmarshal(dst, t, src, Bound{}, false)
}

// Bound limits what UnmarshalBounded produces. The zero Bound limits
// nothing.
type Bound struct {
	// Max, when positive, is the largest protobuf form accepted, in bytes:
	// a receiver's request limit. OTLP v1.11 applies the limit to the
	// request after decompression, and a transcoding is the same thing: a
	// JSON request within the limit can spell a protobuf message four
	// times its size (a packed double is 8 bytes, "0," is 2), which no
	// receiver with the same limit would accept when it is replayed or
	// forwarded.
	Max int
	// Charge, when not nil, is called with the size of the output as it
	// grows, in steps of at most ChargeStep bytes and once more at the
	// end for the rest, before more is produced: a receiver counts the
	// protobuf form against its memory budget as it appears, as it counts
	// a decompressed body. An error it returns stops the transcoding and
	// is returned as is.
	Charge func(n int) error
}

// ChargeStep is the most output UnmarshalBounded produces between two
// calls of Bound.Charge: small against any budget, large enough that the
// calls cost nothing measurable.
const ChargeStep = 64 << 10

// ErrTooLarge is returned by UnmarshalBounded when the protobuf form would
// exceed Bound.Max.
var ErrTooLarge = errors.New("protobuf form exceeds the size limit")

// UnmarshalBounded is Unmarshal with the output bounded by b: the limit is
// checked while transcoding, so the output never grows more than a few
// hundred bytes past b.Max (what one scalar value and the lengths of the
// messages around it add) before ErrTooLarge is returned; a string or
// bytes value is checked before it is appended. The output is charged
// with b.Charge as it grows. Errors are those of Unmarshal, ErrTooLarge,
// or the error b.Charge returned; dst is then returned unchanged (what was
// charged stays charged: the caller releases it with the rest).
func UnmarshalBounded(dst []byte, t MessageType, src []byte, b Bound) ([]byte, error) {
	return unmarshal(dst, t, src, b, false)
}

// unmarshal is UnmarshalBounded; generic disables the fast paths of
// fastpath.go, so that tests can check they change neither the output nor
// the errors.
func unmarshal(dst []byte, t MessageType, src []byte, b Bound, generic bool) ([]byte, error) {
	m := t.msg()
	if m == nil {
		return dst, fmt.Errorf("otlpjson: unknown %s", t)
	}
	d := decoderPool.Get().(*decoder)
	n := len(dst)
	d.src = src
	d.dst = dst
	d.root = m.name
	d.generic = generic
	d.limitEnd = math.MaxInt
	if b.Max > 0 {
		d.limitEnd = n + b.Max
	}
	d.charge = b.Charge
	d.chargedTo = n
	d.next = d.limitEnd
	if d.charge != nil {
		d.next = min(d.limitEnd, n+ChargeStep)
	}
	err := d.decodeTop(m)
	if err == nil {
		// The output may have passed the limit since the last check,
		// by less than one value; what it holds is charged.
		err = d.checkOutput()
		if err == nil && d.charge != nil && len(d.dst) > d.chargedTo {
			err = d.charge(len(d.dst) - d.chargedTo)
		}
	}
	dst = d.dst
	d.reset()
	decoderPool.Put(d)
	if err != nil {
		return dst[:n], err
	}
	return dst, nil
}

var decoderPool = sync.Pool{New: func() any { return &decoder{} }}

// decoder holds the reusable state of one Unmarshal call.
type decoder struct {
	src []byte
	pos int
	dst []byte

	// buf holds unescaped strings; typeURL holds the @type of an Any.
	buf     []byte
	typeURL []byte

	path  []pathElem
	depth int
	root  string

	// generic disables the fast paths (fastpath.go).
	generic bool

	// The Bound of UnmarshalBounded, as indexes into dst: the output
	// must end at or before limitEnd; it is charged up to chargedTo;
	// next, the lower of limitEnd and the next charge step, is where
	// checkOutput has work to do. Unmarshal sets limitEnd and next to
	// MaxInt, so its checks never pass the one comparison.
	limitEnd, chargedTo, next int
	charge                    func(n int) error
}

// checkOutput is called after each array element and before each string
// or bytes value is appended (fits): it returns ErrTooLarge once the
// output has passed the limit, and charges the output every ChargeStep
// bytes.
func (d *decoder) checkOutput() error {
	if len(d.dst) <= d.next {
		return nil
	}
	if len(d.dst) > d.limitEnd {
		return ErrTooLarge
	}
	if d.charge != nil {
		if err := d.charge(len(d.dst) - d.chargedTo); err != nil {
			return err
		}
		d.chargedTo = len(d.dst)
		d.next = min(d.limitEnd, d.chargedTo+ChargeStep)
		// Grow the output by doubling, up to the limit: append's own
		// growth, a quarter at a time for large slices, leaves four
		// times a large output in garbage on its way there (a refused
		// 64 MiB transcoding peaked at 350 MB); doubling leaves one.
		if c := cap(d.dst); c-len(d.dst) < 2*ChargeStep && c < d.limitEnd {
			want := max(2*c, len(d.dst)+4*ChargeStep)
			if d.limitEnd < math.MaxInt-2*ChargeStep {
				want = min(want, d.limitEnd+2*ChargeStep)
			}
			nb := make([]byte, len(d.dst), want)
			copy(nb, d.dst)
			d.dst = nb
		}
	}
	return nil
}

// fits returns ErrTooLarge if appending n more bytes would pass the limit:
// a string or bytes value is refused before it is copied.
func (d *decoder) fits(n int) error {
	if n > d.limitEnd-len(d.dst) {
		return ErrTooLarge
	}
	return nil
}

// maxPooledBuf bounds the scratch buffers kept in the pool, so that one huge
// request does not pin memory.
const maxPooledBuf = 1 << 20

func (d *decoder) reset() {
	d.src = nil
	d.pos = 0
	d.dst = nil
	if cap(d.buf) > maxPooledBuf {
		d.buf = nil
	}
	d.typeURL = d.typeURL[:0]
	d.path = d.path[:0]
	d.depth = 0
	d.root = ""
	d.generic = false
	d.charge = nil
}

func (d *decoder) errorf(off int, format string, args ...any) error {
	return &Error{
		Path:   formatPath(d.root, d.path),
		Offset: off,
		Reason: fmt.Sprintf(format, args...),
	}
}

func (d *decoder) decodeTop(m *message) error {
	d.skipWS()
	if d.pos >= len(d.src) {
		return d.errorf(d.pos, "empty input")
	}
	if d.peek() != '{' {
		return d.errorf(d.pos, "expected object")
	}
	if err := d.decodeObject(m); err != nil {
		return err
	}
	d.skipWS()
	if d.pos != len(d.src) {
		return d.errorf(d.pos, "unexpected data after top-level object")
	}
	return nil
}

// appendTag appends a protobuf field tag.
func appendTag(dst []byte, num uint32, wt wireType) []byte {
	return binary.AppendUvarint(dst, uint64(num)<<3|uint64(wt))
}

// beginLen reserves one byte for the length of a length-delimited payload
// and returns where the payload starts. Most OTLP messages are shorter than
// 128 bytes, so endLen rarely has to move the payload.
func (d *decoder) beginLen() int {
	d.dst = append(d.dst, 0)
	return len(d.dst)
}

// endLen writes the varint length of the payload started at start.
func (d *decoder) endLen(start int) {
	n := len(d.dst) - start
	if n < 0x80 {
		d.dst[start-1] = byte(n)
		return
	}
	var tmp [binary.MaxVarintLen64]byte
	lenBuf := binary.AppendUvarint(tmp[:0], uint64(n))
	extra := len(lenBuf) - 1
	d.dst = append(d.dst, lenBuf[1:]...) // grow by extra bytes
	copy(d.dst[start+extra:], d.dst[start:start+n])
	copy(d.dst[start-1:], lenBuf)
}

// decodeObject transcodes the JSON object at the current position as message m.
//
// Between the calls that decode values it scans with the local index i,
// which the compiler keeps in a register, instead of loading and storing
// d.pos at every step, and stores d.pos only before those calls.
func (d *decoder) decodeObject(m *message) error {
	if d.depth >= MaxDepth {
		return d.errorf(d.pos, "message nesting exceeds %d levels", MaxDepth)
	}
	d.depth++
	src := d.src
	i := skipWSAt(src, d.pos+1) // after '{'
	if i < len(src) && src[i] == '}' {
		d.pos = i + 1
		d.depth--
		return nil
	}
	var seen uint32
	oneofSet := -1
	hint := int(m.first)
	var err error
	for {
		i = skipWSAt(src, i)
		keyOff := i
		// Writers emit keys in a fixed order, mostly the .proto declaration
		// order (protojson, pdata) or else field number order, so the key
		// is usually the one declared after the previous key's field, or
		// soon after it when fields in between are absent. Comparing the
		// input with the fields' quoted names in that order matches it
		// without unescaping and looking up the key (readString and the
		// lookup were 40% of decoding, BENCHMARKS.md §1.2). Escaped
		// spellings, snake_case names and unknown keys take the general
		// path.
		fi := -1
		w := wordAt(src, i)
		for h, k := hint, 0; k < len(m.fields); k++ {
			if f := &m.fields[h]; f.keyAt(src, i, w) {
				fi = h
				i += len(f.quoted)
				break
			}
			h = int(m.next[h])
		}
		if fi < 0 {
			d.pos = i
			key, err := d.readString()
			if err != nil {
				return err
			}
			i = d.pos
			fi = m.lookupFrom(key, hint)
		}
		if fi >= 0 {
			hint = int(m.next[fi])
		}
		i = skipWSAt(src, i)
		if i >= len(src) || src[i] != ':' {
			return d.errorf(i, "expected ':' after object key")
		}
		i = skipWSAt(src, i+1)
		d.pos = i
		switch {
		case fi < 0:
			if err := d.skipValue(); err != nil {
				return err
			}
		case literalAt(src, i, "null"):
			// null stands for the default value, i.e. an absent field.
			d.pos = i + len("null")
		default:
			f := &m.fields[fi]
			d.path = append(d.path, pathElem{name: f.name, index: -1})
			if seen&(1<<fi) != 0 {
				return d.errorf(keyOff, "duplicate field")
			}
			seen |= 1 << fi
			if f.oneof() {
				if oneofSet >= 0 {
					return d.errorf(keyOff, "oneof field %s is already set", m.fields[oneofSet].name)
				}
				oneofSet = fi
			}
			if f.repeated() {
				err = d.decodeArray(f)
			} else {
				err = d.decodeValue(f, false)
			}
			if err != nil {
				return err
			}
			d.path = d.path[:len(d.path)-1]
		}
		i = skipWSAt(src, d.pos)
		if i < len(src) && src[i] == ',' {
			i++
			continue
		}
		if i < len(src) && src[i] == '}' {
			d.pos = i + 1
			d.depth--
			return nil
		}
		return d.errorf(i, "expected ',' or '}'")
	}
}

// decodeArray transcodes the JSON array of repeated field f.
func (d *decoder) decodeArray(f *field) error {
	if d.peek() != '[' {
		return d.errorf(d.pos, "expected array")
	}
	d.pos++
	top := len(d.path) - 1
	packed := f.kind.packable()
	mark := len(d.dst)
	start := 0
	if packed {
		// proto3 packs repeated scalars
		// (https://protobuf.dev/programming-guides/encoding/#packed).
		d.dst = appendTag(d.dst, f.num, wtLen)
		start = d.beginLen()
	}
	src := d.src
	i := skipWSAt(src, d.pos)
	n := 0
	if i < len(src) && src[i] == ']' {
		d.pos = i + 1
	} else {
		// As in decodeObject, the index i is local between calls.
		for {
			i = skipWSAt(src, i)
			d.path[top].index = n
			if i < len(src) && src[i] == 'n' {
				return d.errorf(i, "null is not allowed in arrays")
			}
			d.pos = i
			var err error
			switch {
			case f.kind != kMessage:
				err = d.decodeValue(f, packed)
			case schema[f.msg].special == specialAny:
				err = d.decodeAny(f)
			default:
				err = d.decodeMessage(f)
			}
			if err != nil {
				return err
			}
			if len(d.dst) > d.next {
				if err := d.checkOutput(); err != nil {
					return err
				}
			}
			n++
			i = skipWSAt(src, d.pos)
			if i < len(src) && src[i] == ',' {
				i++
				continue
			}
			if i < len(src) && src[i] == ']' {
				d.pos = i + 1
				break
			}
			return d.errorf(i, "expected ',' or ']'")
		}
	}
	d.path[top].index = -1
	if packed {
		if n == 0 {
			d.dst = d.dst[:mark]
		} else {
			d.endLen(start)
		}
	}
	return nil
}

// decodeValue transcodes one value of field f. A packed value is appended
// without a tag. Outside arrays, proto3 default values of fields without
// presence are not written.
func (d *decoder) decodeValue(f *field, packed bool) error {
	valOff := d.pos
	omitDefault := !packed && f.omitDefault
	switch f.kind {
	case kMessage:
		return d.decodeMessage(f)
	case kString, kBytes, kHexID, kProfileID:
		if f.kind == kHexID && !d.generic && d.hexIDFast(f) {
			return nil
		}
		s, err := d.readString()
		if err != nil {
			return err
		}
		if len(s) == 0 && omitDefault {
			return nil
		}
		// Refused before it is copied if its protobuf form, at least
		// the string, half the hex digits or three quarters of the
		// base64 characters (less padding), cannot fit.
		least := len(s)
		switch f.kind {
		case kHexID, kProfileID:
			least = len(s) / 2
		case kBytes:
			least = len(s)*3/4 - 2
		}
		if err := d.fits(least); err != nil {
			return err
		}
		mark := len(d.dst)
		d.dst = appendTag(d.dst, f.num, wtLen)
		switch f.kind {
		case kString:
			d.dst = binary.AppendUvarint(d.dst, uint64(len(s)))
			d.dst = append(d.dst, s...)
		case kHexID:
			// OTLP/JSON trace and span ids are hex, in either case
			// (specification.md "JSON Protobuf Encoding").
			if len(s)%2 != 0 {
				d.dst = d.dst[:mark]
				return d.errorf(valOff, "invalid hex")
			}
			d.dst = binary.AppendUvarint(d.dst, uint64(len(s)/2))
			var ok bool
			if d.dst, ok = appendHexDecode(d.dst, s); !ok {
				d.dst = d.dst[:mark]
				return d.errorf(valOff, "invalid hex")
			}
		default:
			start := d.beginLen()
			var ok bool
			if f.kind == kProfileID && len(s) == 32 {
				// The Collector's hex form (see kProfileID); 32 base64
				// characters would be 24 bytes, not a profile id.
				if d.dst, ok = appendHexDecode(d.dst, s); ok {
					d.endLen(start)
					return nil
				}
				d.dst = d.dst[:start]
			}
			if d.dst, ok = appendBase64Decode(d.dst, s); !ok {
				d.dst = d.dst[:mark]
				return d.errorf(valOff, "invalid base64")
			}
			if len(d.dst) == start && omitDefault {
				d.dst = d.dst[:mark]
				return nil
			}
			d.endLen(start)
		}
		return nil
	}

	v, err := d.readScalar(f)
	if err != nil {
		return err
	}
	if omitDefault && isDefault(f.kind, v) {
		return nil
	}
	wt := f.kind.wireType()
	if !packed {
		d.dst = appendTag(d.dst, f.num, wt)
	}
	switch wt {
	case wtVarint:
		d.dst = binary.AppendUvarint(d.dst, v)
	case wtI64:
		d.dst = binary.LittleEndian.AppendUint64(d.dst, v)
	default:
		d.dst = binary.LittleEndian.AppendUint32(d.dst, uint32(v))
	}
	return nil
}

// hexIDFast transcodes the id of field f at the current position if it is a
// trace or span id, 32 or 16 hex digits, and reports whether it did. The
// quote that length puts at the end and hex digits all the way to it make
// the string: then the digits are decoded in place, without first scanning
// for the string's end (readString).
func (d *decoder) hexIDFast(f *field) bool {
	src, i := d.src, d.pos
	for _, n := range [...]int{32, 16} {
		if i+n+1 < len(src) && src[i] == '"' && src[i+n+1] == '"' {
			mark := len(d.dst)
			d.dst = append(appendTag(d.dst, f.num, wtLen), byte(n/2))
			var ok bool
			if d.dst, ok = appendHexDecode(d.dst, src[i+1:i+n+1]); ok {
				d.pos = i + n + 2
				return true
			}
			d.dst = d.dst[:mark]
		}
	}
	return false
}

// decodeMessage transcodes the JSON object at the current position as one
// value of message field f, with its tag and length.
func (d *decoder) decodeMessage(f *field) error {
	if d.peek() != '{' {
		return d.errorf(d.pos, "expected object")
	}
	d.dst = appendTag(d.dst, f.num, wtLen)
	start := d.beginLen()
	switch {
	case f.msg == mKeyValue && d.keyValueFast():
	case f.msg == mAnyValue && d.anyValueFast():
	default:
		if err := d.decodeObject(&schema[f.msg]); err != nil {
			return err
		}
	}
	d.endLen(start)
	return nil
}

// readScalar reads a bool, integer, enum or double value and returns its
// protobuf wire representation: the varint, or the fixed64/fixed32 bits.
func (d *decoder) readScalar(f *field) (uint64, error) {
	valOff := d.pos
	if f.kind == kBool {
		if d.consumeLiteral("true") {
			return 1, nil
		}
		if d.consumeLiteral("false") {
			return 0, nil
		}
		return 0, d.errorf(valOff, "expected true or false")
	}
	if f.kind != kDouble {
		// 64-bit integers are written as strings of digits, others as
		// plain numbers: parse them while scanning. (Quoted enums must be
		// value names; fractions and exponents take the general path.)
		if v, end, ok := quotedDigits(d.src, d.pos); ok && f.kind != kEnum {
			d.pos = end
			return d.intValue(f, false, v, valOff)
		}
		if v, end, ok := digitsAt(d.src, d.pos); ok && (end == len(d.src) || (d.src[end] != '.' && d.src[end]|0x20 != 'e')) {
			d.pos = end
			return d.intValue(f, false, v, valOff)
		}
	}

	if f.kind == kDouble {
		if x, end, ok := floatAt(d.src, d.pos); ok {
			d.pos = end
			return math.Float64bits(x), nil
		}
	}

	// Numbers may be quoted: the proto3 JSON mapping writes 64-bit integers
	// and non-finite doubles as strings and accepts strings for all numbers.
	var s []byte
	var err error
	quoted := d.peek() == '"'
	if quoted {
		if s, err = d.readString(); err != nil {
			return 0, err
		}
	} else if s, err = d.readNumber(); err != nil {
		return 0, err
	}

	switch f.kind {
	case kDouble:
		if quoted {
			switch string(s) {
			case "NaN":
				return math.Float64bits(math.NaN()), nil
			case "Infinity":
				return math.Float64bits(math.Inf(1)), nil
			case "-Infinity":
				return math.Float64bits(math.Inf(-1)), nil
			}
			if numberLen(s) != len(s) || len(s) == 0 {
				return 0, d.errorf(valOff, "invalid number")
			}
		}
		if x, ok := parseFloatExact(s); ok {
			return math.Float64bits(x), nil
		}
		x, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(s), len(s)), 64)
		if err != nil {
			return 0, d.errorf(valOff, "number out of range")
		}
		return math.Float64bits(x), nil
	case kEnum:
		if quoted {
			if x, ok := f.enum.value(s); ok {
				return uint64(int64(x)), nil
			}
			return 0, d.errorf(valOff, "unknown enum value %s", quote.Bytes(s))
		}
	}

	// Writers spell integers as plain digits; anything else (a sign,
	// fraction, exponent or 20 digits) takes the general parser.
	neg := false
	mag, ok := parseDigits(s)
	if !ok {
		if quoted && (numberLen(s) != len(s) || len(s) == 0) {
			return 0, d.errorf(valOff, "invalid integer")
		}
		if neg, mag, ok = parseInt(s); !ok {
			return 0, d.errorf(valOff, "invalid integer")
		}
	}
	return d.intValue(f, neg, mag, valOff)
}

// intValue checks that the integer of sign neg and magnitude mag fits the
// integer or enum field f, and returns its wire representation.
func (d *decoder) intValue(f *field, neg bool, mag uint64, valOff int) (uint64, error) {
	switch f.kind {
	case kInt32, kEnum, kSint32:
		if (!neg && mag > math.MaxInt32) || (neg && mag > -math.MinInt32) {
			return 0, d.errorf(valOff, "integer out of range")
		}
		x := int32(mag)
		if neg {
			x = int32(-int64(mag))
		}
		if f.kind == kSint32 {
			return uint64(uint32(x<<1) ^ uint32(x>>31)), nil
		}
		return uint64(int64(x)), nil
	case kInt64, kSfixed64:
		if (!neg && mag > math.MaxInt64) || (neg && mag > 1<<63) {
			return 0, d.errorf(valOff, "integer out of range")
		}
		if neg {
			return -mag, nil
		}
		return mag, nil
	case kUint32, kFixed32:
		if (neg && mag != 0) || mag > math.MaxUint32 {
			return 0, d.errorf(valOff, "integer out of range")
		}
		return mag, nil
	default: // kUint64, kFixed64
		if neg && mag != 0 {
			return 0, d.errorf(valOff, "integer out of range")
		}
		return mag, nil
	}
}

// quotedDigits parses the JSON string at src[i] if it holds a non-negative
// integer of at most 19 digits without a leading zero, the usual form of
// 64-bit integers ("1704067200000547628"), and returns its value and the
// index after the closing quote.
func quotedDigits(src []byte, i int) (v uint64, end int, ok bool) {
	if i >= len(src) || src[i] != '"' {
		return 0, i, false
	}
	v, end, ok = digitsAt(src, i+1)
	if !ok || end >= len(src) || src[end] != '"' {
		return 0, i, false
	}
	return v, end + 1, true
}

// parseDigits parses s if it is a non-negative JSON integer of at most 19
// digits, as digitsAt does.
func parseDigits(s []byte) (uint64, bool) {
	if v, end, ok := digitsAt(s, 0); ok && end == len(s) {
		return v, true
	}
	return 0, false
}

// digitsAt parses the decimal digits at src[i:] if they are a non-negative
// JSON integer of at most 19 digits, which cannot overflow a uint64: a 0,
// or 1 to 19 digits without a leading zero (RFC 8259 section 6). It returns
// the value and the index after the last digit.
func digitsAt(src []byte, i int) (v uint64, end int, ok bool) {
	start := i
	// Eight digits at a time while they fit in 19 (SWAR): timestamps have
	// 19 digits, and the byte loop costs about ten instructions a digit.
	for i-start <= 19-8 && i+8 <= len(src) {
		x := binary.LittleEndian.Uint64(src[i : i+8])
		if x&0xf0f0f0f0f0f0f0f0 != 0x3030303030303030 ||
			(x+0x0606060606060606)&0xf0f0f0f0f0f0f0f0 != 0x3030303030303030 {
			break // not eight digits
		}
		v = v*1e8 + parse8Digits(x)
		i += 8
	}
	for i < len(src) && isDigit(src[i]) {
		v = v*10 + uint64(src[i]-'0') // may wrap past 19 digits, rejected below
		i++
	}
	n := i - start
	if n == 0 || n > 19 || (n > 1 && src[start] == '0') {
		return 0, i, false
	}
	return v, i, true
}

// parse8Digits returns the value of the eight ASCII digits in x, the first
// in the low byte: each step adds pairs of adjacent groups, scaled by 10,
// 100 and 10000, within the 64-bit word.
func parse8Digits(x uint64) uint64 {
	x = (x & 0x0f0f0f0f0f0f0f0f) * (10<<8 + 1) >> 8
	x = (x & 0x00ff00ff00ff00ff) * (100<<16 + 1) >> 16
	return (x & 0x0000ffff0000ffff) * (10000<<32 + 1) >> 32
}

// appendHexDecode appends the bytes spelled by the even-length hex string s,
// in either case, to dst, and reports whether s is all hex digits. Trace
// and span ids are 32 and 16 digits: it decodes 8 at a time (SWAR), in
// about half the instructions of encoding/hex, and the rest with it.
func appendHexDecode(dst, s []byte) ([]byte, bool) {
	n := len(dst)
	for len(s) >= 8 {
		x := binary.LittleEndian.Uint64(s[:8])
		// Every byte must be ASCII and in '0'-'9' or, with the lower-case
		// bit set, in 'a'-'f'. For a byte b < 0x80, b+(0x80-lo) has its
		// high bit set if b >= lo, and b+(0x7f-hi) if b > hi, with no
		// carry into the next byte.
		l := x | lsb*0x20
		digit := (x + lsb*(0x80-'0')) &^ (x + lsb*(0x7f-'9'))
		letter := (l + lsb*(0x80-'a')) &^ (l + lsb*(0x7f-'f'))
		if x&msb != 0 || (digit|letter)&msb != msb {
			return dst[:n], false
		}
		// The value of a digit is its low nibble, plus 9 for letters (bit
		// 6 set). Then each pair of nibbles becomes a byte, and the four
		// bytes, in the even bytes of v, are packed together.
		v := x&(lsb*0x0f) + (x>>6&lsb)*9
		v = (v<<4 | v>>8) & 0x00ff00ff00ff00ff
		v = (v | v>>8) & 0x0000ffff0000ffff
		v = (v | v>>16) & 0xffffffff
		dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		s = s[8:]
	}
	if len(s) > 0 {
		var err error
		if dst, err = hex.AppendDecode(dst, s); err != nil {
			return dst[:n], false
		}
	}
	return dst, true
}

// float64pow10 holds the powers of ten that a float64 represents exactly.
var float64pow10 = [...]float64{
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
}

// parseFloatExact parses s as floatAt does, if s is that number only.
func parseFloatExact(s []byte) (float64, bool) {
	if x, end, ok := floatAt(s, 0); ok && end == len(s) {
		return x, true
	}
	return 0, false
}

// floatAt parses the JSON number at src[i:] (RFC 8259 section 6) if it has
// the form [-]digits[.digits], without an exponent, and its digits, read as
// an integer m, are at most 2^53, with at most 22 of them after the point:
// m and 10^k are then exact float64 values, so the one correctly rounded
// IEEE division m / 10^k is the correctly rounded value of the number
// (Clinger's fast path, as in strconv's atof64exact). That is how writers
// print most doubles (0.25, 894943.0395792252): it scans and converts them
// in one pass. Other numbers, and invalid ones, are left to readNumber and
// strconv.ParseFloat, which is several times slower (15% of decoding the
// metrics payload, BENCHMARKS.md §1.2). It returns the value and the index
// after the number.
func floatAt(src []byte, i int) (x float64, end int, ok bool) {
	neg := i < len(src) && src[i] == '-'
	if neg {
		i++
	}
	intStart := i
	var m uint64
	for i < len(src) && isDigit(src[i]) {
		m = m*10 + uint64(src[i]-'0') // may wrap past 19 digits, rejected below
		i++
	}
	digits := i - intStart
	if digits == 0 || (digits > 1 && src[intStart] == '0') {
		return 0, i, false
	}
	k := 0
	if i < len(src) && src[i] == '.' {
		i++
		fracStart := i
		for i < len(src) && isDigit(src[i]) {
			m = m*10 + uint64(src[i]-'0')
			i++
		}
		k = i - fracStart
		digits += k
		if k == 0 {
			return 0, i, false
		}
	}
	if (i < len(src) && src[i]|0x20 == 'e') || digits > 19 || m > 1<<53 || k >= len(float64pow10) {
		return 0, i, false
	}
	x = float64(m) / float64pow10[k]
	if neg {
		x = -x
	}
	return x, i, true
}

// parseInt parses a JSON number that must have an integral value. Like
// protojson it accepts fractions and exponents that cancel out ("1.0",
// "15e-1" is not integral, "1.5e1" is 15). It reports false for
// non-integral values and magnitudes above math.MaxUint64.
func parseInt(s []byte) (neg bool, mag uint64, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intDigits := s[intStart:i]
	var frac []byte
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		frac = s[fracStart:i]
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		for i < len(s) && isDigit(s[i]) {
			if exp < 1e6 {
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) || len(intDigits) == 0 {
		return false, 0, false
	}
	// The value is digits * 10^shift, with digits = intDigits + frac.
	shift := exp - len(frac)
	total := len(intDigits) + len(frac)
	keep := total
	if shift < 0 {
		keep = total + shift
	}
	for k := 0; k < total; k++ {
		var c byte
		if k < len(intDigits) {
			c = intDigits[k] - '0'
		} else {
			c = frac[k-len(intDigits)] - '0'
		}
		if k >= keep {
			if c != 0 {
				return false, 0, false // fractional part
			}
			continue
		}
		if mag > (math.MaxUint64-uint64(c))/10 {
			return false, 0, false
		}
		mag = mag*10 + uint64(c)
	}
	for ; shift > 0 && mag != 0; shift-- {
		if mag > math.MaxUint64/10 {
			return false, 0, false
		}
		mag *= 10
	}
	return neg, mag, true
}

// appendBase64Decode decodes base64 in standard or URL-safe alphabet, with
// or without padding, as protojson accepts.
func appendBase64Decode(dst, s []byte) ([]byte, bool) {
	enc := base64.RawStdEncoding
	for _, c := range s {
		if c == '-' || c == '_' {
			enc = base64.RawURLEncoding
			break
		}
	}
	// Strip padding, which must complete the last 4-character block.
	if n := len(s); n > 0 && s[n-1] == '=' {
		pad := 1
		if n > 1 && s[n-2] == '=' {
			pad = 2
		}
		if n%4 != 0 {
			return dst, false
		}
		s = s[:n-pad]
	}
	out, err := enc.AppendDecode(dst, s)
	if err != nil {
		return dst, false
	}
	return out, true
}
