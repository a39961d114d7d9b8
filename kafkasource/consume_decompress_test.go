package kafkasource

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kgo"
)

func testDecompressor(maxBatch int, budget int64) *boundedDecompressor {
	set := metrics.NewSet()
	return newBoundedDecompressor(maxBatch, budget, set.NewCounter("throttled"), set.NewCounter("corrupt"))
}

// compressed returns data compressed by franz-go's producer compressor.
func compressed(t *testing.T, codec kgo.CompressionCodec, data []byte) ([]byte, kgo.CompressionCodecType) {
	t.Helper()
	c, err := kgo.DefaultCompressor(codec)
	if err != nil {
		t.Fatal(err)
	}
	out, typ := c.Compress(new(bytes.Buffer), data)
	return bytes.Clone(out), typ
}

// TestBoundedDecompressorCodecs: what franz-go's producer compresses with
// each codec, and the Java client's framed snappy, decompress to the
// original; one byte past the bound is refused as kgo.ErrMaxDecompress.
func TestBoundedDecompressorCodecs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(r.IntN(16)) // compressible, not trivially
	}
	for _, codec := range []kgo.CompressionCodec{kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		src, typ := compressed(t, codec, data)
		if typ == kgo.CodecNone {
			t.Fatalf("codec %v did not compress", codec)
		}
		got, err := testDecompressor(len(data), 1<<30).Decompress(src, typ)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("codec %d: %d bytes, err %v; want the %d bytes compressed", typ, len(got), err, len(data))
		}
		if _, err := testDecompressor(len(data)-1, 1<<30).Decompress(src, typ); !errors.Is(err, kgo.ErrMaxDecompress) {
			t.Errorf("codec %d one byte over the bound: err %v, want ErrMaxDecompress", typ, err)
		}
	}
	// Java's framing: magic, versions, then length-prefixed blocks.
	framed := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0} // SnappyOutputStream's magic
	framed = append(framed, 0, 0, 0, 1, 0, 0, 0, 1)
	for chunk := range slices.Chunk(data, 32<<10) {
		block := s2.EncodeSnappy(nil, chunk)
		framed = binary.BigEndian.AppendUint32(framed, uint32(len(block)))
		framed = append(framed, block...)
	}
	if got, err := testDecompressor(len(data), 1<<30).Decompress(framed, kgo.CodecSnappy); err != nil || !bytes.Equal(got, data) {
		t.Errorf("framed snappy: %d bytes, err %v", len(got), err)
	}
	if _, err := testDecompressor(len(data)-1, 1<<30).Decompress(framed, kgo.CodecSnappy); !errors.Is(err, kgo.ErrMaxDecompress) {
		t.Errorf("framed snappy over the bound: err %v, want ErrMaxDecompress", err)
	}
	// A snappy block that claims 2 GiB is refused before allocating.
	lie := append(binary.AppendUvarint(nil, 2<<30), 0x0c, 'h', 'e', 'l', 'l', 'o')
	if _, err := testDecompressor(64<<20, 1<<30).Decompress(lie, kgo.CodecSnappy); !errors.Is(err, kgo.ErrMaxDecompress) {
		t.Errorf("snappy claiming 2 GiB: err %v, want ErrMaxDecompress", err)
	}
}

// TestBoundedDecompressorCorrupt: a batch that does not decompress is
// refused with an error wrapping kgo.ErrMaxDecompress, so that franz-go
// reports its offsets and the consumer skips it instead of fetching it
// again for ever, and counted; a snappy block claiming more than its bytes
// can encode is refused so before anything is allocated for the claim.
func TestBoundedDecompressorCorrupt(t *testing.T) {
	lie := append(binary.AppendUvarint(nil, 60<<20), 0x10, 'h', 'e', 'l', 'l', 'o')
	for _, tc := range []struct {
		name  string
		src   []byte
		codec kgo.CompressionCodecType
	}{
		{"gzip", []byte("garbage"), kgo.CodecGzip},
		{"lz4", []byte("garbage"), kgo.CodecLz4},
		{"zstd", []byte("garbage"), kgo.CodecZstd},
		{"snappy", []byte("garbage"), kgo.CodecSnappy},
		{"snappy claiming 60 MiB in 10 bytes", lie, kgo.CodecSnappy},
	} {
		d := testDecompressor(64<<20, 1<<30)
		d.Decompress(tc.src, tc.codec) // pools and lazy decoders
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := d.Decompress(tc.src, tc.codec)
		runtime.ReadMemStats(&after)
		var corrupt *errCorruptBatch
		if !errors.As(err, &corrupt) || !errors.Is(err, kgo.ErrMaxDecompress) {
			t.Errorf("%s: err %v, want errCorruptBatch wrapping kgo.ErrMaxDecompress", tc.name, err)
		}
		if d.corrupt.Get() != 2 {
			t.Errorf("%s: counted %d corrupt batches, want 2", tc.name, d.corrupt.Get())
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
			t.Errorf("%s: %d bytes allocated for the batch, want what the batch can hold, not what it claims", tc.name, got)
		}
	}
	// Real snappy blocks of the densest data decode.
	zeros := make([]byte, 1<<20)
	block := s2.EncodeSnappy(nil, zeros)
	if got, err := testDecompressor(64<<20, 1<<30).Decompress(block, kgo.CodecSnappy); err != nil || len(got) != len(zeros) {
		t.Errorf("snappy block of zeros (%d bytes for %d): %d bytes, err %v", len(block), len(zeros), len(got), err)
	}
}

// TestBoundedDecompressorBudget: batches are refused with
// errDecompressBudget (not ErrMaxDecompress: nothing is skipped for it)
// once the bytes decompressed since drained reach the budget, and
// accepted again after drained.
func TestBoundedDecompressorBudget(t *testing.T) {
	data := bytes.Repeat([]byte("otlp"), 256<<10) // 1 MiB
	src, typ := compressed(t, kgo.ZstdCompression(), data)
	d := testDecompressor(2<<20, 3<<20)
	for i := range 3 {
		if _, err := d.Decompress(src, typ); err != nil {
			t.Fatalf("batch %d within the budget: %v", i, err)
		}
	}
	if _, err := d.Decompress(src, typ); !errors.Is(err, errDecompressBudget) || errors.Is(err, kgo.ErrMaxDecompress) {
		t.Fatalf("batch past the budget: err %v, want errDecompressBudget", err)
	}
	if got := d.throttled.Get(); got != 1 {
		t.Errorf("throttled = %d, want 1", got)
	}
	if out, err := d.Decompress(data, kgo.CodecNone); err != nil || len(out) != len(data) {
		t.Errorf("an uncompressed batch is passed through even past the budget: %d bytes, %v", len(out), err)
	}
	d.drained()
	if _, err := d.Decompress(src, typ); err != nil {
		t.Fatalf("after drained: %v", err)
	}
	// Stored records release what they hold of compressed batches only
	// (franz-go's RecordAttrs of a compressed batch cannot be made here:
	// TestKafkaConsumeManyLargeBatches in interop covers those).
	d.released([]*kgo.Record{{Value: data}})
	if got := d.held.Load(); got != int64(len(data)) {
		t.Errorf("held %d after releasing an uncompressed record, want %d", got, len(data))
	}
}

// BenchmarkDecompress compares the consumer's decompressor with franz-go's
// on a 1 MiB batch of each codec.
func BenchmarkDecompress(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = "otlp-lite spans "[r.IntN(16)]
	}
	for _, codec := range []kgo.CompressionCodec{kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		c, err := kgo.DefaultCompressor(codec)
		if err != nil {
			b.Fatal(err)
		}
		out, typ := c.Compress(new(bytes.Buffer), data)
		src := bytes.Clone(out)
		for _, dec := range []struct {
			name string
			d    kgo.Decompressor
		}{{"bounded", testDecompressor(64<<20, 1<<62)}, {"franz-go", kgo.DefaultDecompressor()}} {
			b.Run(fmt.Sprintf("codec=%d/%s", typ, dec.name), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := dec.d.Decompress(src, typ); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
