package handler

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/storage"
)

const jsonTrace = `{"resourceSpans":[{"scopeSpans":[{"spans":[
 {"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174","name":"a"},
 {"trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b175","name":"b"}]}]}]}`

type httpCase struct {
	name       string
	method     string
	path       string
	hdr        map[string]string
	body       []byte
	sinkErr    error
	wantStatus int
	wantCT     string
	wantInBody string
	wantHeader map[string]string
}

func runHTTPCases(t *testing.T, cfg Config, cases []httpCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{failWith: tc.sinkErr}
			cfg.Sink, cfg.Logger = sink, quietLogger()
			c := startHandler(t, New(cfg))
			method := tc.method
			if method == "" {
				method = "POST"
			}
			req, _ := http.NewRequest(method, c.BaseURL+tc.path, bytes.NewReader(tc.body))
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			// Plain HTTP/1.1, as curl and browsers send it.
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d; body %q", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantCT != "" && resp.Header.Get("Content-Type") != tc.wantCT {
				t.Errorf("content type %q, want %q", resp.Header.Get("Content-Type"), tc.wantCT)
			}
			if resp.StatusCode >= 400 && len(body) == 0 && method != "HEAD" {
				t.Errorf("error response without a Status body")
			}
			if tc.wantInBody != "" && !bytes.Contains(body, []byte(tc.wantInBody)) {
				t.Errorf("body %q does not contain %q", body, tc.wantInBody)
			}
			for k, v := range tc.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestOTLPHTTPStatuses(t *testing.T) {
	pb := traceRequest(goodID)
	gz, _ := compression.Compress(nil, compression.Gzip, pb)
	zs, _ := compression.Compress(nil, compression.Zstd, []byte(jsonTrace))
	bomb, _ := compression.Compress(nil, compression.Gzip, make([]byte, 2<<20))
	jsonCT := map[string]string{"Content-Type": "application/json"}
	pbCT := map[string]string{"Content-Type": "application/x-protobuf"}
	runHTTPCases(t, Config{MaxRecvMsgSize: 1 << 20, RetryDelay: 2 * time.Second}, []httpCase{
		{name: "protobuf ok", path: "/v1/traces", hdr: pbCT, body: pb, wantStatus: 200, wantCT: "application/x-protobuf"},
		{name: "json ok, partial_success unset", path: "/v1/traces", hdr: jsonCT, body: []byte(jsonTrace), wantStatus: 200, wantCT: "application/json", wantInBody: "{}"},
		{name: "json with charset", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/json; charset=utf-8"}, body: []byte(jsonTrace), wantStatus: 200},
		{name: "gzip protobuf", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}, body: gz, wantStatus: 200},
		{name: "zstd json", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/json", "Content-Encoding": "zstd"}, body: zs, wantStatus: 200},
		{name: "empty metrics", path: "/v1/metrics", hdr: pbCT, wantStatus: 200},
		{name: "empty logs json", path: "/v1/logs", hdr: jsonCT, body: []byte("{}"), wantStatus: 200},
		{name: "partial success json", path: "/v1/traces", hdr: jsonCT, body: []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102","spanId":"0102030405060708"}]}]}]}`), wantStatus: 200, wantInBody: `"rejectedSpans":"1"`},
		{name: "garbage protobuf", path: "/v1/traces", hdr: pbCT, body: []byte{0xff, 0xff}, wantStatus: 400, wantCT: "application/x-protobuf", wantInBody: "cannot decode"},
		{name: "bad json", path: "/v1/traces", hdr: jsonCT, body: []byte(`{"resourceSpans":[{`), wantStatus: 400, wantCT: "application/json", wantInBody: `"message":"cannot decode`},
		{name: "bad gzip", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}, body: []byte("nope"), wantStatus: 400},
		{name: "gzip, identity", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip, identity"}, body: gz, wantStatus: 200},
		{name: "GZIP in capitals", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "GZIP"}, body: gz, wantStatus: 200},
		{name: "stacked codings", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip, zstd"}, body: gz, wantStatus: 415},
		{name: "unknown encoding", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "br"}, body: pb, wantStatus: 415, wantInBody: "Content-Encoding"},
		{name: "unsupported media type", path: "/v1/traces", hdr: map[string]string{"Content-Type": "text/plain"}, body: pb, wantStatus: 415, wantInBody: "unsupported content type"},
		{name: "no content type", path: "/v1/traces", body: pb, wantStatus: 415},
		{name: "oversize body", path: "/v1/traces", hdr: pbCT, body: make([]byte, 1<<20+1), wantStatus: 413},
		{name: "oversize after gzip", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}, body: bomb, wantStatus: 413},
		{name: "GET", method: "GET", path: "/v1/traces", wantStatus: 405, wantHeader: map[string]string{"Allow": "POST, OPTIONS"}},
		{name: "OPTIONS", method: "OPTIONS", path: "/v1/traces", wantStatus: 204, wantHeader: map[string]string{"Allow": "POST, OPTIONS"}},
		{name: "unknown path", path: "/v1/profiles", hdr: pbCT, wantStatus: 404, wantInBody: "/v1/traces"},
		{name: "root", method: "GET", path: "/", wantStatus: 404},
		{name: "storage down", path: "/v1/traces", hdr: pbCT, body: pb, sinkErr: storage.ErrUnavailable, wantStatus: 503, wantHeader: map[string]string{"Retry-After": "2"}},
		{name: "gzip response", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/json", "Accept-Encoding": "gzip"}, body: []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102","spanId":"0102030405060708"}]}]}]}`), wantStatus: 200, wantHeader: map[string]string{"Content-Encoding": "gzip"}},
		{name: "grpc path over plain HTTP", path: "/opentelemetry.proto.collector.trace.v1.TraceService/Export", hdr: pbCT, body: pb, wantStatus: 415},
		// Errors answer in the request's encoding, whatever refused it.
		{name: "unknown path, json", path: "/v1/nope", hdr: jsonCT, body: []byte("{}"), wantStatus: 404, wantCT: "application/json", wantInBody: `"message":"unknown path`},
		{name: "PUT, json", method: "PUT", path: "/v1/traces", hdr: jsonCT, body: []byte("{}"), wantStatus: 405, wantCT: "application/json"},
		{name: "grpc path over plain HTTP, json", path: "/opentelemetry.proto.collector.trace.v1.TraceService/Export", hdr: jsonCT, body: []byte("{}"), wantStatus: 415, wantCT: "application/json"},
		{name: "gRPC content type over HTTP/1.1", path: "/opentelemetry.proto.collector.trace.v1.TraceService/Export", hdr: map[string]string{"Content-Type": "application/grpc"}, body: []byte{0, 0, 0, 0, 0}, wantStatus: 505, wantInBody: "gRPC requires HTTP/2"},
	})
}

// TestOTLPHTTPTooLargeForAdmission: a request that can never fit the
// admission budget gets 413, which clients do not retry, not 429 or 503
// with Retry-After, which they would retry forever — whether its declared
// length or its decompressed size is what does not fit.
func TestOTLPHTTPTooLargeForAdmission(t *testing.T) {
	pb := traceRequest(goodID)
	big := make([]byte, 9000)
	bomb, _ := compression.Compress(nil, compression.Gzip, make([]byte, 9000))
	runHTTPCases(t, Config{Admission: AdmissionConfig{RequestLimit: 8000, WaitingLimit: 8000}}, []httpCase{
		{name: "fits", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/x-protobuf"}, body: pb, wantStatus: 200},
		{name: "declared length over the budget", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/x-protobuf"}, body: big,
			wantStatus: 413, wantInBody: "admission budget", wantHeader: map[string]string{"Retry-After": ""}},
		{name: "decompressed size over the budget", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}, body: bomb,
			wantStatus: 413, wantInBody: "admission budget", wantHeader: map[string]string{"Retry-After": ""}},
	})
}

// TestOTLPHTTPConnectionAfterError: over HTTP/1.1, a request refused
// before its body was read is answered at once and its connection closed
// within the linger time, even though the client never sends the rest of
// the body it declared; an error after the whole body was read keeps the
// connection.
func TestOTLPHTTPConnectionAfterError(t *testing.T) {
	h := New(Config{Sink: &memSink{}, Logger: quietLogger()})
	h.unreadLinger = 500 * time.Millisecond
	c := startHandler(t, h)
	addr := strings.TrimPrefix(c.BaseURL, "http://")
	for _, tc := range []struct {
		name      string
		request   string
		status    string
		wantClose bool
	}{
		{"refused before the body, body stalls", "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 412\r\n\r\n0123456789",
			"HTTP/1.1 415", true},
		{"bad data after the whole body", "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 2\r\n\r\n\xff\xff",
			"HTTP/1.1 400", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(conn, tc.request); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if !strings.HasPrefix(tc.status, fmt.Sprintf("HTTP/1.1 %d", resp.StatusCode)) {
				t.Fatalf("status %d, want %s", resp.StatusCode, tc.status)
			}
			if resp.Close != tc.wantClose {
				t.Errorf("Connection: close is %v, want %v", resp.Close, tc.wantClose)
			}
			// A closed connection reads EOF at once; an open one times
			// out.
			conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err = br.ReadByte()
			closed := err == io.EOF || errors.Is(err, syscall.ECONNRESET)
			if closed != tc.wantClose {
				t.Errorf("connection closed: %v (read error %v), want %v", closed, err, tc.wantClose)
			}
		})
	}
}

func TestOTLPHTTPStoresJSONAsProtobuf(t *testing.T) {
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger()}))
	resp, err := http.Post(c.BaseURL+"/v1/traces", "application/json", strings.NewReader(jsonTrace))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	w := sink.all()
	if len(w) != 1 || w[0].items != 2 {
		t.Fatalf("stored %+v", w)
	}
	// The stored bytes are protobuf: walk to the first span's trace_id.
	rs, _, _ := easyproto.GetMessageData(w[0].data, 1)
	ss, _, _ := easyproto.GetMessageData(rs, 2)
	span, _, _ := easyproto.GetMessageData(ss, 2)
	id, _, _ := easyproto.GetBytes(span, 1)
	if !bytes.Equal(id, []byte{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c}) {
		t.Fatalf("trace id %x", id)
	}
}

func TestOTLPHTTPErrorBodyIsStatus(t *testing.T) {
	c := startHandler(t, New(Config{Sink: &memSink{}, Logger: quietLogger()}))
	resp, err := http.Post(c.BaseURL+"/v1/logs", "application/x-protobuf", bytes.NewReader([]byte{0x0a, 0x05}))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	st, err := grpcwire.ParseStatusProto(body)
	if err != nil || st.Code != grpcwire.InvalidArgument || !strings.Contains(st.Message, "ExportLogsServiceRequest") {
		t.Fatalf("status body %+v %v", st, err)
	}
	// "Bad Data": the Status SHOULD contain a BadRequest; ours names
	// where the bad data is.
	badSpan := traceRequest(goodID)
	badSpan = append(badSpan, 0x0a, 0x03, 0x12, 0x05, 0x00) // a second resource_spans, truncated
	resp, err = http.Post(c.BaseURL+"/v1/traces", "application/x-protobuf", bytes.NewReader(badSpan))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	st, err = grpcwire.ParseStatusProto(body)
	if err != nil || resp.StatusCode != 400 || len(st.Violations) != 1 || st.Violations[0].Field != "resource_spans[1]" || st.Violations[0].Description == "" {
		t.Fatalf("status %d, body %+v %v: want a BadRequest naming resource_spans[1]", resp.StatusCode, st, err)
	}
	resp, _ = http.Post(c.BaseURL+"/v1/logs", "application/json", strings.NewReader("[1,2"))
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var js struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(body, &js); err != nil || js.Code != 3 || js.Message == "" {
		t.Fatalf("JSON status body %q: %v", body, err)
	}
}

func TestCORS(t *testing.T) {
	cfg := Config{CORS: CORSConfig{AllowedOrigins: []string{"https://app.example.com", "https://*.example.org"}, AllowedHeaders: []string{"X-Tenant"}, MaxAge: 600}}
	preflight := func(origin, headers string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": headers}
	}
	runHTTPCases(t, cfg, []httpCase{
		{name: "preflight allowed", method: "OPTIONS", path: "/v1/traces", hdr: preflight("https://app.example.com", "content-type, x-tenant, x-evil"), wantStatus: 204,
			wantHeader: map[string]string{"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Allow-Methods": "POST", "Access-Control-Allow-Headers": "content-type, x-tenant", "Access-Control-Max-Age": "600"}},
		{name: "preflight wildcard", method: "OPTIONS", path: "/v1/logs", hdr: preflight("https://a.b.example.org", "content-type"), wantStatus: 204,
			wantHeader: map[string]string{"Access-Control-Allow-Origin": "https://a.b.example.org"}},
		{name: "preflight refused", method: "OPTIONS", path: "/v1/traces", hdr: preflight("https://evil.com", "content-type"), wantStatus: 204,
			wantHeader: map[string]string{"Access-Control-Allow-Origin": ""}},
		{name: "wildcard needs a subdomain", method: "OPTIONS", path: "/v1/traces", hdr: preflight("https://.example.org", ""), wantStatus: 204,
			wantHeader: map[string]string{"Access-Control-Allow-Origin": ""}},
		{name: "post carries the header", path: "/v1/traces", hdr: map[string]string{"Origin": "https://app.example.com", "Content-Type": "application/json"}, body: []byte(jsonTrace), wantStatus: 200,
			wantHeader: map[string]string{"Access-Control-Allow-Origin": "https://app.example.com", "Access-Control-Expose-Headers": "Retry-After"}},
		{name: "authorization not allowed without auth", method: "OPTIONS", path: "/v1/traces", hdr: preflight("https://app.example.com", "authorization, content-type"), wantStatus: 204,
			wantHeader: map[string]string{"Access-Control-Allow-Headers": "content-type"}},
		{name: "GET with CORS on", method: "GET", path: "/v1/traces", wantStatus: 405, wantHeader: map[string]string{"Allow": "POST, OPTIONS"}},
	})
}

// TestCORSWithAuth: with bearer tokens required, browsers may send the
// Authorization header, and a 401 carries the CORS headers so the page sees
// the 401 rather than an opaque CORS failure.
func TestCORSWithAuth(t *testing.T) {
	tf, _ := newTestTokenFile(t, "alpha-token\n")
	cfg := Config{Auth: tf, CORS: CORSConfig{AllowedOrigins: []string{"https://app.example.com"}}}
	runHTTPCases(t, cfg, []httpCase{
		{name: "preflight allows authorization", method: "OPTIONS", path: "/v1/traces",
			hdr:        map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"},
			wantStatus: 204, wantHeader: map[string]string{"Access-Control-Allow-Headers": "authorization, content-type"}},
		{name: "401 with CORS headers, in JSON", path: "/v1/traces", hdr: map[string]string{"Origin": "https://app.example.com", "Content-Type": "application/json"}, body: []byte(jsonTrace),
			wantStatus: 401, wantCT: "application/json", wantHeader: map[string]string{"Access-Control-Allow-Origin": "https://app.example.com"}},
		{name: "authorized", path: "/v1/traces", hdr: map[string]string{"Origin": "https://app.example.com", "Content-Type": "application/json", "Authorization": "Bearer alpha-token"}, body: []byte(jsonTrace),
			wantStatus: 200, wantHeader: map[string]string{"Access-Control-Allow-Origin": "https://app.example.com"}},
	})
}

func TestAcceptsGzip(t *testing.T) {
	for v, want := range map[string]bool{"gzip": true, "deflate, gzip;q=0.5": true, "GZIP": true, "*": true,
		"gzip;q=0": false, "identity": false, "": false, "br": false} {
		if got := acceptsGzip(v); got != want {
			t.Errorf("acceptsGzip(%q) = %v", v, got)
		}
	}
}

func TestContentCoding(t *testing.T) {
	for _, tc := range []struct {
		fields []string
		want   compression.Codec
		err    bool
	}{
		{nil, compression.Identity, false},
		{[]string{"identity"}, compression.Identity, false},
		{[]string{"gzip"}, compression.Gzip, false},
		{[]string{"gzip", "identity"}, compression.Gzip, false},
		{[]string{" identity , zstd "}, compression.Zstd, false},
		{[]string{"gzip", "gzip"}, 0, true},
		{[]string{"gzip, br"}, 0, true},
		{[]string{"br"}, 0, true},
	} {
		h := http.Header{}
		for _, f := range tc.fields {
			h.Add("Content-Encoding", f)
		}
		got, err := contentCoding(h)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("contentCoding(%q) = %v, %v; want %v (error %v)", tc.fields, got, err, tc.want, tc.err)
		}
	}
}
