package otlpclient

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"

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

// maxPartialMessage bounds a server's message kept by a client (the
// error_message of a partial success, a refusal's google.rpc.Status
// message): longer ones are cut, so that a server answering megabytes of
// message on every request cannot make each outcome, log line and dead
// letter reason that large.
const maxPartialMessage = 512

// shortMessage is m cut to maxPartialMessage bytes (on a UTF-8 boundary),
// saying how long it was.
func shortMessage(m string) string {
	if len(m) <= maxPartialMessage {
		return m
	}
	cut := maxPartialMessage
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", m[:cut], len(m))
}

// parseResponse reads an Export*ServiceResponse, the only answer that is a
// delivery (OTLP v1.11 "Success" and "Partial Success"): a body that does
// not parse, or a partial success rejecting a negative number of items,
// is an error. The partial success's message is cut (shortMessage).
func parseResponse(resp []byte) (otlp.PartialSuccess, error) {
	ps, err := otlp.ParsePartialSuccess(resp)
	if err != nil {
		return otlp.PartialSuccess{}, err
	}
	if ps.Rejected < 0 {
		return otlp.PartialSuccess{}, fmt.Errorf("cannot decode export response: partial_success rejects %d items", ps.Rejected)
	}
	ps.Message = shortMessage(ps.Message)
	return ps, nil
}
