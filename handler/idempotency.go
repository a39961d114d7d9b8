package handler

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/internal/quote"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// Idempotency keys on the way in (issue 24, docs/exactly-once.md): each
// transport reads the key its clients send and hands it to the pipeline
// (ingest.Request.IdempotencyKey), whose window does the rest. A request
// without one is served as before, at the cost of a header lookup.

// httpIdempotencyKey reads the Idempotency-Key header field of an
// OTLP/HTTP request ("" when there is none). Its value is a structured
// field string (RFC 8941 sf-string: "..." with \" and \\ escapes), as the
// IETF httpapi draft defines it; a bare token (visible ASCII, no quotes,
// no spaces, a UUID as is) is accepted too, as clients often send one. A
// malformed value, more than one, or a key longer than
// otlp.MaxIdempotencyKeyLen is refused (400).
func httpIdempotencyKey(h http.Header) (string, *grpcwire.Status) {
	vs := h[otlp.IdempotencyKeyHeader]
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", grpcwire.Errorf(grpcwire.InvalidArgument, "%s is sent %d times: send one key per request", otlp.IdempotencyKeyHeader, len(vs))
	}
	key, err := parseIdempotencyKey(vs[0])
	if err != nil {
		return "", grpcwire.Errorf(grpcwire.InvalidArgument, "invalid %s %s: %v", otlp.IdempotencyKeyHeader, quote.String(cut(vs[0], 64)), err)
	}
	return key, nil
}

// grpcIdempotencyKey reads the idempotency-key metadata entry of a gRPC
// export ("" when there is none): the key as sent (gRPC metadata values
// are printable ASCII already), 1 to otlp.MaxIdempotencyKeyLen bytes.
func grpcIdempotencyKey(h http.Header) (string, *grpcwire.Status) {
	return plainHeaderKey(h, otlp.IdempotencyKeyHeader, otlp.IdempotencyKeyMetadata, otlp.MaxIdempotencyKeyLen)
}

// streamClientID reads the Otlplite-Stream-Client-Id header of an export
// stream ("" when there is none): the identity the client keeps for its
// life and across reconnects, which with each request's id forms the
// request's key.
func streamClientID(h http.Header) (string, *grpcwire.Status) {
	return plainHeaderKey(h, otlp.StreamClientIDHeader, strings.ToLower(otlp.StreamClientIDHeader), otlp.MaxStreamClientIDLen)
}

// plainHeaderKey reads a header sent as gRPC metadata: canon is its
// canonical name (net/http's key), name the name a client knows.
func plainHeaderKey(h http.Header, canon, name string, maxLen int) (string, *grpcwire.Status) {
	vs := h[canon]
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", grpcwire.Errorf(grpcwire.InvalidArgument, "metadata %s is sent %d times: send one per call", name, len(vs))
	}
	v := vs[0]
	switch {
	case v == "":
		return "", grpcwire.Errorf(grpcwire.InvalidArgument, "metadata %s is empty", name)
	case len(v) > maxLen:
		return "", grpcwire.Errorf(grpcwire.InvalidArgument, "metadata %s of %d bytes is longer than %d bytes", name, len(v), maxLen)
	}
	for i := range len(v) {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return "", grpcwire.Errorf(grpcwire.InvalidArgument, "metadata %s holds byte %#x: use printable ASCII", name, c)
		}
	}
	return v, nil
}

var (
	errKeyEmpty = errors.New("the key is empty")
	errKeyLong  = fmt.Errorf("the key is longer than %d bytes", otlp.MaxIdempotencyKeyLen)
)

// parseIdempotencyKey parses an Idempotency-Key field value: an sf-string
// or a bare token (see httpIdempotencyKey). A string without escapes is
// returned as a substring of v.
func parseIdempotencyKey(v string) (string, error) {
	v = strings.Trim(v, " \t")
	if v == "" {
		return "", errKeyEmpty
	}
	if v[0] != '"' {
		for i := range len(v) {
			if c := v[i]; c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == ',' || c == ';' {
				return "", fmt.Errorf("byte %#x at %d: send a structured-field string (\"...\") or a token of visible ASCII", c, i)
			}
		}
		if len(v) > otlp.MaxIdempotencyKeyLen {
			return "", errKeyLong
		}
		return v, nil
	}
	// RFC 8941 section 4.2.5: unescaped %x20-21 / %x23-5B / %x5D-7E,
	// escaped \" and \\.
	var b []byte // nil until an escape is met
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			i++
			if i == len(v) || v[i] != '"' && v[i] != '\\' {
				return "", fmt.Errorf("bad escape at %d: a string escapes only \\\" and \\\\", i-1)
			}
			if b == nil {
				b = append(make([]byte, 0, len(v)), v[1:i-1]...)
			}
			b = append(b, v[i])
		case c == '"':
			if i != len(v)-1 {
				return "", fmt.Errorf("text after the closing quote at %d", i)
			}
			key := v[1:i]
			if b != nil {
				key = string(b)
			}
			switch {
			case key == "":
				return "", errKeyEmpty
			case len(key) > otlp.MaxIdempotencyKeyLen:
				return "", errKeyLong
			}
			return key, nil
		case c < 0x20 || c > 0x7e:
			return "", fmt.Errorf("byte %#x at %d: a string holds printable ASCII", c, i)
		default:
			if b != nil {
				b = append(b, c)
			}
		}
	}
	return "", errors.New("the string has no closing quote")
}

// cut returns s cut to n bytes, for a message.
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
