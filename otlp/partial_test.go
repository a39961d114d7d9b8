package otlp

import "testing"

func TestParsePartialSuccess(t *testing.T) {
	for _, tt := range []struct {
		name string
		resp []byte
		want PartialSuccess
		bad  bool
	}{
		{"empty", nil, PartialSuccess{}, false},
		{"rejected 3", []byte{0x0a, 0x02, 0x08, 0x03}, PartialSuccess{Rejected: 3}, false},
		{"message only", []byte{0x0a, 0x03, 0x12, 0x01, 'x'}, PartialSuccess{Message: "x"}, false},
		{"both", []byte{0x0a, 0x05, 0x08, 0x02, 0x12, 0x01, 'y'}, PartialSuccess{Rejected: 2, Message: "y"}, false},
		{"unknown fields", []byte{0x10, 0x01, 0x0a, 0x04, 0x18, 0x01, 0x08, 0x04}, PartialSuccess{Rejected: 4}, false},
		// A message field sent twice is merged (the unary client's copy
		// read only the first partial_success, and got 0 here).
		{"merged", []byte{0x0a, 0x03, 0x12, 0x01, 'x', 0x0a, 0x02, 0x08, 0x05}, PartialSuccess{Rejected: 5, Message: "x"}, false},
		// A repeated scalar: the last value wins (both copies took the
		// first).
		{"last wins", []byte{0x0a, 0x04, 0x08, 0x01, 0x08, 0x07}, PartialSuccess{Rejected: 7}, false},
		{"garbage", []byte{0xff, 0xff}, PartialSuccess{}, true},
		{"wrong wire type", []byte{0x08, 0x01, 0x0d, 1, 2, 3, 4}, PartialSuccess{}, true},
	} {
		got, err := ParsePartialSuccess(tt.resp)
		if got != tt.want || (err != nil) != tt.bad {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}
