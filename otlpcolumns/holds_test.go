package otlpcolumns

import (
	"runtime"
	"testing"
	"unsafe"
	"weak"
)

// TestDecoderKeepsNoInput: between messages the decoder holds nothing of
// the message it decoded: its columns are slices of the caller's src (the
// stream's zstd output, up to MaxEncodedLen of the limit, 96 MiB at the
// default 64 MiB), which DecoderCost does not count and which the caller
// releases, and its charge with it, once the request is done. A decoder
// that kept them would pin each idle stream's last message uncharged.
func TestDecoderKeepsNoInput(t *testing.T) {
	for _, s := range signals {
		env := envelopes(t, s.name)[0]
		d := NewDecoder(s.sig)
		wp := func() weak.Pointer[byte] {
			src := NewEncoder(s.sig).Append(nil, env)
			if src[0] != flagColumns {
				t.Fatalf("%s: sent untransformed", s.name)
			}
			if _, err := d.Decode(nil, src, len(env), nil); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			return weak.Make(&src[len(src)-1])
		}()
		runtime.GC()
		if wp.Value() != nil {
			t.Errorf("%s: the decoder still holds the message it decoded", s.name)
		}
		runtime.KeepAlive(d)
	}
}

// TestDecoderSize: DecoderCost's estimate of the Decoder itself holds.
func TestDecoderSize(t *testing.T) {
	if n := unsafe.Sizeof(Decoder{}); n > unsafeSizeofDecoder {
		t.Errorf("unsafe.Sizeof(Decoder{}) = %d, DecoderCost counts %d", n, unsafeSizeofDecoder)
	}
}
