package compression

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/klauspost/compress/s2"
)

// allocatedBy returns the bytes f allocates, averaged over n runs.
func allocatedBy(n int, f func()) uint64 {
	f() // warm the pools
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

// TestSnappyBlockHeaderNotTrusted (issue 21, finding 6): a snappy block
// whose header claims 60 MiB and whose body spells 4 bytes is refused
// before anything is allocated for the claim; it allocated 60 MiB (35-150x
// the CPU of one claiming 100 B, and sequential calls grew the process to
// 270 MB). Nothing is charged either.
func TestSnappyBlockHeaderNotTrusted(t *testing.T) {
	lying := snappyBlockClaiming(60 << 20)
	charged := 0
	charge := func(n int) error { charged += n; return nil }
	if _, err := DecompressCharged(nil, Snappy, lying, 64<<20, charge); err == nil || errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v, want corrupt", err)
	}
	if charged != 0 {
		t.Fatalf("charged %d bytes for a block that spells 4", charged)
	}
	if n := allocatedBy(20, func() { _, _ = Decompress(nil, Snappy, lying, 64<<20) }); n > 64<<10 {
		t.Fatalf("a block claiming 60 MiB allocates %d bytes per call", n)
	}
	// A claim over the limit is too large, as before.
	if _, err := Decompress(nil, Snappy, snappyBlockClaiming(2<<20), 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("claim over the limit: %v", err)
	}
}

// TestSnappyBlockFormats: blocks from a Snappy encoder decode, whatever
// their content (the plain request, zeros at the 21:1 the format allows);
// S2's extensions, which are not Snappy and spell up to 16 MiB in 5
// bytes, are refused.
func TestSnappyBlockFormats(t *testing.T) {
	for _, src := range [][]byte{plainRequest(t), make([]byte, 1<<20), []byte("x"), nil} {
		block := s2.EncodeSnappy(nil, src)
		got, err := Decompress(nil, Snappy, block, 64<<20)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("snappy block of %d bytes: %v", len(src), err)
		}
		if n, err := snappyBlockLen(block, 64<<20); err != nil || n != len(src) {
			t.Fatalf("snappyBlockLen = %d, %v; want %d", n, err, len(src))
		}
	}
	s2block := s2.Encode(nil, make([]byte, 1<<20)) // S2 writes repeat copies for runs
	if _, err := snappyBlockLen(s2block, 64<<20); err == nil {
		t.Fatalf("an S2 block with repeat copies (%d bytes) was read as Snappy", len(s2block))
	}
}

// TestZstdWindowCharged: the history a zstd frame declares is charged
// before the decoder allocates it: 21 bytes declaring an 8 MiB window cost
// 8.25 MiB outside every account. A small honest frame is charged little.
func TestZstdWindowCharged(t *testing.T) {
	charged := 0
	charge := func(n int) error { charged += n; return nil }
	_, _ = DecompressCharged(nil, Zstd, zstdClaiming(60<<20), 64<<20, charge)
	if charged < 8<<20 {
		t.Fatalf("an 8 MiB window was charged %d bytes", charged)
	}
	refuse := errors.New("budget refused")
	if _, err := DecompressCharged(nil, Zstd, zstdClaiming(60<<20), 64<<20, func(n int) error {
		if n > 1<<20 {
			return refuse
		}
		return nil
	}); !errors.Is(err, refuse) {
		t.Fatalf("refused charge: %v", err)
	}
	small := plainRequest(t)[:120]
	z, _ := Compress(nil, Zstd, small)
	charged = 0
	got, err := DecompressCharged(nil, Zstd, z, 64<<20, charge)
	if err != nil || !bytes.Equal(got, small) || charged > 8<<10 {
		t.Fatalf("small frame: err %v, charged %d", err, charged)
	}
	// Every frame of a stream is walked: a small frame first does not
	// hide a large window after it.
	stream := append(append([]byte(nil), z...), zstdClaiming(60<<20)...)
	charged = 0
	_, _ = DecompressCharged(nil, Zstd, stream, 64<<20, charge)
	if charged < 8<<20 {
		t.Fatalf("second frame's window charged %d", charged)
	}
	// Skippable frames and many empty frames walk.
	skippable := []byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'}
	if got, err := Decompress(nil, Zstd, append(append(skippable, zstdEmptyFrames(t, 100)...), z...), 1<<20); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("skippable and empty frames: %v", err)
	}
}

// TestGzipMembers: a gzip stream is a series of members, each read as it
// arrives; an extra field is read when it is there, and refused before it
// is allocated when it is not.
func TestGzipMembers(t *testing.T) {
	a, _ := Compress(nil, Gzip, []byte("first "))
	b, _ := Compress(nil, Gzip, []byte("second"))
	extra := []byte{0x1f, 0x8b, 8, 0x04, 0, 0, 0, 0, 0, 0xff, 3, 0, 'x', 'y', 'z'}
	extra = append(extra, b[10:]...)
	got, err := Decompress(nil, Gzip, append(append(append([]byte(nil), a...), extra...), a...), 1<<20)
	if err != nil || string(got) != "first secondfirst " {
		t.Fatalf("members: %q, %v", got, err)
	}
	if _, err := Decompress(nil, Gzip, append(append([]byte(nil), a...), 'j'), 1<<20); err == nil {
		t.Fatal("trailing garbage accepted")
	}
	if _, err := Decompress(nil, Gzip, append(append([]byte(nil), a...), a...), 11); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("two members over the limit: %v", err)
	}
	for _, in := range [][]byte{gzipExtraClaiming(), append(append([]byte(nil), a...), gzipExtraClaiming()...)} {
		if _, err := Decompress(nil, Gzip, in, 1<<20); err == nil {
			t.Fatal("an extra field longer than the data was accepted")
		}
		if n := allocatedBy(20, func() { _, _ = Decompress(nil, Gzip, in, 1<<20) }); n > 8<<10 && !raceEnabled {
			t.Fatalf("an extra field claiming 64 KiB allocates %d bytes", n)
		}
	}
}

// TestHostileInputsAllocateWhatArrives: no hostile input of any codec
// allocates much more than what arrived and what it decodes to (the
// buffer grows geometrically), whatever its headers claim.
func TestHostileInputsAllocateWhatArrives(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops decoders under the race detector")
	}
	for _, tc := range hostileCases(t) {
		if bytes.HasSuffix([]byte(tc.name), []byte("zeros-to-limit")) || tc.name == "identity/plain" {
			continue // a real 64 MiB output
		}
		out := 0
		n := allocatedBy(5, func() {
			dst, _ := Decompress(nil, tc.codec, tc.wire, hostileLimit)
			out = len(dst)
		})
		// The zstd window is charged, not avoided (TestZstdWindowCharged).
		allowed := uint64(3*out + len(tc.wire) + 64<<10)
		if tc.codec == Zstd {
			allowed += zstdMaxWindow + 512<<10
		}
		if n > allowed {
			t.Errorf("%s: %d wire bytes decoding to %d allocate %d bytes per call", tc.name, len(tc.wire), out, n)
		}
	}
}

// FuzzSnappyBlockLen: whatever the input, snappyBlockLen accepts only
// blocks that decode (s2.Decode) to the length it returns; and every block
// a Snappy encoder writes is accepted.
func FuzzSnappyBlockLen(f *testing.F) {
	for _, src := range [][]byte{nil, []byte("hello hello hello hello"), make([]byte, 300)} {
		f.Add(s2.EncodeSnappy(nil, src))
	}
	f.Add(snappyBlockClaiming(60 << 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		if n, err := snappyBlockLen(data, 1<<20); err == nil {
			out, err := s2.Decode(nil, data)
			if err != nil || len(out) != n {
				t.Fatalf("accepted a block s2 cannot decode to %d bytes: %v", n, err)
			}
		}
		block := s2.EncodeSnappy(nil, data)
		if n, err := snappyBlockLen(block, 1<<20); err != nil || n != len(data) {
			t.Fatalf("refused a Snappy block of %d bytes: %d, %v", len(data), n, err)
		}
	})
}

// FuzzZstdHistoryBytes: whatever the input, the walk does not panic, and a
// stream the decoder reads in full is walked.
func FuzzZstdHistoryBytes(f *testing.F) {
	z, _ := Compress(nil, Zstd, []byte("hello hello hello hello"))
	f.Add(z)
	f.Add(zstdClaiming(60 << 20))
	f.Add([]byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, werr := zstdHistoryBytes(data)
		if werr != nil {
			return
		}
		if _, err := Decompress(nil, Zstd, data, 1<<20); err != nil && errors.Is(err, errZstdCorrupt) {
			t.Fatalf("walked, then refused as unwalkable: %v", err)
		}
	})
}
