package handler

import (
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlppb"
)

// maxResponseMessage bounds the error_message of a response. OTLP v1.11
// caps a response at 4 MiB ("OTLP/gRPC Response", "OTLP/HTTP Response"); a
// message naming the first bad item stays far below that, but it can quote
// the data, so it is truncated rather than trusted: by the one bound every
// response message has (grpcwire.BoundMessage).
const maxResponseMessage = grpcwire.MaxMessage

// truncateMessage cuts msg to maxResponseMessage bytes at a UTF-8 boundary.
func truncateMessage(msg string) string { return grpcwire.BoundMessage(msg) }

// appendExportResponse encodes the Export*ServiceResponse. The four
// responses share one shape:
//
//	message ExportTraceServiceResponse {
//	  ExportTracePartialSuccess partial_success = 1;
//	}
//	message ExportTracePartialSuccess {
//	  int64 rejected_spans = 1;  // rejected_data_points, rejected_log_records, rejected_profiles
//	  string error_message = 2;
//	}
func appendExportResponse(dst []byte, out ingest.Result) []byte {
	if out.Rejected == 0 && out.Message == "" {
		return dst
	}
	m := responseMarshalers.Get()
	// The numbers are the same in every signal's response: the traces
	// names stand for all four.
	ps := m.MessageMarshaler().AppendMessage(otlppb.ExportTraceServiceResponsePartialSuccess)
	if out.Rejected != 0 {
		ps.AppendInt64(otlppb.ExportTracePartialSuccessRejectedSpans, int64(out.Rejected))
	}
	if out.Message != "" {
		ps.AppendString(otlppb.ExportTracePartialSuccessErrorMessage, truncateMessage(out.Message))
	}
	dst = m.Marshal(dst)
	responseMarshalers.Put(m)
	return dst
}

var responseMarshalers easyproto.MarshalerPool

// appendStreamResponse encodes the ExportResponse for one request
// (otlp.AppendAck): success, with the rejected items if any; or the refusal
// st, retryable or not, a retryable one with st's delay or else retryDelay.
func appendStreamResponse(dst []byte, id uint64, out ingest.Result, st *grpcwire.Status, retryDelay time.Duration) []byte {
	switch {
	case st == nil:
		if out.Rejected > 0 {
			return otlp.AppendAck(dst, id, otlp.Success, truncateMessage(out.Message), 0, int64(out.Rejected))
		}
		return otlp.AppendAck(dst, id, otlp.Success, "", 0, 0)
	case otlp.Retryable(st):
		d := st.RetryDelay
		if d <= 0 {
			d = retryDelay
		}
		return otlp.AppendAck(dst, id, otlp.FailedRetryable, truncateMessage(st.Message), d, 0)
	default:
		return otlp.AppendAck(dst, id, otlp.FailedNoneRetryable, truncateMessage(st.Message), 0, 0)
	}
}
