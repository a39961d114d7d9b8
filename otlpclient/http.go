package otlpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// maxHTTPResponse bounds an OTLP/HTTP response body read by HTTPExporter:
// an Export*ServiceResponse or a google.rpc.Status is a few hundred bytes;
// 4 MiB leaves room for a verbose error message without letting a
// misbehaving server make the client buffer without limit.
const maxHTTPResponse = 4 << 20

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
// with Config.TLS.
func NewHTTPExporter(cfg HTTPConfig) *HTTPExporter {
	client := cfg.HTTP
	if client == nil {
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: cfg.TLS, ForceAttemptHTTP2: true}}
	}
	return &HTTPExporter{cfg: cfg.Config, client: client, url: cfg.URL, json: cfg.JSON, header: cfg.Header}
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
// configured signal, and returns the partial success of the response. A
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
	return h.cfg.Retry(ctx, func(ctx context.Context) (otlp.PartialSuccess, error) {
		return h.attempt(ctx, body, gz, respType)
	})
}

// attempt is one POST. Refusals are *AttemptError saying whether they are
// retryable; transport failures are plain errors, which the loop retries.
func (h *HTTPExporter) attempt(ctx context.Context, body []byte, gz bool, respType otlpjson.MessageType) (otlp.PartialSuccess, error) {
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
	resp, err := h.client.Do(req)
	if err != nil {
		return otlp.PartialSuccess{}, err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPResponse))
	if err != nil {
		return otlp.PartialSuccess{}, err
	}
	isJSON := h.json || resp.Header.Get("Content-Type") == "application/json"
	if resp.StatusCode == http.StatusOK {
		if isJSON && len(respBody) > 0 {
			if pb, err := otlpjson.Unmarshal(nil, respType, respBody); err == nil {
				respBody = pb
			}
		}
		ps, _ := otlp.ParsePartialSuccess(respBody)
		return ps, nil
	}
	herr := &HTTPError{StatusCode: resp.StatusCode, Status: resp.Status}
	if isJSON {
		if pb, err := otlpjson.Unmarshal(nil, otlpjson.Status, respBody); err == nil {
			respBody = pb
		}
	}
	if st, err := grpcwire.ParseStatusProto(respBody); err == nil {
		herr.Message = st.Message
	}
	// OTLP v1.11 "Retryable Response Codes" (OTLP/HTTP).
	if otlp.RetryableHTTPStatus(resp.StatusCode) {
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
