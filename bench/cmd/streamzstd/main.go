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
	"flag"
	"fmt"
	"log"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/otlp-lite/otlp-lite/bench/internal/cputime"
	"github.com/otlp-lite/otlp-lite/bench/internal/dataset"
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
	records, err := dataset.Read(*file)
	if err != nil {
		log.Fatal(err)
	}
	cut, err := dataset.Cut(records, metrics, *items, *byResource)
	if err != nil {
		log.Fatal(err)
	}
	var reqs [][]byte
	total := 0
	for _, r := range cut {
		reqs = append(reqs, r.Proto)
		total += r.Items
	}
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

	perEnc := cputime.Of(*rounds, func() {
		var dst []byte
		for _, r := range reqs {
			dst = enc.EncodeAll(r, dst[:0])
		}
	})
	streamEnc := cputime.Of(*rounds, func() {
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
	perCPU := cputime.Of(*rounds, func() {
		var dst []byte
		for _, c := range per {
			var err error
			if dst, err = compression.Decompress(dst[:0], compression.Zstd, c, limit); err != nil {
				log.Fatal(err)
			}
		}
	})
	streamCPU := cputime.Of(*rounds, func() {
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
