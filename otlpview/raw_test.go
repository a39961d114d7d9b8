package otlpview

import (
	"bytes"
	"testing"
)

// TestRaw: Raw is each view's own protobuf encoding, so that a store can
// keep an item as it came; a Resource or Scope sent twice is merged, as
// protobuf merges a singular message field (by concatenation).
func TestRaw(t *testing.T) {
	field := func(num byte, body ...[]byte) []byte { // a length-delimited field
		b := bytes.Join(body, nil)
		return append([]byte{num<<3 | 2, byte(len(b))}, b...)
	}
	attr := field(1, field(1, []byte("k")), field(2, field(1, []byte("v"))))
	res1, res2 := attr, []byte{2 << 3, 7} // attributes; dropped_attributes_count
	scope := field(1, []byte("lib"))
	span := append(field(1, bytes.Repeat([]byte{1}, 16)), field(2, bytes.Repeat([]byte{2}, 8))...)
	req := field(1, field(1, res1), field(2, field(1, scope), field(2, span)), field(1, res2))
	var d TracesDecoder
	n := 0
	err := d.Decode(req, func(res *Resource, sc *Scope, sp *Span) error {
		n++
		if !bytes.Equal(res.Raw, append(res1, res2...)) || res.DroppedAttributesCount != 7 {
			t.Errorf("Resource.Raw = %x, want %x", res.Raw, append(res1, res2...))
		}
		if !bytes.Equal(sc.Raw, scope) || sc.Name != "lib" {
			t.Errorf("Scope.Raw = %x, want %x", sc.Raw, scope)
		}
		if !bytes.Equal(sp.Raw, span) {
			t.Errorf("Span.Raw = %x, want %x", sp.Raw, span)
		}
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("Decode: %d spans, %v", n, err)
	}
}
