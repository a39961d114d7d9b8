package stefreceiver

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"
)

// chunks collects what a STEF writer writes.
type chunks struct{ buf bytes.Buffer }

func (c *chunks) WriteChunk(header, content []byte) error {
	c.buf.Write(header)
	c.buf.Write(content)
	return nil
}

// stefHeader returns the fixed header the library's writer writes for
// compr: the first chunk it writes.
func stefHeader(t testing.TB, compr pkg.Compression) []byte {
	t.Helper()
	var first []byte
	cw := chunkFunc(func(h, c []byte) error {
		if first == nil {
			first = append(append([]byte{}, h...), c...)
		}
		return nil
	})
	if _, err := otelstef.NewMetricsWriter(cw, pkg.WriterOptions{Compression: compr}); err != nil {
		t.Fatal(err)
	}
	return first
}

type chunkFunc func(h, c []byte) error

func (f chunkFunc) WriteChunk(h, c []byte) error { return f(h, c) }

// zstdFrame appends a compressed STEF frame: flags, uncompressed size,
// compressed size, data.
func zstdFrame(dst []byte, flags pkg.FrameFlags, usize int, data []byte) []byte {
	dst = append(dst, byte(flags))
	dst = binary.AppendUvarint(dst, uint64(usize))
	dst = binary.AppendUvarint(dst, uint64(len(data)))
	return append(dst, data...)
}

// hostileWindowFrame is a zstd frame declaring a 256 MiB window (Window
// Descriptor exponent 18: 2^(10+18)), then a raw block of n bytes, as a
// STEF frame's data.
func hostileWindowFrame(n int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 18 << 3}
	h := uint32(n) << 3 // raw block, not last
	b = append(b, byte(h), byte(h>>8), byte(h>>16))
	return append(b, make([]byte, n)...)
}

// A zstd STEF stream whose frame declares a 256 MiB window is refused
// INVALID_ARGUMENT, saying so, before the window is allocated: the
// server allocates less than 16 MiB for it in all (the library's own
// decoder allocated the declared window, 256 MiB).
func TestHostileZstdWindowRefused(t *testing.T) {
	addr, sink := serve(t, Config{})
	hdr := stefHeader(t, pkg.CompressionZstd)
	stream := zstdFrame(append([]byte{}, hdr...), 0, 10, hostileWindowFrame(10))
	p := dial(t, addr)
	p.sendFirst(t, "Metrics")
	p.recv(t)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p.sendChunk(t, stream)
	p.w.Close()
	st := p.status()
	runtime.ReadMemStats(&after)
	if !strings.HasPrefix(st, "3 ") || !strings.Contains(st, "window larger than 8 MiB") {
		t.Fatalf("status %q, want INVALID_ARGUMENT naming the window", st)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got >= 16<<20 {
		t.Fatalf("allocated %d bytes for a hostile window, want < 16 MiB", got)
	}
	t.Logf("allocated %d bytes serving a stream declaring a 256 MiB window", after.TotalAlloc-before.TotalAlloc)
	if sink.items != 0 {
		t.Fatal("stored")
	}
}

// zstdStream is a STEF-framed zstd stream as the library's writer makes
// it (one zstd stream, flushed per frame, its default 8 MiB window) over
// frames of incompressible content; it returns the stream and the plain
// content.
func zstdStream(t testing.TB, frames, size int) (stream, plain []byte) {
	var zb bytes.Buffer
	enc, err := zstd.NewWriter(&zb)
	if err != nil {
		t.Fatal(err)
	}
	stream = stefHeader(t, pkg.CompressionZstd)
	rnd := rand.NewChaCha8([32]byte{1})
	for range frames {
		c := make([]byte, size)
		rnd.Read(c)
		plain = append(plain, c...)
		enc.Write(c)
		enc.Flush()
		stream = zstdFrame(stream, 0, size, zb.Bytes())
		zb.Reset()
	}
	return stream, plain
}

// What the decoder holds once its window is full, with the stream's body
// buffer, is under StateCostZstd (the heap growth with the decoder alive,
// after a GC).
func TestStateCostZstdCoversDecoder(t *testing.T) {
	stream, plain := zstdStream(t, 12, 1<<20)
	src := bytes.NewReader(stream)
	// Two collections empty the pool of decoders (sync.Pool): the one
	// measured is made here, its window allocated while it is measured.
	runtime.GC()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	u := newUnzstd(src)
	var out bytes.Buffer
	out.Grow(len(plain) + 1<<20)
	outBase := out.Cap()
	n, err := io.Copy(&out, u)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc) - int64(outBase)
	runtime.KeepAlive(u)
	if out.Cap() != outBase {
		t.Fatal("output buffer grew: the figure is off")
	}
	if n < int64(len(plain)) {
		t.Fatal("nothing decoded")
	}
	t.Logf("a zstd stream's decoder holds %d bytes (window full), StateCostZstd %d", held, StateCostZstd)
	// The charge covers the stream's body buffer too (bufferedBody).
	if held+bodyBuffer > StateCostZstd {
		t.Fatalf("decoder holds %d bytes and the body buffer %d, more than StateCostZstd %d", held, bodyBuffer, StateCostZstd)
	}
}

// What unzstd passes on is the plain STEF stream: the header saying
// CompressionNone, then each frame as flags, size, content.
func TestUnzstdRewritesFrames(t *testing.T) {
	stream, plain := zstdStream(t, 3, 1000)
	out, err := io.ReadAll(newUnzstd(bytes.NewReader(stream)))
	if err != nil {
		t.Fatal(err)
	}
	want := stefHeader(t, pkg.CompressionNone)
	for i := range 3 {
		want = append(want, 0)
		want = binary.AppendUvarint(want, 1000)
		want = append(want, plain[i*1000:(i+1)*1000]...)
	}
	if !bytes.Equal(out, want) {
		t.Fatalf("rewritten stream differs: %d bytes, want %d", len(out), len(want))
	}
}

// A frame whose zstd data decodes to more, or fewer, bytes than it
// declares ends the stream, saying so.
func TestUnzstdSizeMismatch(t *testing.T) {
	var zb bytes.Buffer
	enc, _ := zstd.NewWriter(&zb)
	enc.Write(make([]byte, 100))
	enc.Flush()
	hdr := stefHeader(t, pkg.CompressionZstd)
	for _, tc := range []struct {
		usize int
		want  string
	}{{50, "decodes to more"}, {200, "ends before"}} {
		stream := zstdFrame(append([]byte{}, hdr...), 0, tc.usize, zb.Bytes())
		// A next frame, whose content the excess would otherwise be.
		stream = zstdFrame(stream, 0, 10, nil)
		_, err := io.ReadAll(newUnzstd(bytes.NewReader(stream)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("declared %d of 100: err %v, want %q", tc.usize, err, tc.want)
		}
	}
}

// FuzzUnzstd feeds arbitrary bytes to the rewriting reader: no panic,
// and never more output than the frames declare (seeds: the library's
// writer's streams, plain and zstd).
func FuzzUnzstd(f *testing.F) {
	for _, compr := range []pkg.Compression{pkg.CompressionNone, pkg.CompressionZstd} {
		var c chunks
		w, err := otelstef.NewMetricsWriter(&c, pkg.WriterOptions{Compression: compr})
		if err != nil {
			f.Fatal(err)
		}
		writePoints(f, w, 20, 0)
		w.Flush()
		f.Add(c.buf.Bytes())
	}
	f.Add(zstdFrame(stefHeader(f, pkg.CompressionZstd), 0, 10, hostileWindowFrame(10)))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, _ := io.Copy(io.Discard, io.LimitReader(newUnzstd(bytes.NewReader(data)), 256<<20))
		if n >= 256<<20 {
			t.Fatalf("passed on %d bytes from %d", n, len(data))
		}
		// The whole decoder, as the receiver uses it.
		DecodeMetrics(nil, bytes.NewReader(data), 1<<20)
	})
}
