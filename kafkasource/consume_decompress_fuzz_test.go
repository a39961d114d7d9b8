package kafkasource

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// FuzzBoundedDecompress: whatever a batch holds, Decompress returns at
// most maxBatch bytes or an error, and never panics. The seeds
// (testdata/fuzz/FuzzBoundedDecompress) are small valid batches of each
// codec, framed snappy, and a snappy block claiming 2 GiB.
func FuzzBoundedDecompress(f *testing.F) {
	const maxBatch = 1 << 20
	f.Fuzz(func(t *testing.T, src []byte, codec uint8) {
		d := testDecompressor(maxBatch, 1<<30)
		typ := kgo.CompressionCodecType(codec % 5)
		out, err := d.Decompress(src, typ)
		if err != nil {
			if out != nil {
				t.Fatalf("error %v with %d bytes", err, len(out))
			}
			return
		}
		if typ != kgo.CodecNone && len(out) > maxBatch {
			t.Fatalf("%d bytes decompressed, bound %d", len(out), maxBatch)
		}
	})
}
