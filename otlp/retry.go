package otlp

import "time"

// A Status is what Retryable needs of a gRPC status; *grpcwire.Status has
// it. It is an interface so that this leaf package does not depend on the
// gRPC layer (and through it on net/http): code that only validates or
// names OTLP data can import otlp alone.
type Status interface {
	// GRPCCode is the status code's number (google.rpc.Code).
	GRPCCode() uint32
	// HasRetryInfo reports whether the status carries a
	// google.rpc.RetryInfo detail, whatever its delay.
	HasRetryInfo() bool
}

// The gRPC status codes the retry rules name (google.rpc.Code).
const (
	codeCanceled          = 1
	codeDeadlineExceeded  = 4
	codeResourceExhausted = 8
	codeAborted           = 10
	codeOutOfRange        = 11
	codeUnavailable       = 14
	codeDataLoss          = 15
)

// Retryable reports whether a request that failed with st may succeed if
// sent again (OTLP v1.11 "Failures", the table of retryable gRPC codes).
// RESOURCE_EXHAUSTED is retryable only "if the server signals that a
// recovery from resource exhaustion is possible", that is with a RetryInfo
// detail, whatever its delay (an explicit zero counts): without it the
// server is saying the request itself is too large.
func Retryable(st Status) bool {
	return RetryableCode(st.GRPCCode(), st.HasRetryInfo())
}

// RetryableCode is Retryable for a code, hasRetryInfo telling whether the
// status carried a google.rpc.RetryInfo detail.
func RetryableCode(code uint32, hasRetryInfo bool) bool {
	switch code {
	case codeCanceled, codeDeadlineExceeded, codeAborted, codeOutOfRange, codeUnavailable, codeDataLoss:
		return true
	case codeResourceExhausted:
		return hasRetryInfo
	}
	return false
}

// RetryableHTTPStatus reports whether an OTLP/HTTP request answered with
// the HTTP status code may succeed if sent again (OTLP v1.11 "Retryable
// Response Codes": 429 Too Many Requests, 502 Bad Gateway, 503 Service
// Unavailable and 504 Gateway Timeout; the others are not retryable).
func RetryableHTTPStatus(code int) bool {
	switch code {
	case 429, 502, 503, 504:
		return true
	}
	return false
}

// MaxServerDelay is the longest wait before the next attempt that a
// server's answer can impose on a client of this module: a RetryInfo
// detail, a Retry-After header (delay-seconds or an HTTP-date) or a
// stream acknowledgement's retry_delay. OTLP v1.11 "Failures" asks clients
// to honour the server's delay and names no maximum. A minute covers any
// throttling an honest receiver asks for (otlp-lite asks one second by
// default); a longer delay, honest or not, would let one answer silence a
// destination for as long as it says, so it is cut to this.
const MaxServerDelay = time.Minute

// ServerDelay is the wait a server's delay d imposes: d within
// [0, MaxServerDelay]. Every client path (otlpclient's Backoff.Delay, and
// through it forwarding, replay, export and loadgen) takes a server's
// delay through it, so no answer can make a client wait longer, or a
// delay so large that adding jitter overflows into a negative wait (a
// flood of attempts).
func ServerDelay(d time.Duration) time.Duration {
	return min(max(d, 0), MaxServerDelay)
}
