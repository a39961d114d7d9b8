package grpcwire

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
)

// Client is the client side of unary gRPC calls over net/http's HTTP/2: what
// otlp-lite's own tools (export to another receiver, load generation) and
// tests use to talk to any gRPC server, ours or grpc-go's.
type Client struct {
	// HTTP must speak HTTP/2 to the target (see NewClient).
	HTTP *http.Client
	// BaseURL is "http://host:port" for h2c or "https://host:port" for TLS.
	BaseURL string
	// Encoding compresses request messages; Identity sends them as they are.
	Encoding compression.Codec
	// MaxRecvMsgSize bounds a response message; zero means
	// DefaultMaxResponseSize.
	MaxRecvMsgSize int
}

// DefaultMaxResponseSize bounds a response a client reads by default: an
// OTLP Export*ServiceResponse, a google.rpc.Status or a stream
// acknowledgement is a few hundred bytes; 4 MiB (grpc-go's default receive
// limit) leaves room for a verbose message without letting a misbehaving
// server make each call hold the 64 MiB a request may take.
const DefaultMaxResponseSize = 4 << 20

// NewClient returns a Client for addr ("host:port") over h2c, or over TLS
// when tlsConfig is not nil.
func NewClient(addr string, tlsConfig *tls.Config) *Client {
	tr := &http.Transport{
		Protocols:       new(http.Protocols),
		TLSClientConfig: tlsConfig,
		// gRPC needs HTTP/2 end to end; a response that is not is an
		// error, not a fallback.
		ForceAttemptHTTP2: true,
	}
	scheme := "https"
	if tlsConfig == nil {
		tr.Protocols.SetUnencryptedHTTP2(true)
		scheme = "http"
	} else {
		tr.Protocols.SetHTTP2(true)
	}
	return &Client{HTTP: &http.Client{Transport: tr}, BaseURL: scheme + "://" + addr}
}

// Invoke makes a unary call of method ("/pkg.Service/Method") with the
// serialized request and returns the serialized response. A non-OK gRPC
// status is returned as *Status (use errors.As); transport failures as other
// errors.
func (c *Client) Invoke(ctx context.Context, method string, req []byte) ([]byte, error) {
	body := make([]byte, 5, 5+len(req))
	if c.Encoding != compression.Identity {
		var err error
		if body, err = compression.Compress(body, c.Encoding, req); err != nil {
			return nil, err
		}
		body[0] = 1
	} else {
		body = append(body, req...)
	}
	n := len(body) - 5
	body[1], body[2], body[3], body[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)

	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+method, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/grpc")
	hreq.Header.Set("Te", "trailers")
	hreq.Header.Set("Grpc-Accept-Encoding", compression.Supported)
	if c.Encoding != compression.Identity {
		hreq.Header.Set("Grpc-Encoding", c.Encoding.String())
	}
	if dl, ok := ctx.Deadline(); ok {
		hreq.Header.Set("Grpc-Timeout", formatTimeout(time.Until(dl)))
	}
	resp, err := c.HTTP.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if st := StatusFromHeader(resp.Header); st != nil {
			return nil, st
		}
		if st := StatusFromHTTP(resp); st != nil {
			return nil, st
		}
		return nil, fmt.Errorf("HTTP status %d from %s", resp.StatusCode, c.BaseURL)
	}
	// Trailers-Only: the status is in the headers and there is no body.
	if st := StatusFromHeader(resp.Header); st != nil {
		if st.Code != OK {
			return nil, st
		}
		return nil, nil
	}
	codec, err := compression.Parse(resp.Header.Get("Grpc-Encoding"))
	if err != nil {
		return nil, err
	}
	limit := c.MaxRecvMsgSize
	if limit <= 0 {
		limit = DefaultMaxResponseSize
	}
	call := &Call{r: &http.Request{Body: resp.Body}, ctx: ctx, codec: codec, limits: Limits{MaxRecvMsgSize: limit}}
	msg, _, rst := call.ReadMessage(nil, nil)
	if rst != nil && !IsEndOfStream(rst) {
		// Our failure to read the response, not the server's status:
		// a plain error (a transport failure, which callers retry), never
		// a *Status that would pass for the server's verdict.
		return nil, fmt.Errorf("cannot read the response of %s: %s", method, rst.Message)
	}
	// A unary response is one message, then the trailers
	// (PROTOCOL-HTTP2.md): anything more is refused, not drained, so a
	// server cannot keep the call reading.
	if _, _, rst := call.ReadMessage(nil, nil); !IsEndOfStream(rst) {
		msg := "more than one response message"
		if rst != nil {
			msg = rst.Message
		}
		return nil, fmt.Errorf("cannot read the response of %s: %s", method, msg)
	}
	st := StatusFromHeader(resp.Trailer)
	if st == nil {
		return nil, errors.New("response ended without grpc-status")
	}
	if st.Code != OK {
		return nil, st
	}
	return msg, nil
}

// StatusFromHTTP is the status of a gRPC response whose HTTP status is not
// 200 and that carries no grpc-status, as PROTOCOL-HTTP2.md's "HTTP to
// gRPC Status Code Mapping" gives it (400 INTERNAL, 401 UNAUTHENTICATED,
// 403 PERMISSION_DENIED, 404 UNIMPLEMENTED, 429, 502, 503, 504
// UNAVAILABLE), and a redirect, which clients do not follow, as
// UNIMPLEMENTED (the service is not at this address). nil for the other
// codes, whose UNKNOWN callers may treat as a transport failure.
func StatusFromHTTP(resp *http.Response) *Status {
	switch c := resp.StatusCode; {
	case c >= 300 && c < 400:
		loc := resp.Header.Get("Location")
		if len(loc) > 256 {
			loc = loc[:256] + "..."
		}
		return Errorf(Unimplemented, "HTTP status %d: the server redirects (to %q), which gRPC does not follow", c, loc)
	case c == http.StatusBadRequest:
		return Errorf(Internal, "HTTP status %d", c)
	case c == http.StatusUnauthorized:
		return Errorf(Unauthenticated, "HTTP status %d", c)
	case c == http.StatusForbidden:
		return Errorf(PermissionDenied, "HTTP status %d", c)
	case c == http.StatusNotFound:
		return Errorf(Unimplemented, "HTTP status %d", c)
	case c == http.StatusTooManyRequests, c == http.StatusBadGateway, c == http.StatusServiceUnavailable, c == http.StatusGatewayTimeout:
		return Errorf(Unavailable, "HTTP status %d", c)
	}
	return nil
}

// StatusFromHeader reads grpc-status, grpc-message and
// grpc-status-details-bin (PROTOCOL-HTTP2.md, "Responses") from a response
// header or trailer; nil if there is no grpc-status. The details are kept
// as ParseStatusProto reads them: a RetryInfo becomes RetryDelay (-1 for an
// explicit zero delay), a BadRequest becomes Violations. Details that cannot
// be decoded are ignored.
func StatusFromHeader(h http.Header) *Status {
	v := h.Get("Grpc-Status")
	if v == "" {
		return nil
	}
	code, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return &Status{Code: Unknown, Message: "malformed grpc-status " + strconv.Quote(v)}
	}
	st := &Status{Code: Code(code), Message: DecodeGRPCMessage(h.Get("Grpc-Message"))}
	if d := h.Get("Grpc-Status-Details-Bin"); d != "" {
		// Senders may or may not pad (PROTOCOL-HTTP2.md): accept both.
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(d, "="))
		if err == nil {
			if full, err := ParseStatusProto(raw); err == nil {
				st.RetryDelay = full.RetryDelay
				st.Violations = full.Violations
			}
		}
	}
	return st
}

// formatTimeout renders d as a grpc-timeout value with at most 8 digits.
func formatTimeout(d time.Duration) string {
	if d <= 0 {
		return "1n"
	}
	units := []struct {
		d time.Duration
		c byte
	}{{time.Nanosecond, 'n'}, {time.Microsecond, 'u'}, {time.Millisecond, 'm'}, {time.Second, 'S'}, {time.Minute, 'M'}, {time.Hour, 'H'}}
	for _, u := range units {
		if v := d / u.d; v < 1e8 {
			// Round up so the server's deadline is never earlier than ours.
			if d%u.d != 0 {
				v++
			}
			return strconv.FormatInt(int64(v), 10) + string(u.c)
		}
	}
	return "99999999H"
}
