package ingest

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// Every request that does not end in OK is answered by a transport's
// refusal writer, one per form a refusal takes: handler's refuseGRPC (a
// gRPC status), writeHTTPError (an OTLP/HTTP error body) and the stream's
// acknowledgement (writeAck with a failed result). Each of them calls
// RecordRefusal, so no path can refuse without counting the refusal in
// otlplite_refusals_total{transport,reason} and logging it (rate-limited).

// refusalReason is the bounded "reason" label of otlplite_refusals_total.
type refusalReason uint8

const (
	reasonUnauthenticated refusalReason = iota
	reasonHTTPVersion
	reasonNotFound
	reasonMethodNotAllowed
	reasonUnsupportedMediaType
	reasonUnimplemented
	reasonInvalidArgument
	reasonTooLarge
	reasonUnavailable
	reasonDeadlineExceeded
	reasonCanceled
	reasonProtocol
	reasonKeyMismatch
	reasonKeyConflict
	reasonOther
	numReasons
)

var reasonNames = [numReasons]string{
	reasonUnauthenticated:      "unauthenticated",
	reasonHTTPVersion:          "http_version",
	reasonNotFound:             "not_found",
	reasonMethodNotAllowed:     "method_not_allowed",
	reasonUnsupportedMediaType: "unsupported_media_type",
	reasonUnimplemented:        "unimplemented",
	reasonInvalidArgument:      "invalid_argument",
	reasonTooLarge:             "too_large",
	reasonUnavailable:          "unavailable",
	reasonDeadlineExceeded:     "deadline_exceeded",
	reasonCanceled:             "canceled",
	reasonProtocol:             "protocol_error",
	reasonKeyMismatch:          "idempotency_key_reused",
	reasonKeyConflict:          "idempotency_key_in_flight",
	reasonOther:                "other",
}

// reasonOf names a refusal: by its HTTP status where that says more than the
// gRPC code (415 and 400 are both INVALID_ARGUMENT), else by the code.
// httpStatus is 0 for gRPC.
func reasonOf(httpStatus int, st *grpcwire.Status) refusalReason {
	switch httpStatus {
	case http.StatusNotFound:
		return reasonNotFound
	case http.StatusMethodNotAllowed:
		return reasonMethodNotAllowed
	case http.StatusUnsupportedMediaType:
		return reasonUnsupportedMediaType
	case http.StatusHTTPVersionNotSupported:
		return reasonHTTPVersion
	case http.StatusRequestEntityTooLarge:
		return reasonTooLarge
	}
	switch st.Code {
	case grpcwire.Unauthenticated:
		return reasonUnauthenticated
	case grpcwire.NotFound:
		return reasonNotFound
	case grpcwire.Unimplemented:
		return reasonUnimplemented
	case grpcwire.InvalidArgument:
		if keyMismatch(st) {
			return reasonKeyMismatch
		}
		return reasonInvalidArgument
	case grpcwire.Aborted:
		return reasonKeyConflict // only the window of keys answers ABORTED
	case grpcwire.ResourceExhausted:
		if st.RetryDelay > 0 {
			return reasonUnavailable // throttled: retry later
		}
		return reasonTooLarge
	case grpcwire.Unavailable:
		return reasonUnavailable
	case grpcwire.DeadlineExceeded:
		return reasonDeadlineExceeded
	case grpcwire.Canceled:
		return reasonCanceled
	case grpcwire.Internal:
		return reasonProtocol
	}
	return reasonOther
}

// RecordRefusal counts a refusal and logs it. It is called by the refusal
// writers only (see the top of this file). httpStatus is the HTTP status
// answered (0 for gRPC and sources without one); path and peer name the
// request in the log line; ctx is the request's (its tenant, if any).
func (p *Pipeline) RecordRefusal(ctx context.Context, tr Transport, httpStatus int, st *grpcwire.Status, path, peer string) {
	reason := reasonOf(httpStatus, st)
	p.m.refusals[tr][reason].Inc()
	p.logRefusal(ctx, tr, reason, st, path, peer)
}

// logRefusal logs a request that did not end in OK. Refusals are what an
// operator needs to see; successes are not logged (except at debug level).
// Lines are rate-limited so that a flood of bad requests cannot flood the
// log: what is dropped is counted in the next line that is written.
func (p *Pipeline) logRefusal(ctx context.Context, tr Transport, reason refusalReason, st *grpcwire.Status, path, peer string) {
	level := refusalLevel(st)
	if !p.log.Enabled(ctx, level) {
		return
	}
	ok, suppressed := p.logLimit.allow(time.Now())
	if !ok {
		return
	}
	attrs := []any{"transport", transportNames[tr], "path", path, "peer", peer,
		"code", st.Code.String(), "reason", reasonNames[reason], "message", st.Message}
	if tenant, ok := otlp.TenantFrom(ctx); ok {
		// A checked name: at most otlp.MaxTenantNameLength bytes of
		// A-Z a-z 0-9 . _ -, safe in any log line.
		attrs = append(attrs, "tenant", tenant)
	}
	if suppressed > 0 {
		attrs = append(attrs, "suppressed_since_last", suppressed)
	}
	p.log.Log(ctx, level, "request refused", attrs...)
}

// HTTPStatus is the OTLP/HTTP status for a refusal st. RESOURCE_EXHAUSTED
// means "throttled, retry later" (429) only when it carries a retry delay;
// without one it is a request that can never fit, such as one larger than
// the whole admission budget, and gets 413, which clients do not retry
// (OTLP v1.11, "Failures": only 429, 502, 503 and 504 are retryable).
//
// An idempotency key reused with another body is 422 (IETF httpapi
// Idempotency-Key draft, "Error Scenarios"), where gRPC has
// INVALID_ARGUMENT; a key whose first request is in flight is ABORTED,
// 409 by gRPC's own mapping, as the draft asks.
func HTTPStatus(st *grpcwire.Status) int {
	if st.Code == grpcwire.ResourceExhausted && st.RetryDelay <= 0 {
		return http.StatusRequestEntityTooLarge
	}
	if st.Code == grpcwire.InvalidArgument && keyMismatch(st) {
		return http.StatusUnprocessableEntity
	}
	return st.Code.HTTPStatus()
}

// refusalLevel is the level of a refusal's log line: WARN, except for what
// clients do in normal operation, which is DEBUG so that WARN stays worth
// reading: a client that went away (CANCELLED) or whose own deadline
// (grpc-timeout) passed before its answer. A body that stalled past our
// read timeout (HTTP 408, or the gRPC message read timeout) is also
// DEADLINE_EXCEEDED but stays WARN: a sender stopped mid-request. Stream
// rotation is not a refusal at all (stream.go) and is never logged above
// DEBUG.
func refusalLevel(st *grpcwire.Status) slog.Level {
	switch {
	case st.Code == grpcwire.Canceled:
		return slog.LevelDebug
	case st.Code == grpcwire.DeadlineExceeded && !bodyStalled(st):
		return slog.LevelDebug
	case tenantThrottled(st):
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// StalledPrefix begins the message of both body read timeouts, gRPC's
// (grpcwire) and OTLP/HTTP's (handler's readHTTPBody); TestRefusalLevel
// checks both.
const StalledPrefix = "request body stalled"

func keyMismatch(st *grpcwire.Status) bool {
	return strings.HasPrefix(st.Message, KeyMismatchPrefix)
}

func bodyStalled(st *grpcwire.Status) bool {
	return strings.HasPrefix(st.Message, StalledPrefix)
}

// logLimiter allows logRefusalBurst lines at once, refilled at
// logRefusalRate per second.
type logLimiter struct {
	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed int
}

const (
	logRefusalRate  = 10
	logRefusalBurst = 50
)

func (l *logLimiter) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last.IsZero() {
		l.tokens = logRefusalBurst
	} else {
		l.tokens = min(logRefusalBurst, l.tokens+now.Sub(l.last).Seconds()*logRefusalRate)
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		return false, 0
	}
	l.tokens--
	n := l.suppressed
	l.suppressed = 0
	return true, n
}
