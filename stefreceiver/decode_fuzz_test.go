package stefreceiver

import (
	"bytes"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// FuzzDecodeMetrics feeds arbitrary bytes to the STEF decoder: it must
// not panic, must stop within its bound, and what it writes must be
// well-formed OTLP whatever the input (testdata/fuzz holds a real stream,
// compressed and not, as seeds), the same with the decoder's shortcuts
// (fastPaths) and without.
func FuzzDecodeMetrics(f *testing.F) {
	f.Add([]byte("STEF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 20
		out, _, _ := DecodeMetrics(nil, bytes.NewReader(data), limit)
		fastPaths = false
		slow, _, _ := DecodeMetrics(nil, bytes.NewReader(data), limit)
		fastPaths = true
		if !bytes.Equal(out, slow) {
			t.Fatalf("the fast paths wrote other bytes than the general path")
		}
		if len(out) > limit+64<<10 {
			t.Fatalf("wrote %d bytes past the %d bound", len(out), limit)
		}
		if _, err := otlpdecode.CheckMetrics(out, &otlpdecode.Options{}); err != nil {
			t.Fatalf("wrote malformed OTLP: %v", err)
		}
	})
}

// FuzzDecodeSpans is FuzzDecodeMetrics for spans.
func FuzzDecodeSpans(f *testing.F) {
	f.Add([]byte("STEF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 20
		out, _, _ := DecodeSpans(nil, bytes.NewReader(data), limit)
		fastPaths = false
		slow, _, _ := DecodeSpans(nil, bytes.NewReader(data), limit)
		fastPaths = true
		if !bytes.Equal(out, slow) {
			t.Fatalf("the fast paths wrote other bytes than the general path")
		}
		if len(out) > limit+64<<10 {
			t.Fatalf("wrote %d bytes past the %d bound", len(out), limit)
		}
		if _, err := otlpdecode.CheckTraces(out, &otlpdecode.Options{}); err != nil {
			t.Fatalf("wrote malformed OTLP: %v", err)
		}
	})
}
