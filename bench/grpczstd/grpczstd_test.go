package grpczstd

import (
	"bytes"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestRoundTrip compresses and decompresses through pooled coders several
// times (so pooled ones are reused), and checks the frames are standard zstd
// that another decoder reads.
func TestRoundTrip(t *testing.T) {
	c := &compressor{}
	plain := bytes.Repeat([]byte("otlp-lite side by side "), 5000)
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"empty", nil},
		{"small", []byte("x")},
		{"large", plain},
		{"large again, pooled coders", plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := c.Compress(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(tc.src); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err == nil {
				t.Fatal("second Close succeeded; want an error")
			}
			frame := buf.Bytes()
			r, err := c.Decompress(bytes.NewReader(frame))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.src) {
				t.Fatalf("round trip gave %d bytes, want %d", len(got), len(tc.src))
			}
			dec, _ := zstd.NewReader(nil)
			defer dec.Close()
			if got, err := dec.DecodeAll(frame, nil); err != nil || !bytes.Equal(got, tc.src) {
				t.Fatalf("a fresh zstd decoder read %d bytes, err %v; want %d", len(got), err, len(tc.src))
			}
		})
	}
}

func TestCorruptInput(t *testing.T) {
	c := &compressor{}
	r, err := c.Decompress(bytes.NewReader([]byte("not zstd at all")))
	if err == nil {
		_, err = io.ReadAll(r)
	}
	if err == nil {
		t.Fatal("decompressing garbage succeeded; want an error")
	}
}
