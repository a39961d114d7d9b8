package grpcwire

import (
	"encoding/base64"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestStatusFromHeader: the client reads code, message and both details.
// The BadRequest violations used to be dropped (here and in otlpclient's
// copy), so a client could not say where its request was bad.
func TestStatusFromHeader(t *testing.T) {
	sent := &Status{Code: InvalidArgument, Message: "bad 100%", RetryDelay: 2 * time.Second,
		Violations: []FieldViolation{{Field: "resource_spans[0]", Description: "truncated"}}}
	for _, pad := range []bool{false, true} {
		h := http.Header{}
		h.Set("Grpc-Status", "3")
		h.Set("Grpc-Message", encodeGRPCMessage(sent.Message))
		details := sent.detailsHeaderValue()
		if pad {
			details = base64.StdEncoding.EncodeToString(sent.AppendProto(nil))
		}
		h.Set("Grpc-Status-Details-Bin", details)
		if got := StatusFromHeader(h); !reflect.DeepEqual(got, sent) {
			t.Fatalf("padded %v: got %+v, want %+v", pad, got, sent)
		}
	}
	if StatusFromHeader(http.Header{}) != nil {
		t.Fatal("no grpc-status")
	}
	h := http.Header{}
	h.Set("Grpc-Status", "x")
	if st := StatusFromHeader(h); st.Code != Unknown {
		t.Fatalf("malformed: %+v", st)
	}
	h.Set("Grpc-Status", "14")
	h.Set("Grpc-Status-Details-Bin", "!!")
	if st := StatusFromHeader(h); st.Code != Unavailable || st.RetryDelay != 0 || st.Violations != nil {
		t.Fatalf("bad details: %+v", st)
	}
}
