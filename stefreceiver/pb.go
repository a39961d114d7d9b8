package stefreceiver

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/splunk/stef/go/otel/otelstef"
)

// Protobuf appenders for the OTLP messages the decoder writes: fields are
// written in number order where it matters to readers that look for an id
// first, and every length is known when it is written (each nested message
// is built in a buffer of its own, then copied).

func appendVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendTag(b []byte, field, wire int) []byte {
	return appendVarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	return appendVarint(appendTag(b, field, 0), v)
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = appendVarint(appendTag(b, field, 2), uint64(len(v)))
	return append(b, v...)
}

func appendStringField(b []byte, field int, v string) []byte {
	b = appendVarint(appendTag(b, field, 2), uint64(len(v)))
	return append(b, v...)
}

// appendStringNonEmpty omits an empty string, as proto3 does.
func appendStringNonEmpty(b []byte, field int, v string) []byte {
	if v == "" {
		return b
	}
	return appendStringField(b, field, v)
}

func appendFixed64Field(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, 1), v)
}

func appendDoubleField(b []byte, field int, v float64) []byte {
	return appendFixed64Field(b, field, math.Float64bits(v))
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// appendLen starts a length-delimited field whose content is then appended
// by the caller; endLen fills in its length. Five bytes are kept for the
// length (a varint of up to 4 GiB, beyond any bound), and endLen moves the
// content back over those the length does not need, so what is stored is
// the minimal encoding. Only the container being closed moves: the open
// ones hold offsets before it, which do not change.
func appendLen(b []byte, field int) ([]byte, int) {
	b = appendTag(b, field, 2)
	return append(b, 0, 0, 0, 0, 0), len(b)
}

func endLen(b []byte, at int) []byte {
	n := uint64(len(b) - at - 5)
	var tmp [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(tmp[:], n)
	copy(b[at:], tmp[:k])
	copy(b[at+k:], b[at+5:])
	return b[:len(b)-(5-k)]
}

func appendFixed64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func float64bits(f float64) uint64 { return math.Float64bits(f) }

func appendFixed32Field(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(appendTag(b, field, 5), v)
}

// uvarintLen is the length of v's varint encoding.
func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// fastPaths turns on the decoder's shortcuts: the encodings whose lengths
// are computed before they are written (scalar attributes, number data
// points), where appendLen/endLen would move a container's content once it
// is closed (for the many small containers of a data point, that move was
// a tenth of a STEF stream's decoding), and the resource, scope and metric
// compared with the open ones only when the record carried them (its
// modified bits). Tests turn it off to check that both ways write the same
// bytes.
var fastPaths = true

// scalarValueSize returns the length of an AnyValue holding v's scalar
// (what appendScalarValue writes), and false for an array or a key-value
// list, whose length is not computed ahead.
func scalarValueSize(v *otelstef.AnyValue) (int, bool) {
	switch v.Type() {
	case otelstef.AnyValueTypeString:
		n := len(v.String())
		return 1 + uvarintLen(uint64(n)) + n, true
	case otelstef.AnyValueTypeBool:
		return 2, true
	case otelstef.AnyValueTypeInt64:
		return 1 + uvarintLen(uint64(v.Int64())), true
	case otelstef.AnyValueTypeFloat64:
		return 9, true
	case otelstef.AnyValueTypeBytes:
		n := len(v.Bytes())
		return 1 + uvarintLen(uint64(n)) + n, true
	case otelstef.AnyValueTypeArray, otelstef.AnyValueTypeKVList:
		return 0, false
	}
	return 0, true // no value: an empty AnyValue
}

// appendScalarValue appends the fields of an AnyValue holding v's scalar,
// as appendAnyValueField does.
func appendScalarValue(b []byte, v *otelstef.AnyValue) []byte {
	switch v.Type() {
	case otelstef.AnyValueTypeString:
		return appendStringField(b, 1, v.String())
	case otelstef.AnyValueTypeBool:
		x := uint64(0)
		if v.Bool() {
			x = 1
		}
		return appendVarintField(b, 2, x)
	case otelstef.AnyValueTypeInt64:
		return appendVarintField(b, 3, uint64(v.Int64()))
	case otelstef.AnyValueTypeFloat64:
		return appendDoubleField(b, 4, v.Float64())
	case otelstef.AnyValueTypeBytes:
		return appendStringField(b, 7, string(v.Bytes()))
	}
	return b
}

// keyValueSize is the length of a KeyValue of a key of keyLen bytes and a
// value of valueSize bytes.
func keyValueSize(keyLen, valueSize int) int {
	return 1 + uvarintLen(uint64(keyLen)) + keyLen + 1 + uvarintLen(uint64(valueSize)) + valueSize
}

// attributesSize returns the length of a's KeyValues as a repeated field
// numbered below 16 (a one-byte tag), and false when a value is an array
// or a key-value list.
func attributesSize(a *otelstef.Attributes) (int, bool) {
	n := 0
	for i := range a.Len() {
		vs, ok := scalarValueSize(a.Value(i))
		if !ok {
			return 0, false
		}
		kv := keyValueSize(len(a.Key(i)), vs)
		n += 1 + uvarintLen(uint64(kv)) + kv
	}
	return n, true
}

// outBuffer returns buf emptied to build the next request in, or nil when
// it holds less than the recent requests took (highWater): the builder
// then makes one of that size at the request's first record (firstBuffer).
// A request grown from a small buffer was copied at each doubling, which
// was most of the memory moved decoding batch-sized (8,192-point)
// requests. It holds no more than growing to the largest recent request
// would (each is within Config.MaxRequestBytes and one record).
func outBuffer(buf []byte, last int) []byte {
	if cap(buf) < last {
		return nil
	}
	return buf[:0]
}

// firstBuffer is the buffer a request is built in when the builder holds
// none (outBuffer, idleBuffer), made at the request's first record: of the
// recent requests' size (highWater).
func firstBuffer(last int) []byte { return make([]byte, 0, last+last/8) }

// maxIdleBuffer is the largest request buffer a stream keeps while it
// waits for its client (stream.idle), and that its chunk ticket keeps
// (readAhead): an SDK-sized request's, within the stream's state charge
// (StateCostPlain, 64 KiB, covers the reader's 21 KB, bodyBuffer, the
// unzstd's 4 KiB read buffer, the attribute cache's 4 KiB and these two).
// A larger one (its size is the recent requests', up to
// Config.MaxRequestBytes and a record) is let go: a client that sent each
// of many streams one frame decoding to a large request (a few KB of STEF
// whose records repeat a large attribute) had every waiting stream hold
// megabytes no budget saw.
const maxIdleBuffer = 8 << 10

// recordLimit is the length a request built from start may reach with one
// record of at most maxRecord bytes (none: 0). A record's size is not its
// wire size: it refers to dictionary entries (strings, metrics, histogram
// bounds) any number of times, so that a few KB of STEF decoded to tens of
// megabytes of OTLP in one record, held uncharged by the stream's builder
// before the request was refused. The writers check it as they go, before
// each repeated element, so that a record over it is refused (reported
// bad) having written at most about one element more.
func recordLimit(start, maxRecord int) int {
	if maxRecord <= 0 {
		return math.MaxInt
	}
	return start + maxRecord
}

// highWater is the size the next request's buffer is made for (outBuffer)
// after a request of size: the largest recent request, forgotten by a
// 32nd a request. Requests of varying size (an SDK's frames carry one
// resource's metrics each) grew their buffer by doublings, each copying
// it, whenever one was larger than the one before: a tenth of the
// server's CPU on SDK-sized frames (stefcpu's profile), where the decay
// keeps a large request's size for the few dozen requests after it.
func highWater(mark, size int) int { return max(size, mark-mark/32) }
