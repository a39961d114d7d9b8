package otlpjson

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the streaming JSON tokenizer (RFC 8259) used by Unmarshal. It
// reads tokens straight from the input: strings without escapes are returned
// as subslices of the input, and escaped strings are unescaped into a reused
// buffer, so the steady state allocates nothing.

// skipWS advances past JSON whitespace (RFC 8259 section 2).
func (d *decoder) skipWS() {
	d.pos = skipWSAt(d.src, d.pos)
}

// skipWSAt returns the index of the first byte at or after i in src that
// is not JSON whitespace. Every whitespace byte is at most ' ', so one
// comparison settles the common case of no whitespace.
func skipWSAt(src []byte, i int) int {
	for i < len(src) && src[i] <= ' ' {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// peek returns the byte at the current position, or 0 at the end of input.
func (d *decoder) peek() byte {
	if d.pos < len(d.src) {
		return d.src[d.pos]
	}
	return 0
}

// consumeLiteral consumes lit (true, false or null) if it is next.
func (d *decoder) consumeLiteral(lit string) bool {
	if len(d.src)-d.pos >= len(lit) && string(d.src[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return true
	}
	return false
}

// readString reads the string token at the current position and returns its
// unescaped content. The result aliases the input or d.buf and is valid
// until the next readString call.
func (d *decoder) readString() ([]byte, error) {
	if d.peek() != '"' {
		return nil, d.errorf(d.pos, "expected string")
	}
	start := d.pos + 1
	i, closed := scanString(d.src, start)
	if closed {
		d.pos = i + 1
		return d.src[start:i], nil
	}
	return d.readStringTail(start, i)
}

// scanString scans the JSON string whose content starts at src[i], up to
// its first quote, backslash, control character or non-ASCII byte. It
// returns that byte's index (or len(src)), and whether it is the closing
// quote, in which case src[i:end] is the string's value: no unescaping and
// no UTF-8 validation are needed.
func scanString(src []byte, i int) (end int, closed bool) {
	// Skip 8 plain ASCII bytes at a time (SWAR). The special bytes set the
	// high bit of their byte in special: a byte b < 0x80 wraps below zero,
	// setting its high bit, in b-0x20 if it is a control character and in
	// (b^'"')-1 or (b^'\\')-1 if it is a quote or backslash, and the other
	// bytes, 0x80 and above, have it set already. The lowest set bit is
	// exact (a wrap borrows only from the bytes after it), so it locates
	// the first special byte without a byte loop: most strings are keys and
	// short values that end within one or two words (BENCHMARKS.md §1.2).
	for i+8 <= len(src) {
		x := binary.LittleEndian.Uint64(src[i : i+8])
		special := ((x - lsb*0x20) | ((x ^ (lsb * '"')) - lsb) | ((x ^ (lsb * '\\')) - lsb) | x) & msb
		if special != 0 {
			i += bits.TrailingZeros64(special) >> 3
			return i, src[i] == '"'
		}
		i += 8
	}
	for ; i < len(src); i++ {
		if c := src[i]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return i, c == '"'
		}
	}
	return i, false
}

// readStringTail is readString from i on, byte by byte: near the end of the
// input, and from the first escape, control or non-ASCII byte.
func (d *decoder) readStringTail(start, i int) ([]byte, error) {
	ascii := true
	for ; i < len(d.src); i++ {
		c := d.src[i]
		switch {
		case c == '"':
			s := d.src[start:i]
			if !ascii && !utf8.Valid(s) {
				return nil, d.errorf(d.pos, "invalid UTF-8 in string")
			}
			d.pos = i + 1
			return s, nil
		case c == '\\':
			return d.readStringSlow(start, i)
		case c < 0x20:
			return nil, d.errorf(i, "control character in string")
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, d.errorf(d.pos, "unterminated string")
}

// readStringSlow unescapes the string starting at start whose first escape
// is at i (RFC 8259 section 7).
func (d *decoder) readStringSlow(start, i int) ([]byte, error) {
	tokenStart := start - 1
	buf := append(d.buf[:0], d.src[start:i]...)
	for i < len(d.src) {
		c := d.src[i]
		switch {
		case c == '"':
			d.buf = buf
			if !utf8.Valid(buf) {
				return nil, d.errorf(tokenStart, "invalid UTF-8 in string")
			}
			d.pos = i + 1
			return buf, nil
		case c < 0x20:
			return nil, d.errorf(i, "control character in string")
		case c != '\\':
			buf = append(buf, c)
			i++
			continue
		}
		if i+1 >= len(d.src) {
			break
		}
		esc := d.src[i+1]
		i += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := parseHex4(d.src[i:])
			if !ok {
				return nil, d.errorf(i-2, "invalid \\u escape in string")
			}
			i += 4
			if utf16.IsSurrogate(r) {
				// A surrogate pair spells one code point; a lone surrogate
				// becomes U+FFFD, as in encoding/json.
				r2 := utf8.RuneError
				if i+6 <= len(d.src) && d.src[i] == '\\' && d.src[i+1] == 'u' {
					if lo, ok := parseHex4(d.src[i+2:]); ok {
						if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
							r2 = dec
							i += 6
						}
					}
				}
				r = r2
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return nil, d.errorf(i-2, "invalid escape in string")
		}
	}
	d.buf = buf
	return nil, d.errorf(tokenStart, "unterminated string")
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

func parseHex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// readNumber reads the number token at the current position.
func (d *decoder) readNumber() ([]byte, error) {
	n := numberLen(d.src[d.pos:])
	if n == 0 {
		return nil, d.errorf(d.pos, "expected number")
	}
	s := d.src[d.pos : d.pos+n]
	d.pos += n
	return s, nil
}

// numberLen returns the length of the JSON number at the start of b
// (RFC 8259 section 6), or 0 if b does not start with a number.
func numberLen(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skipValue skips the value at the current position, checking its syntax.
// Unknown fields are skipped this way (proto3 JSON mapping: parsers should
// ignore unknown fields), still subject to the nesting limit.
func (d *decoder) skipValue() error {
	switch c := d.peek(); c {
	case '{', '[':
		if d.depth >= MaxDepth {
			return d.errorf(d.pos, "nesting exceeds %d levels", MaxDepth)
		}
		d.depth++
		d.pos++
		d.skipWS()
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if d.peek() == end {
			d.pos++
			d.depth--
			return nil
		}
		for {
			d.skipWS()
			if c == '{' {
				if _, err := d.readString(); err != nil {
					return err
				}
				d.skipWS()
				if d.peek() != ':' {
					return d.errorf(d.pos, "expected ':' after object key")
				}
				d.pos++
				d.skipWS()
			}
			if err := d.skipValue(); err != nil {
				return err
			}
			d.skipWS()
			switch d.peek() {
			case ',':
				d.pos++
				continue
			case end:
				d.pos++
				d.depth--
				return nil
			}
			return d.errorf(d.pos, "expected ',' or '%c'", end)
		}
	case '"':
		_, err := d.readString()
		return err
	case 't':
		if d.consumeLiteral("true") {
			return nil
		}
	case 'f':
		if d.consumeLiteral("false") {
			return nil
		}
	case 'n':
		if d.consumeLiteral("null") {
			return nil
		}
	case 0:
		if d.pos >= len(d.src) {
			return d.errorf(d.pos, "unexpected end of input")
		}
	default:
		_, err := d.readNumber()
		return err
	}
	return d.errorf(d.pos, "invalid value")
}
