package pbappend

import (
	"bytes"
	"testing"
)

// OpenLenFor/CloseLenFor write the bytes OpenLen/CloseLen write, whether
// the length takes as many bytes as were kept for it, fewer or more.
func TestCloseLenForIsMinimal(t *testing.T) {
	sizes := []int{0, 1, 127, 128, 16383, 16384, 1 << 21}
	for _, expect := range sizes {
		for _, size := range sizes {
			content := bytes.Repeat([]byte{0xab}, size)
			prefix := []byte{1, 2, 3}
			want, at := OpenLen(append([]byte(nil), prefix...), 2)
			want = CloseLen(append(want, content...), at)
			got, l := OpenLenFor(append([]byte(nil), prefix...), 2, expect)
			got = append(got, content...)
			if l.Content(got) != size {
				t.Fatalf("expect %d, size %d: Content %d", expect, size, l.Content(got))
			}
			got = CloseLenFor(got, l)
			if !bytes.Equal(got, want) {
				t.Fatalf("expect %d, size %d: %x..., want %x...", expect, size, got[:min(len(got), 12)], want[:min(len(want), 12)])
			}
		}
	}
}
