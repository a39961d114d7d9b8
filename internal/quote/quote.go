// Package quote quotes untrusted input in messages. Every error, refusal
// and log message that names a value a client sent (a header, a path, a
// JSON value) quotes it through this package, so that no message grows
// with its input: a 32 MiB JSON string quoted whole made a 67 MB error
// response. The bound on a whole response is grpcwire's (MaxMessage); this
// is the bound on each value quoted in it.
package quote

import (
	"strconv"
	"unicode/utf8"
)

// MaxPrefix is the most bytes of one input value a message quotes: enough
// to recognise the value (a header, an enum name, a path), short enough
// that a message quoting several stays a line.
const MaxPrefix = 64

// String returns s quoted as by strconv.Quote when it is at most MaxPrefix
// bytes; a longer s is cut to its first MaxPrefix bytes, at a UTF-8
// boundary, quoted, and followed by its length:
//
//	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"... (33554432 bytes)
//
// The result is at most 4*MaxPrefix+32 bytes, whatever s is.
func String(s string) string {
	if len(s) <= MaxPrefix {
		return strconv.Quote(s)
	}
	cut := MaxPrefix
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	b := strconv.AppendQuote(make([]byte, 0, 2*MaxPrefix+32), s[:cut])
	b = append(b, "... ("...)
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, " bytes)"...)
	return string(b)
}

// Bytes is String for a byte slice; it copies at most MaxPrefix bytes of b.
func Bytes(b []byte) string {
	if len(b) <= MaxPrefix {
		return strconv.Quote(string(b))
	}
	cut := MaxPrefix
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	out := strconv.AppendQuote(make([]byte, 0, 2*MaxPrefix+32), string(b[:cut]))
	out = append(out, "... ("...)
	out = strconv.AppendInt(out, int64(len(b)), 10)
	out = append(out, " bytes)"...)
	return string(out)
}
