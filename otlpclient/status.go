package otlpclient

import (
	"regexp"
	"strconv"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// serverDelay is the wait a status asks for: its RetryInfo, zero if none
// or an explicit zero, within [0, otlp.MaxServerDelay].
func serverDelay(st *grpcwire.Status) time.Duration {
	return otlp.ServerDelay(st.RetryDelay)
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
