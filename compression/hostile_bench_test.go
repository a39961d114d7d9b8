package compression

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"testing"
)

// The hostile inputs of each codec, and the benchmark that sets their CPU
// per wire byte against a plain request's (issue 21, finding 6: an 11-byte
// snappy block claiming 60 MiB cost 35-150x the CPU of one claiming 100 B).
// Each reports ns/wire-B (CPU per byte received) and wire-B/op; compare a
// hostile input's ns/wire-B with the plain request of the same codec.

// hostileLimit is the request limit the benchmarks decompress under: the
// default 64 MiB.
const hostileLimit = 64 << 20

// plainRequest is a real export request (500 spans of 10 attributes).
func plainRequest(tb testing.TB) []byte {
	b, err := os.ReadFile("../testdata/otlp/traces_500x10.pb")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// snappyBlockClaiming is a snappy block whose header claims n bytes, followed
// by a 4-byte literal: 10 or 11 bytes that decode to 4.
func snappyBlockClaiming(n int) []byte {
	b := binary.AppendUvarint(nil, uint64(n))
	return append(b, 3<<2, 'a', 'b', 'c', 'd')
}

// snappyFramedChunk is a snappy framing-format stream: the stream
// identifier and one chunk of type typ holding payload.
func snappyFramedChunk(typ byte, payload []byte) []byte {
	b := append([]byte(nil), snappyFramedMagic...)
	n := len(payload)
	b = append(b, typ, byte(n), byte(n>>8), byte(n>>16))
	return append(b, payload...)
}

// snappyUncompressedChunk is an uncompressed chunk's payload (CRC + data).
func snappyUncompressedChunk(data []byte) []byte {
	c := crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))
	c = (c>>15 | c<<17) + 0xa282ead8
	return append(binary.LittleEndian.AppendUint32(nil, c), data...)
}

// gzipEmptyMembers is n empty gzip members back to back (20 bytes each):
// each is a whole stream header to parse and a decompressor to reset.
func gzipEmptyMembers(tb testing.TB, n int) []byte {
	one, err := Compress(nil, Gzip, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Repeat(one, n)
}

// gzipLongHeader is a gzip member whose header has a 64 KiB FEXTRA field and
// a 64 KiB file name before an empty body.
func gzipLongHeader(tb testing.TB) []byte {
	empty, _ := Compress(nil, Gzip, nil)
	h := []byte{0x1f, 0x8b, 8, 0x04 | 0x08, 0, 0, 0, 0, 0, 0xff}
	h = binary.LittleEndian.AppendUint16(h, 0xffff)
	h = append(h, make([]byte, 0xffff)...)
	h = append(h, bytes.Repeat([]byte{'n'}, 64<<10)...)
	h = append(h, 0)
	return append(h, empty[10:]...) // the empty deflate body and trailer
}

// gzipExtraClaiming is a gzip header whose FEXTRA field claims 65535 bytes
// that do not follow: klauspost/compress/gzip allocates the claimed field
// before reading it, 64 KiB once per request at most (only the last member
// of a stream can be cut short).
func gzipExtraClaiming() []byte {
	return []byte{0x1f, 0x8b, 8, 0x04, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 'x'}
}

// zstdClaiming is a zstd frame whose header claims an 8 MiB window (the
// most accepted) and a content size of n, with one raw block of 4 bytes.
func zstdClaiming(n uint64) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd}
	// Frame header descriptor: FCS field 8 bytes (3<<6), no single segment,
	// no checksum, no dictionary.
	b = append(b, 3<<6)
	b = append(b, (23-10)<<3) // window descriptor: 2^23 = 8 MiB
	b = binary.LittleEndian.AppendUint64(b, n)
	// Last block, raw, 4 bytes.
	bh := uint32(1) | 0<<1 | 4<<3
	b = append(b, byte(bh), byte(bh>>8), byte(bh>>16))
	return append(b, 'a', 'b', 'c', 'd')
}

// zstdEmptyFrames is n minimal zstd frames back to back.
func zstdEmptyFrames(tb testing.TB, n int) []byte {
	one, err := Compress(nil, Zstd, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Repeat(one, n)
}

type hostileCase struct {
	name  string
	codec Codec
	wire  []byte
}

func hostileCases(tb testing.TB) []hostileCase {
	pb := plainRequest(tb)
	comp := func(c Codec, b []byte) []byte {
		out, err := Compress(nil, c, b)
		if err != nil {
			tb.Fatal(err)
		}
		return out
	}
	zeros := make([]byte, hostileLimit)
	small := pb[:120] // a request's first bytes: an honest small body
	cases := []hostileCase{{"identity/plain", Identity, pb}}
	for _, c := range []Codec{Gzip, Zstd, Snappy, Deflate} {
		cases = append(cases,
			hostileCase{c.String() + "/plain", c, comp(c, pb)},
			hostileCase{c.String() + "/plain-small", c, comp(c, small)},
			// The most output per wire byte the codec can spell, up to
			// the limit: what any bomb costs.
			hostileCase{c.String() + "/zeros-to-limit", c, comp(c, zeros)},
		)
	}
	cases = append(cases,
		hostileCase{"snappy/block-claims-60MiB", Snappy, snappyBlockClaiming(60 << 20)},
		hostileCase{"snappy/block-claims-100B", Snappy, snappyBlockClaiming(100)},
		hostileCase{"snappy/block-small", Snappy, snappyBlockClaiming(4)},
		hostileCase{"gzip/extra-claims-64KiB", Gzip, gzipExtraClaiming()},
		hostileCase{"snappy/framed-chunk-claims-16MiB", Snappy, snappyFramedChunk(0x01, snappyUncompressedChunk([]byte("abcd")))[:len(snappyFramedMagic)+4+8]},
		hostileCase{"gzip/empty-members", Gzip, gzipEmptyMembers(tb, 3000)},
		hostileCase{"gzip/long-header", Gzip, gzipLongHeader(tb)},
		hostileCase{"zstd/claims-8MiB-window-60MiB-content", Zstd, zstdClaiming(60 << 20)},
		hostileCase{"zstd/empty-frames", Zstd, zstdEmptyFrames(tb, 3000)},
		hostileCase{"lz4/plain", LZ4, lz4Frame(tb, pb)},
		hostileCase{"lz4/plain-small", LZ4, lz4Frame(tb, small)},
		hostileCase{"lz4/zeros-to-limit", LZ4, lz4Frame(tb, zeros)},
		hostileCase{"lz4/claims-60MiB-content", LZ4, append(lz4Descriptor(0x68, 0x70, 60<<20), 0, 0, 0, 0)},
		hostileCase{"lz4/4MiB-blocks-declared-4B-sent", LZ4, append(lz4Block(lz4Descriptor(0x60, 0x70, 0), []byte{4 << 4, 'a', 'b', 'c', 'd'}, false), 0, 0, 0, 0)},
	)
	return cases
}

// BenchmarkDecompressHostile decompresses each codec's plain request and
// hostile inputs, reporting CPU per wire byte (ns/wire-B) and per byte of
// output (ns/out-B).
func BenchmarkDecompressHostile(b *testing.B) {
	for _, tc := range hostileCases(b) {
		b.Run(tc.name, func(b *testing.B) {
			var dst []byte
			out := 0
			b.ReportAllocs()
			for b.Loop() {
				var err error
				dst, err = Decompress(dst[:0], tc.codec, tc.wire, hostileLimit)
				_ = err
				out = len(dst)
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(ns/float64(len(tc.wire)), "ns/wire-B")
			b.ReportMetric(float64(len(tc.wire)), "wire-B/op")
			b.ReportMetric(float64(out), "out-B/op")
		})
	}
}
