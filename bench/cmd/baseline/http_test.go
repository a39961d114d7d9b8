package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/otlp-lite/otlp-lite/bench"
	"github.com/otlp-lite/otlp-lite/compression"
)

// TestHTTPHandler posts the benchmark payloads to the baseline's OTLP/HTTP
// handler in every form the benchmark sends and checks the status, the
// response's content type and body, and that the spans were counted.
func TestHTTPHandler(t *testing.T) {
	pb := bench.TracesBytes(20, 3)
	js := bench.TracesJSON(20, 3)
	compress := func(c compression.Codec, b []byte) []byte {
		out, err := compression.Compress(nil, c, b)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		name, method, path, contentType, encoding string
		body                                      []byte
		wantStatus                                int
		wantSpans                                 int64
	}{
		{"protobuf", "POST", "/v1/traces", "application/x-protobuf", "", pb, 200, 20},
		{"json", "POST", "/v1/traces", "application/json", "", js, 200, 20},
		{"protobuf gzip", "POST", "/v1/traces", "application/x-protobuf", "gzip", compress(compression.Gzip, pb), 200, 20},
		{"json zstd", "POST", "/v1/traces", "application/json; charset=utf-8", "zstd", compress(compression.Zstd, js), 200, 20},
		{"unknown encoding", "POST", "/v1/traces", "application/x-protobuf", "br", pb, 400, 0},
		{"bad media type", "POST", "/v1/traces", "text/plain", "", pb, 415, 0},
		{"garbage", "POST", "/v1/traces", "application/x-protobuf", "", []byte{0xff, 0xff}, 400, 0},
		{"wrong method", "GET", "/v1/traces", "", "", nil, 405, 0},
		{"unknown path", "POST", "/v1/profiles", "application/x-protobuf", "", pb, 404, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c counters
			srv := httptest.NewServer(newHTTPHandler(&c))
			defer srv.Close()
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if tc.encoding != "" {
				req.Header.Set("Content-Encoding", tc.encoding)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d (%q), want %d", resp.StatusCode, body, tc.wantStatus)
			}
			if got := c.spans.Load(); got != tc.wantSpans {
				t.Fatalf("counted %d spans, want %d", got, tc.wantSpans)
			}
			if resp.StatusCode != 200 {
				return
			}
			r := ptraceotlp.NewExportResponse()
			if tc.name == "json" || tc.name == "json zstd" {
				err = r.UnmarshalJSON(body)
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Fatalf("response Content-Type %q, want application/json", ct)
				}
			} else {
				err = r.UnmarshalProto(body)
			}
			if err != nil {
				t.Fatalf("cannot read the response %q: %s", body, err)
			}
		})
	}
}
