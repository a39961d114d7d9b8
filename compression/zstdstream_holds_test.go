package compression

import (
	"bytes"
	"runtime"
	"testing"
	"weak"
)

// TestStreamDecoderKeepsNoInput: between messages the decoder holds
// nothing of the message it read: the caller's buffer (a request's, which
// it releases and stops charging once the request is done) would
// otherwise stay pinned by each idle stream, uncounted by
// StreamDecoderCost.
func TestStreamDecoderKeepsNoInput(t *testing.T) {
	enc, err := NewStreamEncoder(DefaultStreamWindow)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	dec, err := NewStreamDecoder(DefaultStreamWindow)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	plain := bytes.Repeat([]byte("a stream message "), 1000)
	wp := func() weak.Pointer[byte] {
		msg, err := enc.AppendMessage(nil, plain)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dec.DecodeMessage(nil, msg, len(plain), nil); err != nil {
			t.Fatal(err)
		}
		return weak.Make(&msg[0])
	}()
	runtime.GC()
	if wp.Value() != nil {
		t.Error("the decoder still holds the message it read")
	}
	runtime.KeepAlive(dec)
}
