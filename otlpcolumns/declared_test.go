package otlpcolumns

import (
	"testing"
)

// TestDeclaredLen: what DeclaredLen reads of a message is the length
// Decode writes, transformed or not (the golden payloads of every signal
// with a schema, and a message sent untransformed); what Decode refuses at
// once, it refuses.
func TestDeclaredLen(t *testing.T) {
	transformed := 0
	for _, s := range signals {
		enc, dec := NewEncoder(s.sig), NewDecoder(s.sig)
		for _, msg := range append(envelopes(t, s.name), []byte{0x08, 0x07}) {
			src := enc.Append(nil, msg)
			if src[0] == flagColumns {
				transformed++
			}
			n, ok := DeclaredLen(src)
			out, err := dec.Decode(nil, src, 1<<24, nil)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if !ok || n != len(out) {
				t.Fatalf("%s: declared %d (%v), decoded %d", s.name, n, ok, len(out))
			}
		}
	}
	if transformed == 0 {
		t.Fatal("no message was transformed")
	}
	for _, src := range [][]byte{nil, {7}, {flagColumns}, {flagColumns, 0x80}} {
		if _, ok := DeclaredLen(src); ok {
			t.Fatalf("%x declares a length", src)
		}
	}
}

// FuzzDeclaredLen: whatever src is, DeclaredLen does not panic, and when
// Decode writes a message, DeclaredLen read its length.
func FuzzDeclaredLen(f *testing.F) {
	enc := NewEncoder(Traces)
	for _, msg := range envelopes(f, "traces") {
		f.Add(enc.Append(nil, msg))
	}
	f.Add([]byte{flagRaw, 0x08, 0x07})
	f.Fuzz(func(t *testing.T, src []byte) {
		n, ok := DeclaredLen(src)
		out, err := NewDecoder(Traces).Decode(nil, src, 1<<20, nil)
		if err == nil && (!ok || n != len(out)) {
			t.Fatalf("declared %d (%v), decoded %d", n, ok, len(out))
		}
	})
}
