// Command streamzstd measures the export stream's stateful zstd against
// OTLP with each message compressed alone by zstd (what the Collector's
// otlp exporter sends with compression: zstd), on real data: bytes on the
// wire per item, and the server's CPU per item to decompress (the rest of
// the request path is the same for both).
//
//	go run ./cmd/streamzstd -file ../../shared/datasets/hipstershop-oteltraces.zst -items 512
//
// The file (../shared/datasets/README.md) is a zstd stream of records, each
// a 4-byte big-endian length and a TracesData or MetricsData message. The
// command cuts its resources, scopes and spans (or metrics) in order into
// export requests of about -items items (spans; data points for metrics,
// whole metrics at a time), as an SDK's batch processor or a Collector's
// batch processor sends them, then sends them through each compressor in
// order, rotating the stream every 1000 requests as the server does.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/easyproto"
	"github.com/klauspost/compress/zstd"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

func main() {
	file := flag.String("file", "", "dataset file (../shared/datasets)")
	items := flag.Int("items", 512, "items per request (spans, or data points)")
	rotate := flag.Int("rotate", 1000, "requests per stream (the server's -stream-max-requests)")
	rounds := flag.Int("rounds", 5, "decompression rounds for the CPU figure")
	level := flag.Int("level", compression.DefaultStreamLevel, "zstd level of the stream's encoder (1-22; klauspost/compress has four: 1, 3, 7-8, 9+)")
	window := flag.Int("window", compression.DefaultStreamWindow, "the stream's window")
	byResource := flag.Bool("by-resource", false, "also end a request at the end of each resource, as an SDK sends one process's items (then -items bounds a request)")
	flag.Parse()
	metrics := strings.Contains(filepath.Base(*file), "metrics")
	reqs, total := cut(readRecords(*file), metrics, *items, *byResource)
	plain := 0
	for _, r := range reqs {
		plain += len(r)
	}

	// OTLP per-message zstd.
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	var per [][]byte
	perBytes := 0
	for _, r := range reqs {
		c := enc.EncodeAll(r, nil)
		per = append(per, c)
		perBytes += len(c) + 5 // the gRPC prefix
	}
	// The stream: envelopes through one encoder per stream.
	var stream [][]byte
	streamBytes := 0
	var senc *compression.StreamEncoder
	for i, r := range reqs {
		if i%*rotate == 0 {
			senc, _ = compression.NewStreamEncoderLevel(*window, *level)
		}
		env, _ := otlpclient.AppendEnvelope(nil, uint64(i+1), r)
		m, err := senc.AppendMessage(nil, env)
		if err != nil {
			log.Fatal(err)
		}
		stream = append(stream, m)
		streamBytes += len(m) + 5
	}

	perEnc := cpu(*rounds, func() {
		var dst []byte
		for _, r := range reqs {
			dst = enc.EncodeAll(r, dst[:0])
		}
	})
	streamEnc := cpu(*rounds, func() {
		var dst, env []byte
		var e *compression.StreamEncoder
		for i, r := range reqs {
			if i%*rotate == 0 {
				e, _ = compression.NewStreamEncoderLevel(*window, *level)
			}
			env, _ = otlpclient.AppendEnvelope(env[:0], uint64(i+1), r)
			dst, _ = e.AppendMessage(dst[:0], env)
		}
	})

	limit := 64 << 20
	perCPU := cpu(*rounds, func() {
		var dst []byte
		for _, c := range per {
			var err error
			if dst, err = compression.Decompress(dst[:0], compression.Zstd, c, limit); err != nil {
				log.Fatal(err)
			}
		}
	})
	streamCPU := cpu(*rounds, func() {
		var dst []byte
		var dec *compression.StreamDecoder
		for i, m := range stream {
			if i%*rotate == 0 {
				if dec != nil {
					dec.Close()
				}
				dec, _ = compression.NewStreamDecoder(*window)
			}
			var err error
			if dst, err = dec.DecodeMessage(dst[:0], m, limit, nil); err != nil {
				log.Fatal(err)
			}
			if _, _, err := otlp.UnwrapEnvelope(dst); err != nil {
				log.Fatal(err)
			}
		}
		dec.Close()
	})
	n := float64(total)
	fmt.Printf("%s: %d requests of at most about %d items (%d items, %.1f MB plain, %.0f B/item)\n",
		filepath.Base(*file), len(reqs), *items, total, float64(plain)/1e6, float64(plain)/n)
	per1 := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n / float64(*rounds) }
	fmt.Printf("| encoding | bytes/item | vs per-message zstd | server CPU ns/item (decompress) | client CPU ns/item (compress) |\n|---|---|---|---|---|\n")
	fmt.Printf("| OTLP, each message zstd (level 3) | %.2f | 1.00x | %.0f | %.0f |\n", float64(perBytes)/n, per1(perCPU), per1(perEnc))
	fmt.Printf("| stream, stateful zstd (level %d, %d KiB window) | %.2f | %.2fx | %.0f | %.0f |\n", *level, *window>>10, float64(streamBytes)/n, float64(streamBytes)/float64(perBytes), per1(streamCPU), per1(streamEnc))
}

// cpu returns the process CPU time (user+system) f takes, run rounds times.
func cpu(rounds int, f func()) time.Duration {
	f() // warm up pools
	var a, b syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &a)
	for range rounds {
		f()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &b)
	t := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return t(b) - t(a)
}

func readRecords(path string) [][]byte {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	var out [][]byte
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(d, hdr[:]); err != nil {
			if err == io.EOF {
				return out
			}
			log.Fatal(err)
		}
		b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(d, b); err != nil {
			log.Fatal(err)
		}
		out = append(out, b)
	}
}

// cut splits TracesData or MetricsData messages (field 1: resources; a
// resource's field 2: scopes; a scope's field 2: spans or metrics) into
// export requests (the same fields) of about items items, in order.
func cut(records [][]byte, metrics bool, items int, byResource bool) ([][]byte, int) {
	var reqs [][]byte
	var cur []byte // the request being built
	count, total := 0, 0
	var resHead, scopeHead []byte // a resource's and scope's other fields
	var leaves []byte             // the current scope's leaves in cur
	flushScope := func() {
		if len(leaves) == 0 {
			return
		}
		scope := append(append([]byte{}, scopeHead...), leaves...)
		res := append(append([]byte{}, resHead...), tag(2, scope)...)
		cur = append(cur, tag(1, res)...)
		leaves = nil
	}
	flushReq := func() {
		flushScope()
		if len(cur) > 0 {
			reqs = append(reqs, cur)
		}
		cur, count = nil, 0
	}
	var fc easyproto.FieldContext
	for _, rec := range records {
		for src := rec; len(src) > 0; {
			var err error
			if src, err = fc.NextField(src); err != nil {
				log.Fatal(err)
			}
			rb, ok := fc.MessageData()
			if fc.FieldNum != 1 || !ok {
				continue
			}
			resHead = others(rb, 2)
			for rs := rb; len(rs) > 0; {
				rs, _ = fc.NextField(rs)
				sb, ok := fc.MessageData()
				if fc.FieldNum != 2 || !ok {
					continue
				}
				scopeHead = others(sb, 2)
				for ss := sb; len(ss) > 0; {
					ss, _ = fc.NextField(ss)
					leaf, ok := fc.MessageData()
					if fc.FieldNum != 2 || !ok {
						continue
					}
					n := 1
					if metrics {
						n = points(leaf)
					}
					leaves = append(leaves, tag(2, leaf)...)
					count += n
					total += n
					if count >= items {
						flushReq()
					}
				}
				flushScope()
			}
			if byResource {
				flushReq()
			}
		}
	}
	flushReq()
	return reqs, total
}

// others returns msg's fields other than number skip, as they are.
func others(msg []byte, skip uint32) []byte {
	var out []byte
	var fc easyproto.FieldContext
	for src := msg; len(src) > 0; {
		rest, err := fc.NextField(src)
		if err != nil {
			log.Fatal(err)
		}
		if fc.FieldNum != skip {
			out = append(out, src[:len(src)-len(rest)]...)
		}
		src = rest
	}
	return out
}

// points counts a Metric's data points: field 1 of its gauge (5), sum (7),
// histogram (9), exponential histogram (10) or summary (11).
func points(metric []byte) int {
	n := 0
	var fc, fd easyproto.FieldContext
	for src := metric; len(src) > 0; {
		src, _ = fc.NextField(src)
		switch fc.FieldNum {
		case 5, 7, 9, 10, 11:
			d, _ := fc.MessageData()
			for s := d; len(s) > 0; {
				s, _ = fd.NextField(s)
				if fd.FieldNum == 1 {
					n++
				}
			}
		}
	}
	return max(n, 1)
}

func tag(field uint64, b []byte) []byte {
	out := binary.AppendUvarint(nil, field<<3|2)
	out = binary.AppendUvarint(out, uint64(len(b)))
	return append(out, b...)
}
