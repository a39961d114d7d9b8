package otlpjson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// hexDigits is used for \u00XX escapes, lowercase as protojson writes them.
const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a quoted JSON string (RFC 8259 section 7).
//
// Only '"', '\\' and control characters are escaped, matching protojson.
// Invalid UTF-8 is replaced by U+FFFD, as encoding/json does: proto3 requires
// string fields to be valid UTF-8, and an exporter is better served by
// readable output than by an error for a single bad attribute.
func appendJSONString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\')
			switch c {
			case '"', '\\':
				dst = append(dst, c)
			case '\b':
				dst = append(dst, 'b')
			case '\f':
				dst = append(dst, 'f')
			case '\n':
				dst = append(dst, 'n')
			case '\r':
				dst = append(dst, 'r')
			case '\t':
				dst = append(dst, 't')
			default:
				dst = append(dst, 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendJSONFloat appends f the way protojson (and encoding/json) format a
// double: shortest round-trip representation, exponent form outside
// [1e-6, 1e21), and the strings "NaN", "Infinity", "-Infinity" for the
// values JSON numbers cannot express (proto3 JSON mapping).
func appendJSONFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Shorten e-09 to e-9, as encoding/json does.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
