package pbappend

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
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

// lenBoundaries are the sizes around each varint length's range: a
// guess on one side and a content on the other makes CloseLenFor move
// the content back or forth by one byte or more.
var lenBoundaries = []int{0, 1, 126, 127, 128, 129, 16382, 16383, 16384, 16385, 1<<21 - 1, 1 << 21, 1<<21 + 1}

// pattern returns n bytes none of which is its neighbour's: a content
// moved by a wrong offset does not read the same.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8 + seed)
	}
	return b
}

// openFor nests fields: each level's guess and content, outermost
// first; the innermost holds content, and every level but the innermost
// holds pre before its child and post after it.
type lenLevel struct {
	field, expect int
	pre, post     []byte
}

// buildFor writes levels with OpenLenFor/CloseLenFor; buildRef the same
// with protowire (google.golang.org/protobuf), a reference written apart
// from this package.
func buildFor(b []byte, levels []lenLevel, content []byte) []byte {
	if len(levels) == 0 {
		return append(b, content...)
	}
	lv := levels[0]
	b, l := OpenLenFor(b, lv.field, lv.expect)
	b = append(b, lv.pre...)
	b = buildFor(b, levels[1:], content)
	b = append(b, lv.post...)
	return CloseLenFor(b, l)
}

func buildRef(b []byte, levels []lenLevel, content []byte) []byte {
	if len(levels) == 0 {
		return append(b, content...)
	}
	lv := levels[0]
	inner := append(append([]byte(nil), lv.pre...), buildRef(nil, levels[1:], content)...)
	inner = append(inner, lv.post...)
	b = protowire.AppendTag(b, protowire.Number(lv.field), protowire.BytesType)
	return protowire.AppendBytes(b, inner)
}

// OpenLenFor/CloseLenFor, with a guess on either side of each varint
// size boundary and a content on either side, nested three deep with
// bytes around each level, write what protowire writes: the minimal
// length and the content unmoved relative to it.
func TestCloseLenForAtBoundaries(t *testing.T) {
	prefix := []byte{0x0a, 0x01, 0x00}
	contents := make([][]byte, len(lenBoundaries))
	for i, size := range lenBoundaries {
		contents[i] = pattern(size, i)
	}
	for _, expect := range append(lenBoundaries, -1, 1<<28) {
		for i, size := range lenBoundaries {
			content := contents[i]
			levels := []lenLevel{
				{field: 1, expect: expect + 3, pre: []byte{9}, post: []byte{8, 7}},
				{field: 2047, expect: expect, pre: pattern(2, 1)},
				{field: 16, expect: expect - 1},
			}
			want := buildRef(append([]byte(nil), prefix...), levels, content)
			got := buildFor(append([]byte(nil), prefix...), levels, content)
			if !bytes.Equal(got, want) {
				t.Fatalf("expect %d, size %d: %d bytes, want %d; first difference at %d", expect, size, len(got), len(want), firstDiff(got, want))
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// FuzzCloseLenFor: any nesting of guesses and contents writes what
// protowire writes.
func FuzzCloseLenFor(f *testing.F) {
	f.Add(uint16(127), uint16(128), uint16(0), uint32(16384), []byte{1, 2, 3})
	f.Add(uint16(16384), uint16(1), uint16(200), uint32(127), []byte{})
	f.Add(uint16(0), uint16(0), uint16(0), uint32(1<<21), []byte{0xff})
	f.Fuzz(func(t *testing.T, e1, e2, pad uint16, size uint32, seed []byte) {
		size %= 1<<21 + 2
		content := pattern(int(size), len(seed))
		copy(content, seed)
		levels := []lenLevel{
			{field: 3, expect: int(e1), pre: pattern(int(pad)%300, 3)},
			{field: 1 << 20, expect: int(e2), post: seed},
		}
		want := buildRef(nil, levels, content)
		got := buildFor(nil, levels, content)
		if !bytes.Equal(got, want) {
			t.Fatalf("guesses %d, %d, size %d: %d bytes, want %d; first difference at %d", e1, e2, size, len(got), len(want), firstDiff(got, want))
		}
	})
}
