package compression

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// lz4Frame compresses b with github.com/pierrec/lz4/v4, the library the
// Collector's confighttp compresses lz4 bodies with (its defaults: 4 MiB
// blocks, a content checksum), with opts applied.
func lz4Frame(tb testing.TB, b []byte, opts ...lz4.Option) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(append([]lz4.Option{lz4.ConcurrencyOption(1)}, opts...)...); err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// lz4Descriptor builds a frame's magic and descriptor, with its checksum:
// flg and bd as the format has them, content size when flg says so.
func lz4Descriptor(flg, bd byte, contentSize uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, lz4Magic)
	b = append(b, flg, bd)
	if flg&0x08 != 0 {
		b = binary.LittleEndian.AppendUint64(b, contentSize)
	}
	return append(b, byte(xxh32(b[4:], 0)>>8))
}

// lz4Block appends a block of data (raw: stored uncompressed) to b.
func lz4Block(b, data []byte, raw bool) []byte {
	size := uint32(len(data))
	if raw {
		size |= 1 << 31
	}
	return append(binary.LittleEndian.AppendUint32(b, size), data...)
}

// lz4RunBlock is a compressed block of one literal byte c followed by a
// match at offset 1 that repeats it n-1 more times, then 5 literal c's (n
// >= 5): the most output per byte a block can spell, 255 to 1.
func lz4RunBlock(c byte, n int) []byte {
	ml := n - 1 - 5 - 4
	b := []byte{1<<4 | 15, c, 1, 0}
	for ml -= 15; ml >= 255; ml -= 255 {
		b = append(b, 255)
	}
	b = append(b, byte(ml))
	return append(b, 5<<4, c, c, c, c, c)
}

func TestLZ4DecodesWhatPierrecWrites(t *testing.T) {
	pb := plainRequest(t)
	for _, c := range []struct {
		name string
		opts []lz4.Option
	}{
		{"confighttp defaults", nil},
		{"64KiB blocks", []lz4.Option{lz4.BlockSizeOption(lz4.Block64Kb)}},
		{"256KiB blocks, block checksums", []lz4.Option{lz4.BlockSizeOption(lz4.Block256Kb), lz4.BlockChecksumOption(true)}},
		{"1MiB blocks, no content checksum", []lz4.Option{lz4.BlockSizeOption(lz4.Block1Mb), lz4.ChecksumOption(false)}},
		{"content size", []lz4.Option{lz4.SizeOption(uint64(len(pb)))}},
		{"level 9", []lz4.Option{lz4.CompressionLevelOption(lz4.Level9)}},
	} {
		for _, in := range [][]byte{pb, pb[:1], make([]byte, 3<<20), {}} {
			opts := c.opts
			if c.name == "content size" {
				opts = []lz4.Option{lz4.SizeOption(uint64(len(in)))}
			}
			wire := lz4Frame(t, in, opts...)
			charged := 0
			got, err := DecompressCharged([]byte("prefix"), LZ4, wire, 64<<20, func(n int) error { charged += n; return nil })
			if err != nil || !bytes.Equal(got[6:], in) || string(got[:6]) != "prefix" {
				t.Fatalf("%s, %d bytes: %v", c.name, len(in), err)
			}
			if charged != len(in) {
				t.Fatalf("%s, %d bytes: charged %d", c.name, len(in), charged)
			}
		}
	}
	// Frames one after the other, and a skippable frame, are one body.
	skip := append(binary.LittleEndian.AppendUint32(nil, lz4SkipMagic|7), 3, 0, 0, 0, 'a', 'b', 'c')
	wire := append(append(append([]byte(nil), lz4Frame(t, pb[:100])...), skip...), lz4Frame(t, pb[100:300])...)
	if got, err := Decompress(nil, LZ4, wire, 1<<20); err != nil || !bytes.Equal(got, pb[:300]) {
		t.Fatalf("two frames and a skippable one: %v", err)
	}
}

// Linked blocks (the lz4 tool's -BD) reach back into the block before; an
// independent block may not.
func TestLZ4LinkedBlocks(t *testing.T) {
	first := []byte("0123456789abcdef")
	// A match of 16 bytes at offset 16 (the whole first block), then one
	// literal.
	second := []byte{0<<4 | 12, 16, 0, 1 << 4, 'x'}
	linked := lz4Descriptor(0x40, 0x40, 0)
	linked = lz4Block(linked, first, true)
	linked = lz4Block(linked, second, false)
	linked = binary.LittleEndian.AppendUint32(linked, 0)
	got, err := Decompress(nil, LZ4, linked, 1<<20)
	if err != nil || string(got) != "0123456789abcdef0123456789abcdefx" {
		t.Fatalf("linked blocks: %q, %v", got, err)
	}
	independent := append([]byte(nil), linked...)
	independent[4] |= 0x20
	independent[6] = byte(xxh32(independent[4:6], 0) >> 8)
	if _, err := Decompress(nil, LZ4, independent, 1<<20); !errors.Is(err, errLZ4Corrupt) {
		t.Fatalf("an independent block reaching into the one before: %v, want corrupt", err)
	}
	// The reference tool's linked frames, when it is installed.
	if path, err := exec.LookPath("lz4"); err == nil {
		pb := plainRequest(t)
		in := bytes.Repeat(pb, 3)
		src := filepath.Join(t.TempDir(), "in")
		os.WriteFile(src, in, 0o600)
		out, err := exec.Command(path, "-BD", "-B4", "--content-size", "-c", src).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Decompress(nil, LZ4, out, 64<<20); err != nil || !bytes.Equal(got, in) {
			t.Fatalf("lz4 -BD -B4: %v", err)
		}
	}
}

// A bomb is refused within the limit: what it spells past the limit is
// never allocated, and it is charged as it decodes, so the budget stops it
// first when it is smaller. A declared content size over the limit is
// refused before anything is decoded.
func TestLZ4Bomb(t *testing.T) {
	const limit = 1 << 20
	// 64 MiB from 16 blocks of 4 MiB, 16 KiB each on the wire.
	bomb := lz4Descriptor(0x60, 0x70, 0)
	for range 16 {
		bomb = lz4Block(bomb, lz4RunBlock(0, 4<<20), false)
	}
	bomb = binary.LittleEndian.AppendUint32(bomb, 0)
	if got, err := Decompress(nil, LZ4, bomb, 64<<20); err != nil || len(got) != 64<<20 {
		t.Fatalf("the bomb within a 64 MiB limit: %d bytes, %v", len(got), err)
	}
	if _, err := Decompress(nil, LZ4, bomb, limit); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bomb: %v, want ErrTooLarge", err)
	}
	if n := allocatedBy(3, func() { _, _ = Decompress(nil, LZ4, bomb, limit) }); n > limit+64<<10 {
		t.Fatalf("a bomb refused at a %d-byte limit allocated %d bytes", limit, n)
	}
	// A budget of limit bytes stops it before what it refuses is
	// allocated (a 4 MiB match is charged whole, first).
	refuse := errors.New("budget refused")
	charged := 0
	budget := func(n int) error {
		if charged+n > limit {
			return refuse
		}
		charged += n
		return nil
	}
	if _, err := DecompressCharged(nil, LZ4, bomb, 64<<20, budget); !errors.Is(err, refuse) {
		t.Fatalf("charged bomb: %v", err)
	}
	if n := allocatedBy(3, func() { charged = 0; _, _ = DecompressCharged(nil, LZ4, bomb, 64<<20, budget) }); n > 64<<10 {
		t.Fatalf("a bomb refused by the budget allocated %d bytes", n)
	}

	// The fewest bytes: a 15-byte frame declaring 60 MiB of content.
	claim := append(lz4Descriptor(0x68, 0x70, 60<<20), 0, 0, 0, 0)
	charged = 0
	if _, err := DecompressCharged(nil, LZ4, claim, limit, func(n int) error { charged += n; return nil }); !errors.Is(err, ErrTooLarge) || charged != 0 {
		t.Fatalf("content size over the limit: %v, charged %d", err, charged)
	}
	if n := allocatedBy(20, func() { _, _ = Decompress(nil, LZ4, claim, limit) }); n > 1<<10 {
		t.Fatalf("a frame declaring 60 MiB allocated %d bytes", n)
	}
	// A frame declaring 4 MiB blocks allocates what its blocks spell.
	small := lz4Block(lz4Descriptor(0x60, 0x70, 0), []byte{4 << 4, 'a', 'b', 'c', 'd'}, false)
	small = binary.LittleEndian.AppendUint32(small, 0)
	if got, err := Decompress(nil, LZ4, small, limit); err != nil || string(got) != "abcd" {
		t.Fatalf("small block: %q, %v", got, err)
	}
	if n := allocatedBy(20, func() { _, _ = Decompress(nil, LZ4, small, limit) }); n > 8<<10 {
		t.Fatalf("a 4-byte block of a frame declaring 4 MiB blocks allocated %d bytes", n)
	}
}

func TestLZ4Refusals(t *testing.T) {
	good := lz4Frame(t, []byte("hello hello hello hello"), lz4.BlockChecksumOption(true))
	flip := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 0x01
		return b
	}
	end := binary.LittleEndian.AppendUint32(nil, 0)
	cases := map[string]struct {
		in   []byte
		want error
	}{
		"empty":             {nil, errLZ4Short},
		"bad magic":         {[]byte("PK\x03\x04 not lz4"), errLZ4Magic},
		"legacy":            {binary.LittleEndian.AppendUint32(nil, lz4LegacyMagic), errLZ4Legacy},
		"dictionary":        {lz4Descriptor(0x61, 0x70, 0), errLZ4Dict},
		"version 0":         {lz4Descriptor(0x20, 0x70, 0), errLZ4Header},
		"block size code 3": {lz4Descriptor(0x60, 0x30, 0), errLZ4Header},
		"descriptor sum":    {flip(6), errLZ4Checksum},
		"block sum":         {flip(len(good) - 9), errLZ4Checksum},
		"content sum":       {flip(len(good) - 1), errLZ4Checksum},
		"cut short":         {good[:len(good)-5], errLZ4Short},
		"no end mark":       {lz4Block(lz4Descriptor(0x60, 0x40, 0), []byte("abc"), true), errLZ4Short},
		"offset 0":          {append(lz4Block(lz4Descriptor(0x60, 0x40, 0), []byte{1 << 4, 'a', 0, 0, 0x10, 'b'}, false), end...), errLZ4Corrupt},
		"offset before start": {append(lz4Block(lz4Descriptor(0x60, 0x40, 0), []byte{1 << 4, 'a', 2, 0, 0x10, 'b'}, false), end...),
			errLZ4Corrupt},
		"literals past block": {append(lz4Block(lz4Descriptor(0x60, 0x40, 0), []byte{5 << 4, 'a'}, false), end...), errLZ4Corrupt},
		"block over maximum":  {append(lz4Block(lz4Descriptor(0x60, 0x40, 0), make([]byte, 64<<10+1), true), end...), errLZ4Corrupt},
		"output over block maximum": {append(lz4Block(lz4Descriptor(0x60, 0x40, 0), lz4RunBlock('a', 64<<10+1), false), end...),
			errLZ4Corrupt},
		"content size differs": {append(lz4Block(lz4Descriptor(0x68, 0x40, 5), []byte("abc"), true), end...), errLZ4Size},
	}
	for name, c := range cases {
		_, err := Decompress(nil, LZ4, c.in, 1<<20)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

func TestXXH32(t *testing.T) {
	// Reference values of XXH32 (xxhash's sanity tests, and the lz4
	// tool's header checksums).
	for _, c := range []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0x02CC5D05},
		{"", 0x9E3779B1, 0x36B78AE7},
		{"a", 0, 0x550D7456},
		{"abc", 0, 0x32D153FF},
		{"Nobody inspects the spammish repetition", 0, 0xE2293B2F},
	} {
		if got := xxh32([]byte(c.in), c.seed); got != c.want {
			t.Errorf("xxh32(%q, %#x) = %#x, want %#x", c.in, c.seed, got, c.want)
		}
	}
}

// FuzzLZ4: any input decodes within the limit without panic; what we
// decode, pierrec's reader decodes to the same bytes; and what pierrec
// writes, we decode.
func FuzzLZ4(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/lz4/*")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(lz4Frame(f, []byte("hello hello hello hello"), lz4.BlockChecksumOption(true)))
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 20
		got, err := Decompress(nil, LZ4, data, limit)
		// The charged path, after a prefix in dst (a buffer reused): the
		// same bytes or the same refusal, every byte of output charged
		// once, nothing before the prefix's end reached by a match.
		var charged int
		prefix := []byte("prefix")
		got2, err2 := DecompressCharged(slices.Clip(prefix), LZ4, data, limit, func(n int) error { charged += n; return nil })
		if (err == nil) != (err2 == nil) {
			t.Fatalf("uncharged: %v; charged after a prefix: %v", err, err2)
		}
		if err == nil && (!bytes.Equal(got2[:len(prefix)], prefix) || !bytes.Equal(got2[len(prefix):], got) || charged != len(got)) {
			t.Fatalf("charged after a prefix: %d bytes (%d charged), want %d", len(got2)-len(prefix), charged, len(got))
		}
		if err == nil {
			if len(got) > limit {
				t.Fatalf("output %d over the limit", len(got))
			}
			want, perr := io.ReadAll(io.LimitReader(lz4.NewReader(bytes.NewReader(data)), limit+1))
			if perr == nil && !bytes.Equal(got, want) {
				t.Fatalf("decoded %d bytes, pierrec %d", len(got), len(want))
			}
		}
		if len(data) <= limit {
			wire := lz4Frame(t, data, lz4.BlockSizeOption(lz4.Block64Kb))
			if got, err := Decompress(nil, LZ4, wire, limit); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("pierrec's frame of %d bytes: %v", len(data), err)
			}
		}
	})
}

// BenchmarkLZ4 decodes the 500-span request as confighttp compresses it,
// with this package's decoder and with pierrec's reader (what confighttp
// decodes with).
func BenchmarkLZ4(b *testing.B) {
	pb := plainRequest(b)
	wire := lz4Frame(b, pb)
	b.Run("decoder=otlp-lite", func(b *testing.B) {
		b.SetBytes(int64(len(pb)))
		b.ReportAllocs()
		var dst []byte
		for b.Loop() {
			var err error
			if dst, err = Decompress(dst[:0], LZ4, wire, 64<<20); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder=pierrec", func(b *testing.B) {
		b.SetBytes(int64(len(pb)))
		b.ReportAllocs()
		var dst []byte
		r := lz4.NewReader(nil)
		for b.Loop() {
			r.Reset(bytes.NewReader(wire))
			var err error
			if dst, err = ReadAll(dst[:0], r, 64<<20, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
