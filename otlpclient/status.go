package otlpclient

import (
	"encoding/base64"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// statusFromHeader reads grpc-status, grpc-message and
// grpc-status-details-bin (PROTOCOL-HTTP2.md, "Responses") from a header or
// trailer; nil if there is no grpc-status. A RetryInfo detail becomes
// RetryDelay, with -1 for an explicit zero delay (grpcwire.ParseStatusProto).
func statusFromHeader(h http.Header) *grpcwire.Status {
	v := h.Get("Grpc-Status")
	if v == "" {
		return nil
	}
	code, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return grpcwire.Errorf(grpcwire.Unknown, "malformed grpc-status %q", v)
	}
	st := &grpcwire.Status{Code: grpcwire.Code(code), Message: grpcwire.DecodeGRPCMessage(h.Get("Grpc-Message"))}
	if d := h.Get("Grpc-Status-Details-Bin"); d != "" {
		// Senders may or may not pad (PROTOCOL-HTTP2.md): accept both.
		if raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(d, "=")); err == nil {
			if full, err := grpcwire.ParseStatusProto(raw); err == nil {
				st.RetryDelay = full.RetryDelay
			}
		}
	}
	return st
}

// serverDelay is the wait a status asks for: its RetryInfo, zero if none
// or an explicit zero.
func serverDelay(st *grpcwire.Status) time.Duration {
	return max(st.RetryDelay, 0)
}

// maxMessageRE matches the message limit statuses of grpc-go and grpcwire:
// "grpc: received message larger than max (N vs. M)", with N the message's
// length on the wire, and "... after decompression larger than max M".
var maxMessageRE = regexp.MustCompile(`larger than max (?:\((\d+) vs\. (\d+)\)|(\d+))`)

// tooLarge returns the request a stream-ending RESOURCE_EXHAUSTED status
// (without RetryInfo) is about, among the requests lost with the stream in
// the order they were written: the one whose wire length the status names,
// else the first larger than the limit it names, else the first the server
// had not answered, which is the one it was reading when it gave up. nil if
// none was lost.
func tooLarge(lost []*pendingReq, st *grpcwire.Status) *pendingReq {
	if len(lost) == 0 {
		return nil
	}
	var wire, limit int
	if m := maxMessageRE.FindStringSubmatch(st.Message); m != nil {
		wire, _ = strconv.Atoi(m[1])
		if limit, _ = strconv.Atoi(m[2]); limit == 0 {
			limit, _ = strconv.Atoi(m[3])
		}
	}
	for _, p := range lost {
		if wire > 0 && p.wire == wire {
			return p
		}
	}
	for _, p := range lost {
		if limit > 0 && (p.wire > limit || p.size > limit) {
			return p
		}
	}
	return lost[0]
}
