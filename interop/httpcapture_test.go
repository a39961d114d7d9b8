package interop

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/otlpjson"
	"github.com/otlp-lite/otlp-lite/storage"
)

// httpCapture is capture for OTLP/HTTP exporters: an http.RoundTripper,
// installed through the SDK exporters' WithHTTPClient, that keeps a copy of
// every request body, decodes it once the server answered 200 (and records
// it as acknowledged), and checks the response against OTLP v1.11
// "OTLP/HTTP Response": same Content-Type as the request, and on full
// success a body whose partial_success is unset.
type httpCapture struct {
	rt http.RoundTripper

	mu           sync.Mutex
	traces       []*coltracepb.ExportTraceServiceRequest
	metrics      []*colmetricspb.ExportMetricsServiceRequest
	logs         []*collogspb.ExportLogsServiceRequest
	failures     []string       // transport errors, non-200 answers, malformed responses
	partial      []string       // 200 answers that carried a partial_success
	encodings    map[string]int // Content-Encoding of each sent request ("" = identity)
	contentTypes map[string]int // media type of each sent request
	protos       map[string]int // HTTP version of each response
}

func newHTTPCapture() *httpCapture {
	// A transport of its own, so that idle connections to a stopped server
	// do not leak into other tests.
	return &httpCapture{
		rt:           http.DefaultTransport.(*http.Transport).Clone(),
		encodings:    make(map[string]int),
		contentTypes: make(map[string]int),
		protos:       make(map[string]int),
	}
}

// client returns the *http.Client to hand to an exporter.
func (c *httpCapture) client() *http.Client {
	return &http.Client{Transport: c, Timeout: 10 * time.Second}
}

func (c *httpCapture) close() { c.rt.(*http.Transport).CloseIdleConnections() }

func (c *httpCapture) fail(format string, args ...any) {
	c.mu.Lock()
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

// RoundTrip implements http.RoundTripper.
func (c *httpCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	// RoundTrippers must not modify the request: send a clone.
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	resp, err := c.rt.RoundTrip(out)
	if err != nil {
		c.fail("%s: %v", req.URL.Path, err)
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		c.fail("%s: cannot read response: %v", req.URL.Path, err)
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))

	c.mu.Lock()
	c.encodings[req.Header.Get("Content-Encoding")]++
	c.protos[resp.Proto]++
	c.mu.Unlock()
	reqType, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	c.mu.Lock()
	c.contentTypes[reqType]++
	c.mu.Unlock()
	if resp.StatusCode != http.StatusOK {
		c.fail("%s: HTTP %d: %q", req.URL.Path, resp.StatusCode, respBody)
		return resp, nil
	}
	if err := c.record(req.URL.Path, reqType, req.Header.Get("Content-Encoding"), body, resp, respBody); err != nil {
		c.fail("%s: %v", req.URL.Path, err)
	}
	return resp, nil
}

// record decodes an acknowledged request and checks its response.
func (c *httpCapture) record(path, reqType, encoding string, body []byte, resp *http.Response, respBody []byte) error {
	signal, ok := map[string]storage.Signal{"/v1/traces": storage.Traces, "/v1/metrics": storage.Metrics, "/v1/logs": storage.Logs}[path]
	if !ok {
		return fmt.Errorf("request to an unexpected path")
	}
	switch encoding {
	case "":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("cannot gunzip the request: %w", err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("cannot gunzip the request: %w", err)
		}
	default:
		return fmt.Errorf("unexpected Content-Encoding %q", encoding)
	}
	respType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if respType != reqType {
		// otlp.md "OTLP/HTTP Response": the response uses the request's
		// Content-Type.
		return fmt.Errorf("response Content-Type %q, request %q", respType, reqType)
	}
	msg, rsp := newRequest(signal), newResponse(signal)
	switch reqType {
	case "application/x-protobuf":
		if err := proto.Unmarshal(body, msg); err != nil {
			return fmt.Errorf("cannot parse the request: %w", err)
		}
		if err := proto.Unmarshal(respBody, rsp); err != nil {
			return fmt.Errorf("cannot parse the response %q: %w", respBody, err)
		}
	case "application/json":
		pb, err := otlpjson.Unmarshal(nil, jsonType(signal), body)
		if err == nil {
			err = proto.Unmarshal(pb, msg)
		}
		if err != nil {
			return fmt.Errorf("cannot parse the JSON request: %w", err)
		}
		// Full success is the empty object: partial_success unset.
		if string(respBody) != "{}" {
			c.mu.Lock()
			c.partial = append(c.partial, fmt.Sprintf("%s: %s", path, respBody))
			c.mu.Unlock()
		}
	default:
		return fmt.Errorf("unexpected request Content-Type %q", reqType)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps := partialSuccess(rsp); ps != nil {
		c.partial = append(c.partial, fmt.Sprintf("%s: %v", path, ps))
	}
	switch m := msg.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		c.traces = append(c.traces, m)
	case *colmetricspb.ExportMetricsServiceRequest:
		c.metrics = append(c.metrics, m)
	case *collogspb.ExportLogsServiceRequest:
		c.logs = append(c.logs, m)
	}
	return nil
}

// jsonType is the otlpjson message type of signal's Export request.
func jsonType(signal storage.Signal) otlpjson.MessageType {
	switch signal {
	case storage.Traces:
		return otlpjson.ExportTraceServiceRequest
	case storage.Metrics:
		return otlpjson.ExportMetricsServiceRequest
	}
	return otlpjson.ExportLogsServiceRequest
}

func countsString(m map[string]int) string {
	var s []string
	for k, n := range m {
		s = append(s, fmt.Sprintf("%q×%d", k, n))
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// summary describes what was captured, for failure messages.
func (c *httpCapture) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%d trace, %d metrics, %d logs requests OK; failures: [%s]; partial successes: [%s]; encodings: %s; content types: %s; protocols: %s",
		len(c.traces), len(c.metrics), len(c.logs), strings.Join(c.failures, "; "), strings.Join(c.partial, "; "),
		countsString(c.encodings), countsString(c.contentTypes), countsString(c.protos))
}
