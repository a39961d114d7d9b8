package handler

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// zeroBoundsJSON is an ExportMetricsServiceRequest whose one histogram
// point has n explicit bounds, each "0": two bytes of JSON, eight of
// protobuf (a packed double), the most a transcoding grows.
func zeroBoundsJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"h","histogram":{"dataPoints":[{"explicitBounds":[`)
	b.WriteString(strings.Repeat("0,", n-1))
	b.WriteString(`0]}]}}]}]}]}`)
	return b.Bytes()
}

func postBody(t *testing.T, url string, hdr map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, got
}

// TestOTLPHTTPJSONTranscodedTooLarge (issue 21, finding 4): the request
// limit holds on the protobuf form of a JSON request too. A gzipped JSON
// request well within the limit compressed and decompressed, whose
// protobuf form is four times the limit, was stored (HTTP 200) as a record
// no receiver with the same limit accepts; it is refused with 413, as a
// too-large protobuf request is, and nothing is stored.
func TestOTLPHTTPJSONTranscodedTooLarge(t *testing.T) {
	const limit = 1 << 20
	js := zeroBoundsJSON(limit/2 - 64) // just under 1 MiB of JSON, 4 MiB of protobuf
	gz, _ := compression.Compress(nil, compression.Gzip, js)
	sink := &memSink{}
	c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger(), MaxRecvMsgSize: limit}))
	hdr := map[string]string{"Content-Type": "application/json", "Content-Encoding": "gzip"}
	resp, body := postBody(t, c.BaseURL+"/v1/metrics", hdr, gz)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(body, []byte("as protobuf")) {
		t.Fatalf("JSON of %d bytes (%d gzipped), 4x as protobuf: status %d, body %s", len(js), len(gz), resp.StatusCode, body)
	}
	if w := sink.all(); len(w) != 0 {
		t.Fatalf("stored %d records of %d bytes", len(w), len(w[0].data))
	}
	// An honest JSON request whose protobuf form fits is stored.
	honest := zeroBoundsJSON(limit / 8 / 2)
	if resp, body := postBody(t, c.BaseURL+"/v1/metrics", map[string]string{"Content-Type": "application/json"}, honest); resp.StatusCode != 200 {
		t.Fatalf("honest request: status %d, body %s", resp.StatusCode, body)
	}
	if w := sink.all(); len(w) != 1 || len(w[0].data) > limit {
		t.Fatalf("stored %+v", len(w))
	}
}

// TestOTLPHTTPJSONTranscodedCharged: the protobuf form of a JSON request is
// charged to the request's admission ticket as it is produced. A request
// whose JSON fits the budget but whose JSON and protobuf forms together do
// not is refused as too large for the budget (413); before, the protobuf
// form was held outside the budget and the request was stored.
func TestOTLPHTTPJSONTranscodedCharged(t *testing.T) {
	js := zeroBoundsJSON(100_000) // 200 KB of JSON, 800 KB of protobuf
	hdr := map[string]string{"Content-Type": "application/json"}
	for _, tc := range []struct {
		budget     int64
		wantStatus int
	}{
		{budget: 900 << 10, wantStatus: http.StatusRequestEntityTooLarge},
		{budget: 2 << 20, wantStatus: http.StatusOK},
	} {
		sink := &memSink{}
		c := startHandler(t, New(Config{Sink: sink, Logger: quietLogger(), MaxRecvMsgSize: 1 << 20,
			Admission: AdmissionConfig{RequestLimit: tc.budget, WaitingLimit: tc.budget}}))
		resp, body := postBody(t, c.BaseURL+"/v1/metrics", hdr, js)
		if resp.StatusCode != tc.wantStatus {
			t.Fatalf("budget %d: status %d, want %d; body %s", tc.budget, resp.StatusCode, tc.wantStatus, body)
		}
		if tc.wantStatus != 200 && !bytes.Contains(body, []byte("admission budget")) {
			t.Fatalf("budget %d: body %s", tc.budget, body)
		}
	}
}

// TestOTLPHTTPErrorBodyBounded (issue 21, finding 5): an error response
// quotes at most a short prefix of any value the client sent, and is
// bounded whatever the input. A span kind that is a 4 MiB string made a
// 400 body of 8 MB (the value in the message and again in the BadRequest
// description); the JSON error names the field and quotes 64 bytes of it.
// Headers and paths are quoted the same way.
func TestOTLPHTTPErrorBodyBounded(t *testing.T) {
	const maxBody = 16 << 10
	big := strings.Repeat("A", 4<<20)
	js := []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x","kind":"` + big + `"}]}]}]}`)
	gz, _ := compression.Compress(nil, compression.Gzip, js)
	c := startHandler(t, New(Config{Sink: &memSink{}, Logger: quietLogger()}))
	resp, body := postBody(t, c.BaseURL+"/v1/traces", map[string]string{"Content-Type": "application/json", "Content-Encoding": "gzip"}, gz)
	if resp.StatusCode != 400 || len(body) > maxBody {
		t.Fatalf("%d-byte request (%d gzipped): status %d, body of %d bytes", len(js), len(gz), resp.StatusCode, len(body))
	}
	if !bytes.Contains(body, []byte(`spans[0].kind: unknown enum value \"AAAA`)) || !bytes.Contains(body, []byte(`(4194304 bytes)`)) {
		t.Fatalf("body does not name the field and the value's size: %s", body)
	}
	// The same as protobuf, the response encoding of a protobuf request.
	resp, body = postBody(t, c.BaseURL+"/v1/traces", map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": big[:200<<10]}, gz)
	if resp.StatusCode != 415 || len(body) > maxBody {
		t.Fatalf("long Content-Encoding: status %d, body of %d bytes", resp.StatusCode, len(body))
	}
	if st, err := grpcwire.ParseStatusProto(body); err != nil || !strings.Contains(st.Message, "(204800 bytes)") {
		t.Fatalf("long Content-Encoding: status %+v, %v", st, err)
	}
	for _, tc := range []struct {
		path string
		hdr  map[string]string
	}{
		{"/v1/" + big[:200<<10], map[string]string{"Content-Type": "application/json"}},
		{"/v1/traces", map[string]string{"Content-Type": "text/" + big[:200<<10]}},
	} {
		resp, body := postBody(t, c.BaseURL+tc.path, tc.hdr, []byte("{}"))
		if resp.StatusCode < 400 || len(body) > maxBody || !bytes.Contains(body, []byte("(20")) {
			t.Fatalf("status %d, body of %d bytes: %.200s", resp.StatusCode, len(body), body)
		}
	}
}

// TestIngestJSONTranscodedTooLarge: a Kafka record in otlp_json is held to
// the request limit as protobuf too, and refused as not retryable.
func TestIngestJSONTranscodedTooLarge(t *testing.T) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger(), MaxRecvMsgSize: 1 << 20})
	_, err := h.Ingest(t.Context(), otlp.Metrics, zeroBoundsJSON(1<<19-64), IngestJSON)
	if !errors.Is(err, ErrNotRetryable) || !strings.Contains(err.Error(), "as protobuf") {
		t.Fatalf("err %v, want not retryable, too large as protobuf", err)
	}
	if res, err := h.Ingest(t.Context(), otlp.Metrics, zeroBoundsJSON(1<<16), IngestJSON); err != nil || res.Items != 1 {
		t.Fatalf("honest record: %+v, %v", res, err)
	}
	if w := sink.all(); len(w) != 1 {
		t.Fatalf("stored %d records", len(w))
	}
}

// TestOTLPHTTPZstdWindowCharged: the history a zstd frame declares is
// charged to the request's admission ticket before the decoder allocates
// it: 21 bytes declaring an 8 MiB window held 8.25 MiB outside the budget.
// Under a 4 MiB budget such a request is refused as too large for it; an
// honest zstd request (whose encoder declares a window the size of its
// content) is stored.
func TestOTLPHTTPZstdWindowCharged(t *testing.T) {
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0, (23 - 10) << 3} // no content size, an 8 MiB window
	bh := uint32(1) | 4<<3                                     // the last block, raw, 4 bytes
	frame = append(frame, byte(bh), byte(bh>>8), byte(bh>>16), 0x0a, 0x02, 0x0a, 0x00)
	honest, _ := compression.Compress(nil, compression.Zstd, traceRequest(goodID))
	c := startHandler(t, New(Config{Sink: &memSink{}, Logger: quietLogger(),
		Admission: AdmissionConfig{RequestLimit: 4 << 20, WaitingLimit: 4 << 20}}))
	hdr := map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "zstd"}
	if resp, body := postBody(t, c.BaseURL+"/v1/traces", hdr, frame); resp.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(body, []byte("admission budget")) {
		t.Fatalf("%d bytes declaring an 8 MiB window: status %d, body %q", len(frame), resp.StatusCode, body)
	}
	if resp, body := postBody(t, c.BaseURL+"/v1/traces", hdr, honest); resp.StatusCode != 200 {
		t.Fatalf("honest zstd request: status %d, body %q", resp.StatusCode, body)
	}
}
