package otlp

import (
	"net/http"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// Retryable reports whether a request that failed with st may succeed if
// sent again (OTLP v1.11 "Failures", the table of retryable gRPC codes).
// RESOURCE_EXHAUSTED is retryable only "if the server signals that a
// recovery from resource exhaustion is possible", that is with a RetryInfo
// detail, whatever its delay (st.RetryDelay != 0; -1 is an explicit zero):
// without it the server is saying the request itself is too large.
func Retryable(st *grpcwire.Status) bool {
	return RetryableCode(st.Code, st.RetryDelay != 0)
}

// RetryableCode is Retryable for a code, hasRetryInfo telling whether the
// status carried a google.rpc.RetryInfo detail.
func RetryableCode(c grpcwire.Code, hasRetryInfo bool) bool {
	switch c {
	case grpcwire.Canceled, grpcwire.DeadlineExceeded, grpcwire.Aborted, grpcwire.OutOfRange,
		grpcwire.Unavailable, grpcwire.DataLoss:
		return true
	case grpcwire.ResourceExhausted:
		return hasRetryInfo
	}
	return false
}

// RetryableHTTPStatus reports whether an OTLP/HTTP request answered with
// the HTTP status code may succeed if sent again (OTLP v1.11 "Retryable
// Response Codes": 429, 502, 503 and 504; the others are not retryable).
func RetryableHTTPStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
