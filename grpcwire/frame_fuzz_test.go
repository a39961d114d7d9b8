package grpcwire

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
)

// FuzzReadMessage feeds arbitrary bodies, with every codec, to the message
// reader: it must never panic, never return a message over the limit, and
// read the body only as far as the framing says.
func FuzzReadMessage(f *testing.F) {
	f.Add(uint8(0), frame(0, []byte("hello")))
	f.Add(uint8(1), frame(1, mustCompress(compression.Gzip, []byte("hello"))))
	f.Add(uint8(2), frame(1, mustCompress(compression.Zstd, bytes.Repeat([]byte("z"), 3000))))
	f.Add(uint8(3), frame(1, mustCompress(compression.Snappy, []byte("snappy"))))
	f.Add(uint8(4), frame(1, mustCompress(compression.Deflate, []byte("deflate"))))
	f.Add(uint8(0), []byte{0, 0xff, 0xff, 0xff, 0xff, 1, 2})
	f.Add(uint8(0), append(frame(0, []byte("a")), frame(0, []byte("b"))...))
	const limit = 4096
	f.Fuzz(func(t *testing.T, codec uint8, body []byte) {
		c := &Call{
			r:      &http.Request{Body: io.NopCloser(bytes.NewReader(body))},
			ctx:    t.Context(),
			codec:  compression.Codec(codec % 5),
			limits: Limits{MaxRecvMsgSize: limit},
		}
		for range 4 {
			msg, _, st := c.ReadMessage(nil, nil)
			if st != nil {
				return
			}
			if len(msg) > limit {
				t.Fatalf("message of %d bytes passed the %d limit", len(msg), limit)
			}
		}
	})
}

func mustCompress(c compression.Codec, b []byte) []byte {
	out, err := compression.Compress(nil, c, b)
	if err != nil {
		panic(err)
	}
	return out
}

// FuzzParseStatusProto: google.rpc.Status from a peer's
// grpc-status-details-bin never panics, and what it yields survives a round
// trip through AppendProto.
func FuzzParseStatusProto(f *testing.F) {
	for _, st := range []*Status{
		{Code: InvalidArgument, Message: "bad", Violations: []FieldViolation{{Field: "resource_spans[0]", Description: "why"}}},
		{Code: Unavailable, RetryDelay: 1500 * time.Millisecond},
		{Code: Unavailable, RetryDelay: -1},
	} {
		f.Add(st.AppendProto(nil))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		st, err := ParseStatusProto(src)
		if err != nil {
			return
		}
		again, err := ParseStatusProto(st.AppendProto(nil))
		if err != nil {
			t.Fatalf("cannot parse our own encoding of %+v: %v", st, err)
		}
		if again.Code != st.Code || again.Message != st.Message || len(again.Violations) != len(st.Violations) {
			t.Fatalf("round trip %+v -> %+v", st, again)
		}
	})
}
