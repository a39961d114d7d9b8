package stefreceiver

import (
	"github.com/otlp-lite/otlp-lite/internal/pbappend"
	"math"

	"github.com/splunk/stef/go/otel/otelstef"
)

// The OTLP messages the decoder writes go through pbappend: fields are written in
// number order where it matters to readers that look for an id first.

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
		return 1 + pbappend.UvarintLen(uint64(n)) + n, true
	case otelstef.AnyValueTypeBool:
		return 2, true
	case otelstef.AnyValueTypeInt64:
		return 1 + pbappend.UvarintLen(uint64(v.Int64())), true
	case otelstef.AnyValueTypeFloat64:
		return 9, true
	case otelstef.AnyValueTypeBytes:
		n := len(v.Bytes())
		return 1 + pbappend.UvarintLen(uint64(n)) + n, true
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
		return pbappend.StringField(b, 1, v.String())
	case otelstef.AnyValueTypeBool:
		x := uint64(0)
		if v.Bool() {
			x = 1
		}
		return pbappend.VarintField(b, 2, x)
	case otelstef.AnyValueTypeInt64:
		return pbappend.VarintField(b, 3, uint64(v.Int64()))
	case otelstef.AnyValueTypeFloat64:
		return pbappend.DoubleField(b, 4, v.Float64())
	case otelstef.AnyValueTypeBytes:
		return pbappend.StringField(b, 7, string(v.Bytes()))
	}
	return b
}

// keyValueSize is the length of a KeyValue of a key of keyLen bytes and a
// value of valueSize bytes.
func keyValueSize(keyLen, valueSize int) int {
	return 1 + pbappend.UvarintLen(uint64(keyLen)) + keyLen + 1 + pbappend.UvarintLen(uint64(valueSize)) + valueSize
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
// waits for its client (stream.idle) without charging it, and that its
// chunk ticket keeps (readChunk): an SDK-sized request's, within the
// stream's state charge (StateCostPlain, 64 KiB, covers the reader's
// 21 KB, bodyBuffer, the unzstd's 4 KiB read buffer, the attribute cache's
// 4 KiB and these two). A larger one (its size is the recent requests',
// up to Config.MaxRequestBytes and a record) is kept only charged to the
// budget (stream.bufCharge), or let go: a client that sent each of many
// streams one frame decoding to a large request (a few KB of STEF whose
// records repeat a large attribute) had every waiting stream hold
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
