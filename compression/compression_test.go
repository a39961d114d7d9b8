package compression

import (
	"bytes"
	"errors"
	"runtime"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	src := bytes.Repeat([]byte("OpenTelemetry span payload "), 4000)
	for _, c := range []Codec{Identity, Gzip, Zstd, Snappy, Deflate} {
		comp, err := Compress(nil, c, src)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		got, err := Decompress([]byte("prefix"), c, comp, len(src))
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), src...)) {
			t.Fatalf("%s: round trip differs", c)
		}
		if _, err := Decompress(nil, c, comp, len(src)-1); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s: one byte over the limit: %v", c, err)
		}
	}
}

func TestParse(t *testing.T) {
	for name, want := range map[string]Codec{"": Identity, "identity": Identity, "GZIP": Gzip, "x-gzip": Gzip,
		" zstd ": Zstd, "snappy": Snappy, "deflate": Deflate, "zlib": Deflate} {
		if got, err := Parse(name); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v", name, got, err)
		}
	}
	if _, err := Parse("br"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Parse(br): %v", err)
	}
}

// TestSnappyBlockAndRawDeflate covers the formats some clients send besides
// the canonical ones.
func TestSnappyBlockAndRawDeflate(t *testing.T) {
	src := []byte("hello hello hello hello")
	block := []byte{23, 0x58} // varint length 23, literal of 23 bytes
	block = append(block, src...)
	got, err := Decompress(nil, Snappy, block, 100)
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("snappy block: %q %v", got, err)
	}
	if _, err := Decompress(nil, Snappy, block, 10); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("snappy block over limit: %v", err)
	}
	z, _ := Compress(nil, Deflate, src)
	raw := z[2 : len(z)-4] // strip the zlib header and Adler-32 trailer
	got, err = Decompress(nil, Deflate, raw, 100)
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("raw deflate: %q %v", got, err)
	}
}

// TestBombDoesNotAllocate decompresses 1 GiB of zeros squeezed into about a
// megabyte with a 1 MiB limit: it must fail fast and allocate about the limit,
// not the claimed size.
func TestBombDoesNotAllocate(t *testing.T) {
	zeros := make([]byte, 64<<20)
	for _, c := range []Codec{Gzip, Zstd, Snappy, Deflate} {
		comp, err := Compress(nil, c, zeros)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err = Decompress(nil, c, comp, 1<<20)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s: want ErrTooLarge, got %v", c, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
			t.Errorf("%s: allocated %d MiB for a 1 MiB limit", c, grew>>20)
		}
	}
}

func FuzzDecompress(f *testing.F) {
	for _, c := range []Codec{Gzip, Zstd, Snappy, Deflate} {
		b, _ := Compress(nil, c, []byte("seed seed seed"))
		f.Add(uint8(c), b)
	}
	f.Fuzz(func(t *testing.T, c uint8, src []byte) {
		out, err := Decompress(nil, Codec(c%6), src, 1<<16)
		if err == nil && len(out) > 1<<16 {
			t.Fatalf("output %d over limit", len(out))
		}
	})
}
