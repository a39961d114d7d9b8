package grpcwire

import (
	"testing"
	"time"
)

// benchStatus is the refusal the receiver sends most with details: a
// retry delay and one bad-data violation.
var benchStatus = &Status{
	Code:       InvalidArgument,
	Message:    "cannot decode span: invalid trace id",
	RetryDelay: 1500 * time.Millisecond,
	Violations: []FieldViolation{{Field: "resource_spans[0].scope_spans[0].spans[2].trace_id", Description: "must be 16 bytes"}},
}

// BenchmarkStatusAppendProto encodes a google.rpc.Status with RetryInfo
// and BadRequest details into a reused buffer, as a response's error body
// and grpc-status-details-bin are.
func BenchmarkStatusAppendProto(b *testing.B) {
	buf := benchStatus.AppendProto(nil)
	b.ReportAllocs()
	for b.Loop() {
		buf = benchStatus.AppendProto(buf[:0])
	}
}

// BenchmarkStatusRetryInfo encodes the RetryInfo alone into a reused
// buffer, as google.rpc.retryinfo-bin is.
func BenchmarkStatusRetryInfo(b *testing.B) {
	buf := appendRetryInfo(nil, benchStatus.RetryDelay)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendRetryInfo(buf[:0], benchStatus.RetryDelay)
	}
}

// BenchmarkParseStatusProto decodes that status, as a client reads a
// refusal.
func BenchmarkParseStatusProto(b *testing.B) {
	src := benchStatus.AppendProto(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseStatusProto(src); err != nil {
			b.Fatal(err)
		}
	}
}
