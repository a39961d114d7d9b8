package otlpjson

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/otlppb"
)

// The OTLP/HTTP error body is a google.rpc.Status whose details may carry a
// google.rpc.RetryInfo telling the client when to retry (OTLP specification
// "OTLP/HTTP Throttling") or a google.rpc.BadRequest saying where the bad
// data is ("Bad Data"). Their JSON form uses the proto3 JSON mapping of
// google.protobuf.Any and google.protobuf.Duration:
//
//	{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.500s"}
//	{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"...","description":"..."}]}
//
// Both are transcoded both ways; other detail types are dropped. Their
// field numbers and type names are otlppb's (rpc.go).

// maxDurationSeconds bounds google.protobuf.Duration to about 10000 years, as
// duration.proto specifies.
const maxDurationSeconds = 315576000000

// anyTypeName is the message name of an Any type URL: everything after the
// last '/'.
func anyTypeName(typeURL []byte) string {
	if i := bytes.LastIndexByte(typeURL, '/'); i >= 0 {
		typeURL = typeURL[i+1:]
	}
	return string(typeURL)
}

// encodeAny appends the JSON form of the google.protobuf.Any in src and
// reports whether it wrote anything: google.rpc.RetryInfo and
// google.rpc.BadRequest are supported.
//
//	message Any {
//	  string type_url = 1;
//	  bytes value = 2;
//	}
//
//	message RetryInfo {
//	  google.protobuf.Duration retry_delay = 1;
//	}
//
//	message Duration {
//	  int64 seconds = 1;
//	  int32 nanos = 2;
//	}
func (e *encoder) encodeAny(src []byte, off int) (bool, error) {
	var typeURL, value []byte
	var fc easyproto.FieldContext
	tail := src
	for len(tail) > 0 {
		var err error
		if tail, err = otlppb.NextField(&fc, tail); err != nil {
			return false, e.errorf(off, "cannot read google.protobuf.Any field: %s", err)
		}
		switch fc.FieldNum {
		case otlppb.AnyTypeURL:
			if d, ok := fc.MessageData(); ok {
				typeURL = d
			}
		case otlppb.AnyValue:
			if d, ok := fc.MessageData(); ok {
				value = d
			}
		}
	}
	switch anyTypeName(typeURL) {
	case otlppb.RetryInfoName:
	case otlppb.BadRequestName:
		return true, e.encodeBadRequest(typeURL, value, off)
	default:
		return false, nil
	}

	// Occurrences of retry_delay merge, so the last seconds and nanos win.
	var seconds int64
	var nanos int32
	hasDelay := false
	tail = value
	for len(tail) > 0 {
		var err error
		if tail, err = otlppb.NextField(&fc, tail); err != nil {
			return false, e.errorf(off, "cannot read google.rpc.RetryInfo field: %s", err)
		}
		d, ok := fc.MessageData()
		if fc.FieldNum != otlppb.RetryInfoRetryDelay || !ok {
			continue
		}
		hasDelay = true
		var dfc easyproto.FieldContext
		for len(d) > 0 {
			if d, err = otlppb.NextField(&dfc, d); err != nil {
				return false, e.errorf(off, "cannot read google.protobuf.Duration field: %s", err)
			}
			switch dfc.FieldNum {
			case otlppb.DurationSeconds:
				if v, ok := dfc.Int64(); ok {
					seconds = v
				}
			case otlppb.DurationNanos:
				// Truncate as protobuf-go does; easyproto's Int32 rejects
				// varints outside the int32 range instead.
				if v, ok := dfc.Uint64(); ok {
					nanos = int32(v)
				}
			}
		}
	}

	e.dst = append(e.dst, `{"@type":`...)
	e.dst = appendJSONString(e.dst, typeURL)
	if hasDelay {
		e.dst = append(e.dst, `,"retryDelay":`...)
		var ok bool
		if e.dst, ok = appendDuration(e.dst, seconds, nanos); !ok {
			return false, e.errorf(off, "invalid google.protobuf.Duration %ds %dns", seconds, nanos)
		}
	}
	e.dst = append(e.dst, '}')
	return true, nil
}

// appendDuration appends the proto3 JSON form of a google.protobuf.Duration:
// a string of seconds with 0, 3, 6 or 9 fractional digits and an "s" suffix,
// like "1.500s". It reports false for values outside the range
// duration.proto allows or with seconds and nanos of different signs.
func appendDuration(dst []byte, seconds int64, nanos int32) ([]byte, bool) {
	if seconds < -maxDurationSeconds || seconds > maxDurationSeconds ||
		nanos <= -1e9 || nanos >= 1e9 ||
		(seconds > 0 && nanos < 0) || (seconds < 0 && nanos > 0) {
		return dst, false
	}
	dst = append(dst, '"')
	if seconds < 0 || nanos < 0 {
		dst = append(dst, '-')
		seconds, nanos = -seconds, -nanos
	}
	dst = strconv.AppendInt(dst, seconds, 10)
	if nanos != 0 {
		var frac [9]byte
		n := nanos
		for i := 8; i >= 0; i-- {
			frac[i] = byte('0' + n%10)
			n /= 10
		}
		digits := frac[:]
		for len(digits) > 3 && string(digits[len(digits)-3:]) == "000" {
			digits = digits[:len(digits)-3]
		}
		dst = append(dst, '.')
		dst = append(dst, digits...)
	}
	return append(dst, 's', '"'), true
}

// decodeAny transcodes one element of the google.protobuf.Any field f
// (google.rpc.Status.details). google.rpc.RetryInfo and google.rpc.BadRequest
// are supported; other detail types are skipped, since the receiver has no
// use for them.
func (d *decoder) decodeAny(f *field) error {
	if d.peek() != '{' {
		return d.errorf(d.pos, "expected object")
	}
	objOff := d.pos

	// "@type" may come after the fields of the packed message, so find it first.
	found := false
	if err := d.eachKey(func(key []byte) error {
		if string(key) != "@type" {
			return d.skipValue()
		}
		s, err := d.readString()
		if err != nil {
			return err
		}
		d.typeURL = append(d.typeURL[:0], s...)
		found = true
		return nil
	}); err != nil {
		return err
	}
	if !found {
		return d.errorf(objOff, "missing @type")
	}
	end := d.pos
	switch anyTypeName(d.typeURL) {
	case otlppb.RetryInfoName:
	case otlppb.BadRequestName:
		return d.decodeBadRequest(f, objOff, end)
	default:
		return nil
	}

	d.pos = objOff
	anyStart := d.beginAny(f)
	err := d.eachKey(func(key []byte) error {
		if string(key) != "retryDelay" && string(key) != "retry_delay" {
			return d.skipValue()
		}
		if d.consumeLiteral("null") {
			return nil
		}
		valOff := d.pos
		s, err := d.readString()
		if err != nil {
			return err
		}
		seconds, nanos, ok := parseDuration(s)
		if !ok {
			return d.errorf(valOff, "invalid duration")
		}
		// Any.value holds RetryInfo{retry_delay: Duration{seconds, nanos}}.
		d.dst = appendTag(d.dst, otlppb.AnyValue, wtLen)
		valueStart := d.beginLen()
		d.dst = appendTag(d.dst, otlppb.RetryInfoRetryDelay, wtLen)
		durStart := d.beginLen()
		if seconds != 0 {
			d.dst = appendTag(d.dst, otlppb.DurationSeconds, wtVarint)
			d.dst = binary.AppendUvarint(d.dst, uint64(seconds))
		}
		if nanos != 0 {
			d.dst = appendTag(d.dst, otlppb.DurationNanos, wtVarint)
			d.dst = binary.AppendUvarint(d.dst, uint64(int64(nanos)))
		}
		d.endLen(durStart)
		d.endLen(valueStart)
		return nil
	})
	if err != nil {
		return err
	}
	d.endLen(anyStart)
	d.pos = end
	return nil
}

// beginAny starts element f of google.protobuf.Any with its type_url
// (d.typeURL) and returns the start to pass to endLen once Any.value is
// written.
func (d *decoder) beginAny(f *field) int {
	d.dst = appendTag(d.dst, f.num, wtLen)
	anyStart := d.beginLen()
	d.dst = appendTag(d.dst, otlppb.AnyTypeURL, wtLen)
	d.dst = binary.AppendUvarint(d.dst, uint64(len(d.typeURL)))
	d.dst = append(d.dst, d.typeURL...)
	return anyStart
}

// decodeBadRequest transcodes the Any object at objOff (ending at end),
// whose @type is google.rpc.BadRequest:
//
//	{"@type":"...","fieldViolations":[{"field":"...","description":"..."}]}
func (d *decoder) decodeBadRequest(f *field, objOff, end int) error {
	d.pos = objOff
	anyStart := d.beginAny(f)
	d.dst = appendTag(d.dst, otlppb.AnyValue, wtLen)
	valueStart := d.beginLen()
	err := d.eachKey(func(key []byte) error {
		if string(key) != "fieldViolations" && string(key) != "field_violations" {
			return d.skipValue()
		}
		if d.consumeLiteral("null") {
			return nil
		}
		return d.eachElement(func() error {
			if d.peek() != '{' {
				return d.errorf(d.pos, "expected object")
			}
			d.dst = appendTag(d.dst, otlppb.BadRequestFieldViolations, wtLen)
			violationStart := d.beginLen()
			err := d.eachKey(func(key []byte) error {
				var num uint32
				switch string(key) {
				case "field":
					num = otlppb.BadRequestFieldViolationField
				case "description":
					num = otlppb.BadRequestFieldViolationDescription
				default:
					return d.skipValue()
				}
				if d.consumeLiteral("null") {
					return nil
				}
				s, err := d.readString()
				if err != nil {
					return err
				}
				if len(s) > 0 {
					if err := d.fits(len(s)); err != nil {
						return err
					}
					d.dst = appendTag(d.dst, num, wtLen)
					d.dst = binary.AppendUvarint(d.dst, uint64(len(s)))
					d.dst = append(d.dst, s...)
				}
				return nil
			})
			d.endLen(violationStart)
			if err != nil {
				return err
			}
			return d.checkOutput()
		})
	})
	if err != nil {
		return err
	}
	d.endLen(valueStart)
	d.endLen(anyStart)
	d.pos = end
	return nil
}

// eachElement calls fn for every element of the JSON array at the current
// position, with the position at the element; fn must consume it.
func (d *decoder) eachElement(fn func() error) error {
	if d.peek() != '[' {
		return d.errorf(d.pos, "expected array")
	}
	return d.eachMember(']', fn)
}

// eachKey calls fn for every key of the JSON object at the current position,
// with the position at the key's value; fn must consume the value.
func (d *decoder) eachKey(fn func(key []byte) error) error {
	return d.eachMember('}', func() error {
		key, err := d.readString()
		if err != nil {
			return err
		}
		d.skipWS()
		if d.peek() != ':' {
			return d.errorf(d.pos, "expected ':' after object key")
		}
		d.pos++
		d.skipWS()
		return fn(key)
	})
}

// eachMember walks the JSON object or array whose opening brace or bracket
// is at the current position, calling member for each member (with the
// position at its start) up to closing, and counts it against MaxDepth.
func (d *decoder) eachMember(closing byte, member func() error) error {
	if d.depth >= MaxDepth {
		return d.errorf(d.pos, "message nesting exceeds %d levels", MaxDepth)
	}
	d.depth++
	d.pos++ // '{' or '['
	d.skipWS()
	if d.peek() == closing {
		d.pos++
		d.depth--
		return nil
	}
	for {
		d.skipWS()
		if err := member(); err != nil {
			return err
		}
		d.skipWS()
		switch d.peek() {
		case ',':
			d.pos++
		case closing:
			d.pos++
			d.depth--
			return nil
		default:
			return d.errorf(d.pos, "expected ',' or '%c'", closing)
		}
	}
}

// parseDuration parses the proto3 JSON form of google.protobuf.Duration: an
// optional '-', decimal seconds with up to 9 fractional digits, and 's'.
func parseDuration(s []byte) (seconds int64, nanos int32, ok bool) {
	if len(s) < 2 || s[len(s)-1] != 's' {
		return 0, 0, false
	}
	s = s[:len(s)-1]
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		if seconds > maxDurationSeconds {
			return 0, 0, false
		}
		seconds = seconds*10 + int64(s[i]-'0')
		i++
	}
	if i == 0 || seconds > maxDurationSeconds {
		return 0, 0, false
	}
	if i < len(s) {
		if s[i] != '.' || len(s)-i-1 < 1 || len(s)-i-1 > 9 {
			return 0, 0, false
		}
		digits := 0
		for _, c := range s[i+1:] {
			if !isDigit(c) {
				return 0, 0, false
			}
			nanos = nanos*10 + int32(c-'0')
			digits++
		}
		for ; digits < 9; digits++ {
			nanos *= 10
		}
	}
	if neg {
		seconds, nanos = -seconds, -nanos
	}
	return seconds, nanos, true
}

// encodeBadRequest appends the JSON form of an Any holding a
// google.rpc.BadRequest:
//
//	message BadRequest {
//	  message FieldViolation {
//	    string field = 1;
//	    string description = 2;
//	  }
//	  repeated FieldViolation field_violations = 1;
//	}
func (e *encoder) encodeBadRequest(typeURL, src []byte, off int) error {
	e.dst = append(e.dst, `{"@type":`...)
	e.dst = appendJSONString(e.dst, typeURL)
	var fc, vfc easyproto.FieldContext
	n := 0
	for len(src) > 0 {
		var err error
		if src, err = otlppb.NextField(&fc, src); err != nil {
			return e.errorf(off, "cannot read google.rpc.BadRequest field: %s", err)
		}
		v, ok := fc.MessageData()
		if fc.FieldNum != otlppb.BadRequestFieldViolations || !ok {
			continue
		}
		if n == 0 {
			e.dst = append(e.dst, `,"fieldViolations":[`...)
		} else {
			e.dst = append(e.dst, ',')
		}
		n++
		// Strings are scalars: the last occurrence wins.
		var field, description []byte
		for len(v) > 0 {
			if v, err = otlppb.NextField(&vfc, v); err != nil {
				return e.errorf(off, "cannot read google.rpc.BadRequest.FieldViolation field: %s", err)
			}
			if d, ok := vfc.MessageData(); ok {
				switch vfc.FieldNum {
				case otlppb.BadRequestFieldViolationField:
					field = d
				case otlppb.BadRequestFieldViolationDescription:
					description = d
				}
			}
		}
		e.dst = append(e.dst, '{')
		if len(field) > 0 {
			e.dst = append(e.dst, `"field":`...)
			e.dst = appendJSONString(e.dst, field)
		}
		if len(description) > 0 {
			if len(field) > 0 {
				e.dst = append(e.dst, ',')
			}
			e.dst = append(e.dst, `"description":`...)
			e.dst = appendJSONString(e.dst, description)
		}
		e.dst = append(e.dst, '}')
	}
	if n > 0 {
		e.dst = append(e.dst, ']')
	}
	e.dst = append(e.dst, '}')
	return nil
}
