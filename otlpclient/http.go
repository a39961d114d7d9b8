package otlpclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// maxHTTPResponse bounds an OTLP/HTTP response body read by HTTPExporter,
// as grpcwire.DefaultMaxResponseSize bounds an OTLP/gRPC one: a larger
// body is not read further and the attempt fails (retryable).
const maxHTTPResponse = grpcwire.DefaultMaxResponseSize

// HTTPExporter sends export requests over OTLP/HTTP (OTLP v1.11 "OTLP/HTTP"),
// with binary protobuf bodies or, if JSON is set, OTLP/JSON bodies. It
// retries as Config.Retry does; a Retry-After header, in either of the forms
// RFC 9110 section 10.2.3 allows and OTLP v1.11 "OTLP/HTTP Throttling"
// refers to (delay-seconds or an HTTP-date), is the least wait before the
// next attempt. It is safe for concurrent use.
type HTTPExporter struct {
	cfg    Config
	client *http.Client
	url    string
	json   bool
	header http.Header
	auto   *autoKeys // with Config.IdempotencyKeys; nil otherwise
}

// HTTPConfig configures an HTTPExporter.
type HTTPConfig struct {
	Config
	// URL is the full URL of the signal's endpoint, for example
	// "https://collector:4318/v1/traces".
	URL string
	// JSON sends OTLP/JSON (Content-Type: application/json) instead of
	// binary protobuf.
	JSON bool
	// Header is added to every request (authentication, tenant ids).
	Header http.Header
}

// NewHTTPExporter returns an exporter for cfg. Config.HTTP, if set, is the
// client used (it may speak HTTP/1.1 or HTTP/2); otherwise one is built
// with Config.TLS. A Config.Endpoint "unix:PATH" sends to that Unix
// socket whatever URL's host, which is the Host header (UnixAuthority, as
// AuthorityOf gives, is the usual one); otherwise URL says where.
func NewHTTPExporter(cfg HTTPConfig) *HTTPExporter {
	client := cfg.HTTP
	if client == nil {
		client = NewHTTP1Client(cfg.TLS, DialEndpoint(cfg.Endpoint, cfg.DialContext))
	}
	h := &HTTPExporter{cfg: cfg.Config, client: noRedirects(client), url: cfg.URL, json: cfg.JSON, header: cfg.Header}
	if cfg.IdempotencyKeys {
		h.auto = newAutoKeys()
	}
	return h
}

// NewHTTP1Client returns the client an HTTPExporter uses by default:
// HTTP/1.1 or, over TLS, HTTP/2 if the server offers it, with response
// headers bounded by maxResponseHeaderBytes, its connections opened by
// dial (nil: TCP).
func NewHTTP1Client(tlsConfig *tls.Config, dial DialFunc) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:            dial,
		TLSClientConfig:        tlsConfig,
		ForceAttemptHTTP2:      true,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		HTTP2:                  &http.HTTP2Config{SendPingTimeout: pingEvery, PingTimeout: pingTimeout},
	}}
}

// HTTPError is an OTLP/HTTP refusal: the status code and the message of the
// response's google.rpc.Status, if it had one.
type HTTPError struct {
	StatusCode int
	Status     string // "400 Bad Request"
	Message    string
}

func (e *HTTPError) Error() string {
	if e.Message != "" {
		return "HTTP " + e.Status + ": " + e.Message
	}
	return "HTTP " + e.Status
}

// ExportResult sends req, a serialized Export*ServiceRequest of the
// configured signal, and returns the partial success of the response. The
// export carries the idempotency key of ctx (WithIdempotencyKey), or a
// random one with Config.IdempotencyKeys, as the Idempotency-Key header
// (a structured-field string), the same on every attempt. A
// refusal that is not retryable is returned as *AttemptError wrapping an
// *HTTPError; a request given up is an error wrapping ErrDropped.
func (h *HTTPExporter) ExportResult(ctx context.Context, req []byte) (otlp.PartialSuccess, error) {
	body := req
	dataType, respType, _ := otlpjson.ForSignal(h.cfg.Signal)
	if h.json {
		var err error
		if body, err = otlpjson.Marshal(nil, dataType, req); err != nil {
			return otlp.PartialSuccess{}, &AttemptError{Err: fmt.Errorf("cannot encode request as OTLP/JSON: %w", err)}
		}
	}
	gz := h.cfg.Compression == compression.Gzip
	if gz {
		var err error
		if body, err = compression.Compress(nil, compression.Gzip, body); err != nil {
			return otlp.PartialSuccess{}, &AttemptError{Err: fmt.Errorf("cannot compress request: %w", err)}
		}
	}
	key, err := exportKey(ctx, h.auto)
	if err != nil {
		return otlp.PartialSuccess{}, err
	}
	if key != "" {
		key = sfString(key)
	}
	return h.cfg.Retry(ctx, func(ctx context.Context) (otlp.PartialSuccess, error) {
		return h.attempt(ctx, body, gz, respType, key)
	})
}

// attempt is one POST. Refusals are *AttemptError saying whether they are
// retryable; transport failures are plain errors, which the loop retries.
// key, if not empty, is the Idempotency-Key header's value, the same on
// every attempt of the export.
func (h *HTTPExporter) attempt(ctx context.Context, body []byte, gz bool, respType otlpjson.MessageType, key string) (otlp.PartialSuccess, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return otlp.PartialSuccess{}, &AttemptError{Err: err}
	}
	for k, v := range h.header {
		req.Header[k] = v
	}
	if h.json {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
	}
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	if key != "" {
		req.Header.Set(otlp.IdempotencyKeyHeader, key)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return otlp.PartialSuccess{}, err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPResponse+1))
	if err != nil {
		return otlp.PartialSuccess{}, err
	}
	if len(respBody) > maxHTTPResponse {
		return otlp.PartialSuccess{}, &AttemptError{Err: fmt.Errorf("HTTP %s with a body of more than %d bytes: not an OTLP response", resp.Status, maxHTTPResponse), Retryable: true}
	}
	ct := resp.Header.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	isJSON := h.json || ct == "application/json"
	if resp.StatusCode == http.StatusOK {
		// Only an Export*ServiceResponse is a delivery (OTLP v1.11
		// "Success"): a body that does not parse as one (a proxy's page,
		// garbage) is a failure, retried, never counted as sent.
		ps, err := parseHTTPSuccess(respBody, ct, h.json, respType)
		if err != nil {
			return otlp.PartialSuccess{}, &AttemptError{Err: fmt.Errorf("HTTP %s but %w", resp.Status, err), Retryable: true}
		}
		return ps, nil
	}
	herr := &HTTPError{StatusCode: resp.StatusCode, Status: resp.Status}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		// Not followed (noRedirects): the destination's URL is wrong.
		herr.Message = "the destination redirects (to " + shortMessage(resp.Header.Get("Location")) + "); redirects are not followed: point the URL at the receiver"
		return otlp.PartialSuccess{}, &AttemptError{Err: herr}
	}
	if isJSON {
		if pb, err := otlpjson.Unmarshal(nil, otlpjson.Status, respBody); err == nil {
			respBody = pb
		}
	}
	if st, err := grpcwire.ParseStatusProto(respBody); err == nil {
		herr.Message = shortMessage(st.Message)
	}
	// OTLP v1.11 "Retryable Response Codes" (OTLP/HTTP), and, for a
	// request sent with an idempotency key, 409: the IETF draft's answer
	// to a request whose key's first request is still being processed
	// (otlp.IdempotencyKeyHeader), which a retry settles once that one is
	// answered.
	if otlp.RetryableHTTPStatus(resp.StatusCode) || resp.StatusCode == http.StatusConflict && key != "" {
		return otlp.PartialSuccess{}, &AttemptError{Err: herr, Retryable: true, Delay: ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	}
	return otlp.PartialSuccess{}, &AttemptError{Err: herr}
}

// ParseRetryAfter reads a Retry-After header at now: delay-seconds or an
// HTTP-date (RFC 9110 section 10.2.3; OTLP v1.11 "OTLP/HTTP Throttling"
// allows both), cut to otlp.MaxServerDelay (a date in the year 9999 or
// a number of seconds past int64 included: no overflow). Zero means
// absent, unreadable or already past.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseUint(v, 10, 64); err == nil {
		return otlp.ServerDelay(time.Duration(min(s, uint64(otlp.MaxServerDelay/time.Second))) * time.Second)
	} else if errors.Is(err, strconv.ErrRange) {
		return otlp.MaxServerDelay // digits only, more than uint64 holds
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return otlp.ServerDelay(t.Sub(now)) // Sub saturates
	}
	return 0
}

// parseHTTPSuccess reads the body of an OTLP/HTTP 200: an
// Export*ServiceResponse in protobuf or OTLP/JSON, as its Content-Type ct
// (parameters removed) says, or, without one, in the request's encoding
// (OTLP/JSON when jsonReq). Any other type (a proxy's HTML page) is not an
// OTLP response. An empty body is the empty response whatever its type.
func parseHTTPSuccess(body []byte, ct string, jsonReq bool, respType otlpjson.MessageType) (otlp.PartialSuccess, error) {
	if len(body) == 0 {
		return otlp.PartialSuccess{}, nil
	}
	switch {
	case ct == "application/json" || ct == "" && jsonReq:
		pb, err := otlpjson.Unmarshal(nil, respType, body)
		if err != nil {
			return otlp.PartialSuccess{}, fmt.Errorf("cannot decode the JSON response: %w", err)
		}
		body = pb
	case ct != "application/x-protobuf" && ct != "application/protobuf" && ct != "":
		return otlp.PartialSuccess{}, fmt.Errorf("the response is %q, not an OTLP response", shortMessage(ct))
	}
	return parseResponse(body)
}

// RefusesClient reports whether err, a final failure of an exporter, refuses
// the client or the endpoint rather than the data: authentication and
// permission (UNAUTHENTICATED, PERMISSION_DENIED, 401, 403), a service or
// path the target does not serve (UNIMPLEMENTED, 404, 405), a media type it
// does not take (415), or a status that ended a whole stream. Such a target
// would refuse every request the same way, so a caller should not treat
// the refusal as a verdict on its data (and skip it), but wait for the
// operator to fix the target or the configuration.
func RefusesClient(err error) bool {
	if re, ok := errors.AsType[*RequestError](err); ok && re.Stream != nil {
		return refusingCode(re.Stream.Code)
	}
	if he, ok := errors.AsType[*HTTPError](err); ok {
		if he.StatusCode >= 300 && he.StatusCode < 400 {
			return true // a redirect, not followed: the URL is wrong
		}
		switch he.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType:
			return true
		}
		return false
	}
	if st, ok := errors.AsType[*grpcwire.Status](err); ok {
		return refusingCode(st.Code)
	}
	return false
}

func refusingCode(c grpcwire.Code) bool {
	return c == grpcwire.Unauthenticated || c == grpcwire.PermissionDenied || c == grpcwire.Unimplemented
}
