package grpcwire

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStatusBounded: whatever a Status was given, what it sends is bounded:
// the message and each violation cut to MaxMessage bytes at a UTF-8
// boundary, at most MaxViolations violations, so that a Status is far
// below OTLP's 4 MiB response cap in a body, and small enough for gRPC
// trailers.
func TestStatusBounded(t *testing.T) {
	big := strings.Repeat("é", 16<<20) // 32 MiB
	st := Errorf(InvalidArgument, "cannot decode: %s", big)
	if len(st.Message) > MaxMessage || !utf8.ValidString(st.Message) || !strings.HasSuffix(st.Message, "(truncated)") {
		t.Fatalf("Errorf message of %d bytes", len(st.Message))
	}
	// A Status built by hand is bounded when it is encoded.
	st = &Status{Code: InvalidArgument, Message: big, RetryDelay: 1}
	for range 100 {
		st.Violations = append(st.Violations, FieldViolation{Field: big, Description: big})
	}
	const maxStatus = MaxMessage + MaxViolations*2*MaxMessage + 256
	body := st.AppendProto(nil)
	if len(body) > maxStatus {
		t.Fatalf("google.rpc.Status of %d bytes, want at most %d", len(body), maxStatus)
	}
	back, err := ParseStatusProto(body)
	if err != nil || len(back.Violations) != MaxViolations || !strings.HasPrefix(back.Message, "éé") || !utf8.ValidString(back.Violations[0].Field) {
		t.Fatalf("parsed %d violations, %v", len(back.Violations), err)
	}
	if n := len(st.detailsHeaderValue()); n > maxStatus*4/3+4 {
		t.Fatalf("grpc-status-details-bin of %d bytes", n)
	}
	if n := len(encodeGRPCMessage(st.Message)); n > 3*MaxMessage {
		t.Fatalf("grpc-message of %d bytes", n)
	}
	if short := "3 of 4 spans rejected"; BoundMessage(short) != short {
		t.Fatal("short message changed")
	}
}
