// Package streamdec benchmarks the server's side of the export stream's
// stateful zstd (compression.StreamDecoder) against per-message zstd
// (compression.Decompress, the unary path) on the real requests of
// ../shared/datasets, cut as bench/cmd/wirebytes cuts them (the second
// half, not tuned on): per plain byte and per item.
//
//	cd bench && go test -run '^$' -bench . -benchmem -count 6 ./streamdec
//
// It skips when the datasets are absent.
package streamdec

import (
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/otlp-lite/otlp-lite/bench/internal/dataset"
	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

type shape struct {
	name         string
	per, stream  [][]byte
	items, plain int
}

var (
	mu     sync.Mutex
	shapes = map[string]*shape{}
)

// load returns a signal's requests of one cutting (SDK-sized: by
// resource, at most 512 spans or every point of a resource; batch: 8,192
// items across resources, as wirebytes cuts them), the second half (not
// tuned on), compressed both ways: each request alone with klauspost's
// default level (the Collector's otlp exporter), and as envelopes through
// one StreamEncoder at its defaults. It builds only what a benchmark asks
// for, so that a run under callgrind pays for one shape.
func load(b *testing.B, sig, cutting string) *shape {
	mu.Lock()
	defer mu.Unlock()
	key := sig + "/" + cutting
	if s := shapes[key]; s != nil {
		return s
	}
	dir := dataset.Dir()
	if dir == "" {
		b.Skip("no shared/datasets (set OTLP_LITE_DATASETS)")
	}
	records, err := dataset.Read(filepath.Join(dir, dataset.Files[sig]))
	if err != nil {
		b.Fatal(err)
	}
	metrics := sig == "metrics"
	items, byResource := 8192, false
	if cutting == "SDK" {
		items, byResource = 512, true
		if metrics {
			items = 1 << 30
		}
	}
	cut, err := dataset.Cut(records, metrics, items, byResource)
	if err != nil {
		b.Fatal(err)
	}
	cut = cut[len(cut)/2:]
	s := &shape{name: key}
	penc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	senc, err := compression.NewStreamEncoder(compression.DefaultStreamWindow)
	if err != nil {
		b.Fatal(err)
	}
	defer senc.Close()
	for i, r := range cut {
		s.items += r.Items
		s.plain += len(r.Proto)
		s.per = append(s.per, penc.EncodeAll(r.Proto, nil))
		env, err := otlpclient.AppendEnvelope(nil, uint64(i+1), r.Proto)
		if err != nil {
			b.Fatal(err)
		}
		m, err := senc.AppendMessage(nil, env)
		if err != nil {
			b.Fatal(err)
		}
		s.stream = append(s.stream, m)
	}
	shapes[key] = s
	return s
}

const limit = 64 << 20

// BenchmarkDecode is one pass over a shape's requests: each message's
// zstd through the unary path ("per") or DecodeAll ("decodeall"), or one
// stream decoder over them all ("stream"), warm or cold (benchShape). MB/s
// is of plain OTLP; ns/item (wall) and cpu-ns/item (the thread's CPU) per
// span or data point.
func BenchmarkDecode(b *testing.B) {
	for _, sig := range []string{"metrics", "traces"} {
		for _, cutting := range []string{"SDK", "batch"} {
			b.Run(sig+"/"+cutting, func(b *testing.B) { benchShape(b, load(b, sig, cutting)) })
		}
	}
}

// benchShape runs the three decoders over one shape. With cold, every
// pass starts with no output buffer (as bench/cmd/wirebytes's passes do),
// where a server reuses its pooled request buffers.
func benchShape(b *testing.B, s *shape) {
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) { benchPasses(b, s, cold) })
	}
}

func benchPasses(b *testing.B, s *shape, cold bool) {
	b.Run("per", func(b *testing.B) {
		b.SetBytes(int64(s.plain))
		var dst []byte
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu := threadCPU()
		for b.Loop() {
			if cold {
				dst = nil
			}
			for _, c := range s.per {
				var err error
				if dst, err = compression.Decompress(dst[:0], compression.Zstd, c, limit); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b, s, cpu)
	})
	// decodeall: the same frames through DecodeAll into a buffer
	// of their size, the floor for per-message zstd in this library
	// (no history ring, no copy out).
	b.Run("decodeall", func(b *testing.B) {
		b.SetBytes(int64(s.plain))
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(8<<20), zstd.WithDecoderLowmem(true))
		if err != nil {
			b.Fatal(err)
		}
		defer d.Close()
		var dst []byte
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu := threadCPU()
		for b.Loop() {
			if cold {
				dst = nil
			}
			for _, c := range s.per {
				if dst, err = d.DecodeAll(c, dst[:0]); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b, s, cpu)
	})
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(int64(s.plain))
		var dst []byte
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu := threadCPU()
		for b.Loop() {
			if cold {
				dst = nil
			}
			dec, err := compression.NewStreamDecoder(compression.DefaultStreamWindow)
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range s.stream {
				if dst, err = dec.DecodeMessage(dst[:0], m, limit, nil); err != nil {
					b.Fatal(err)
				}
				if _, _, err := otlp.UnwrapEnvelope(dst); err != nil {
					b.Fatal(err)
				}
			}
			dec.Close()
		}
		report(b, s, cpu)
	})
}

// threadCPU returns the CPU time the calling thread has used (user and
// system, getrusage RUSAGE_THREAD): the benchmark's goroutine, locked to
// its thread, without the collector's background workers. It makes the
// cpu-ns/item figure, beside the wall time, which on a machine shared
// with other work counts the time the benchmark waits for a core.
func threadCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// rusageThread is RUSAGE_THREAD (Linux).
const rusageThread = 1

// report adds ns/item (wall) and cpu-ns/item (the thread's CPU time since
// start) to b's results.
func report(b *testing.B, s *shape, start time.Duration) {
	n := float64(b.N) * float64(s.items)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/item")
	if c := threadCPU(); c > 0 {
		b.ReportMetric(float64(c-start)/n, "cpu-ns/item")
	}
}
