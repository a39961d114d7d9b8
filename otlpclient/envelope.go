package otlpclient

import "github.com/otlp-lite/otlp-lite/otlp"

// The stream envelope (both directions) is otlp's; these names keep
// otlpclient's API.

// ResultCode is the outcome of one streamed request.
type ResultCode = otlp.ResultCode

// The result codes of ExportResponse (stream.proto).
const (
	Success             = otlp.Success
	FailedNoneRetryable = otlp.FailedNoneRetryable
	FailedRetryable     = otlp.FailedRetryable
)

// Ack is one decoded ExportResponse.
type Ack = otlp.Ack

// AppendEnvelope is otlp.AppendEnvelope: it wraps an OTLP export request
// into the stream envelope.
func AppendEnvelope(dst []byte, id uint64, req []byte) ([]byte, error) {
	return otlp.AppendEnvelope(dst, id, req)
}

// ParseAck is otlp.ParseAck: it decodes an ExportResponse into a.
func ParseAck(src []byte, a *Ack) error { return otlp.ParseAck(src, a) }
