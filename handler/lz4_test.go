package handler

import (
	"bytes"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// lz4Body compresses b as the Collector's confighttp does for
// compression: lz4 (github.com/pierrec/lz4/v4's frame writer, defaults).
func lz4Body(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(lz4.ConcurrencyOption(1)); err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Content-Encoding: lz4 is decoded with the bounds of the other codecs:
// over -grpc-max-recv-msg-size it is 413, over the admission budget 413
// naming it, a corrupt frame 400.
func TestOTLPHTTPLZ4(t *testing.T) {
	pb := traceRequest(goodID)
	lz := map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "lz4"}
	runHTTPCases(t, Config{MaxRecvMsgSize: 1 << 20}, []httpCase{
		{name: "lz4 protobuf", path: "/v1/traces", hdr: lz, body: lz4Body(t, pb), wantStatus: 200},
		{name: "lz4 json", path: "/v1/traces", hdr: map[string]string{"Content-Type": "application/json", "Content-Encoding": "LZ4"}, body: lz4Body(t, []byte(jsonTrace)), wantStatus: 200},
		{name: "lz4 over the size limit", path: "/v1/traces", hdr: lz, body: lz4Body(t, make([]byte, 2<<20)), wantStatus: 413},
		{name: "corrupt lz4", path: "/v1/traces", hdr: lz, body: []byte("\x04\x22\x4d\x18nope"), wantStatus: 400, wantInBody: "cannot decompress lz4"},
	})
	runHTTPCases(t, Config{Admission: AdmissionConfig{RequestLimit: 8000, WaitingLimit: 8000}}, []httpCase{
		{name: "lz4 decompressed over the budget", path: "/v1/traces", hdr: lz, body: lz4Body(t, make([]byte, 9000)),
			wantStatus: 413, wantInBody: "admission budget", wantHeader: map[string]string{"Retry-After": ""}},
	})
}
