// Command wirebytes measures bytes on the wire per item for the same
// requests in each format that carries OTLP data between a Collector and a
// backend, on real data (../shared/datasets, the OpenTelemetry demo), and
// the server's CPU per item to decompress our stream against per-message
// zstd:
//
//	go run ./cmd/wirebytes -dir ../../shared/datasets -half second
//
// Each dataset file is cut, in order, into requests of two sizes: as an
// SDK sends them (traces: one resource's spans, at most 512, the batch span
// processor's max export batch; metrics: one resource's metrics, every
// point of an export interval, as a periodic reader sends them) and as a
// Collector's batch processor sends them (8192 items, across resources).
// Items are spans, or metric data points. With -half the requests are split
// in two halves in order: tune on the first, report on the second.
//
// The formats, each counted as the bytes of its gRPC messages (the 5-byte
// gRPC prefix included, HTTP/2 framing not):
//
//   - OTLP, each message zstd: the Collector's otlp exporter with
//     compression: zstd (klauspost/compress, its default level).
//   - otlp-lite stream: the request envelopes of the streaming mode through
//     one compression.StreamEncoder per stream (stateful zstd), with the
//     default window and level (or -window, -level), rotated every -rotate
//     requests as the server rotates a stream.
//   - otlp-lite stream, columns: the same, each envelope first through
//     the columnar transform (otlpcolumns.Encoder, one per stream; the
//     server's CPU figure includes its inverse, otlpcolumns.Decoder): what
//     a client sends by default (docs/streaming.md, "Columns").
//   - OTel-Arrow: one otel-arrow arrow_record Producer across the requests
//     (stream mode), each BatchArrowRecords message compressed alone by
//     zstd level 5, the otel-arrow gRPC compressor's default level; with
//     the Arrow IPC payload uncompressed (payload_compression: none) and
//     with the producer's IPC zstd (the otelarrowexporter is not served by
//     the module proxy, so both are shown).
//   - STEF: one splunk/stef writer across the requests, flushed at the end
//     of each request (a frame per request; the stefexporter flushes on a
//     timer, which can only merge frames), without and with its zstd.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	arrowcfg "github.com/open-telemetry/otel-arrow/go/pkg/config"
	arrowrecord "github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"
	"github.com/splunk/stef/go/otel/otelstef"
	stefmetrics "github.com/splunk/stef/go/pdata/metrics"
	steftraces "github.com/splunk/stef/go/pdata/traces"
	"github.com/splunk/stef/go/pkg"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/bench/internal/cputime"
	"github.com/otlp-lite/otlp-lite/bench/internal/dataset"
	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

type config struct {
	level, window, rotate, rounds int
	half                          string
	quick                         bool
	extraLevel                    int
	dict                          []byte
	// profile, if set, is where the CPU profile of the columns' decoding
	// goes (one file per table and cutting: profile.signal.N).
	profile string
	// dump, if set, is where the columns' messages go, decompressed (a
	// uvarint length before each).
	dump string
	// sig is the signal of the file being measured: the columnar
	// transform's schema.
	sig otlpcolumns.Signal
}

func main() {
	dir := flag.String("dir", "../../shared/datasets", "the datasets directory")
	var cfg config
	flag.StringVar(&cfg.half, "half", "all", "which requests: all, first (tune on it) or second (report on it)")
	flag.IntVar(&cfg.level, "level", 0, "zstd level of our stream's encoder (0: the default, otlpclient's)")
	flag.IntVar(&cfg.window, "window", compression.DefaultStreamWindow, "our stream's window")
	flag.IntVar(&cfg.rotate, "rotate", 1000, "requests per stream (the server's -stream-max-requests)")
	flag.IntVar(&cfg.rounds, "rounds", 3, "decompression rounds for the CPU figures")
	only := flag.String("only", "", "only the files whose name contains this")
	flag.BoolVar(&cfg.quick, "quick", false, "only OTLP zstd and our stream (for tuning)")
	flag.IntVar(&cfg.extraLevel, "extra-level", 0, "also a row of our stream at this level (0: none)")
	flag.StringVar(&cfg.dump, "dump-columns", "", "write the columns' messages, decompressed, to this file (.1.0 for traces SDK-sized, .2.1 for metrics at 8,192), for otlpcolumns' BenchmarkDecodeDemo")
	flag.StringVar(&cfg.profile, "decode-profile", "", "write the CPU profile of the columns' inverse transform to this file (.1.0 for traces SDK-sized, .2.1 for metrics at 8,192: by signal and cutting)")
	flag.Parse()
	files, err := filepath.Glob(filepath.Join(*dir, "*.zst"))
	if err != nil || len(files) == 0 {
		log.Fatalf("no dataset files in %s", *dir)
	}
	fmt.Printf("Command: `cd bench && go run ./cmd/wirebytes %s`\n\n", strings.Join(os.Args[1:], " "))
	for _, f := range files {
		if !strings.Contains(filepath.Base(f), *only) {
			continue
		}
		table(f, cfg)
	}
}

type row struct {
	name  string
	bytes []float64 // per cutting: bytes per item
}

func table(file string, cfg config) {
	metrics := strings.Contains(filepath.Base(file), "metrics")
	records, err := dataset.Read(file)
	if err != nil {
		log.Fatal(err)
	}
	cuts := dataset.Cuttings(metrics)
	cfg.sig = otlpcolumns.Traces
	if metrics {
		cfg.sig = otlpcolumns.Metrics
	}
	rows := []row{
		{name: "OTLP, each gRPC message zstd (the Collector's otlp exporter)"},
		{name: fmt.Sprintf("otlp-lite stream, stateful zstd (level %d, %d KiB window)", levelOf(cfg), cfg.window>>10)},
		{name: fmt.Sprintf("otlp-lite stream, columns + stateful zstd (level %d, %d KiB window)", levelOf(cfg), cfg.window>>10)},
		{name: "OTel-Arrow (IPC uncompressed, gRPC zstd level 5)"},
		{name: "OTel-Arrow (IPC zstd, gRPC zstd level 5)"},
		{name: "STEF (no compression)"},
		{name: "STEF (its zstd)"},
	}
	if cfg.extraLevel != 0 {
		rows = append(rows, row{name: fmt.Sprintf("otlp-lite stream, stateful zstd (level %d, %d KiB window)", cfg.extraLevel, cfg.window>>10)})
	}
	var notes []string
	var cpuRows, checkRows, encRows []string
	for _, c := range cuts {
		cut, err := dataset.Cut(records, metrics, c.Items, c.ByResource)
		if err != nil {
			log.Fatal(err)
		}
		if cut, err = dataset.Half(cut, cfg.half); err != nil {
			log.Fatal(err)
		}
		var reqs [][]byte
		n, plain := 0, 0
		for _, r := range cut {
			reqs = append(reqs, r.Proto)
			n += r.Items
			plain += len(r.Proto)
		}
		per, perMsgs := perMessage(reqs)
		stream, streamMsgs := ourStream(reqs, cfg, false)
		cols, colsMsgs := ourStream(reqs, cfg, true)
		sizes := []int{per, stream, cols, 0, 0, 0, 0}
		if !cfg.quick {
			sizes[3] = arrowBytes(reqs, metrics, false)
			sizes[4] = arrowBytes(reqs, metrics, true)
			sizes[5] = stefBytes(reqs, metrics, pkg.CompressionNone)
			sizes[6] = stefBytes(reqs, metrics, pkg.CompressionZstd)
		}
		if cfg.extraLevel != 0 {
			x := cfg
			x.level = cfg.extraLevel
			b, _ := ourStream(reqs, x, false)
			sizes = append(sizes, b)
		}
		for i := range rows {
			rows[i].bytes = append(rows[i].bytes, float64(sizes[i])/float64(n))
		}
		notes = append(notes, fmt.Sprintf("%s: %d requests, %d items, %.0f items and %.1f KB of plain OTLP per request",
			c.Name, len(reqs), n, float64(n)/float64(len(reqs)), float64(plain)/float64(len(reqs))/1e3))
		if cfg.dump != "" {
			var b []byte
			for _, m := range decompressed(colsMsgs, cfg, 64<<20) {
				b = append(binary.AppendUvarint(b, uint64(len(m))), m...)
			}
			if err := os.WriteFile(fmt.Sprintf("%s.%d.%d", cfg.dump, cfg.sig, len(cpuRows)), b, 0o644); err != nil {
				log.Fatal(err)
			}
		}
		if cfg.profile != "" {
			profileDecode(fmt.Sprintf("%s.%d.%d", cfg.profile, cfg.sig, len(cpuRows)), colsMsgs, cfg)
		}
		sc := decodeCPU(perMsgs, streamMsgs, colsMsgs, cfg)
		perCPU, streamCPU, colsCPU, invCPU := sc.per, sc.stream, sc.cols, sc.inv
		f := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) / float64(cfg.rounds) }
		checkRows = append(checkRows, fmt.Sprintf("| %s | %.0f | %.0f | %.2fx | %.0f | %.2fx | %d of %d |", c.Name, f(sc.perV), f(sc.streamV), float64(sc.streamV)/float64(sc.perV),
			f(sc.colsV), float64(sc.colsV)/float64(sc.perV), sc.vouched, sc.msgs))
		cpuRows = append(cpuRows, fmt.Sprintf("| %s | %.0f | %.0f | %.2fx | %.0f | %.2fx | %.0f |", c.Name, f(perCPU), f(streamCPU), float64(streamCPU)/float64(perCPU),
			f(colsCPU), float64(colsCPU)/float64(perCPU), f(invCPU)))
		perEnc := cputime.Of(cfg.rounds, func() { perMessage(reqs) })
		streamEnc := cputime.Of(cfg.rounds, func() { ourStream(reqs, cfg, false) })
		colsEnc := cputime.Of(cfg.rounds, func() { ourStream(reqs, cfg, true) })
		encRows = append(encRows, fmt.Sprintf("| %s | %.0f | %.0f | %.2fx | %.0f | %.2fx |", c.Name, f(perEnc), f(streamEnc), float64(streamEnc)/float64(perEnc),
			f(colsEnc), float64(colsEnc)/float64(perEnc)))
	}
	signal, item := "traces", "span"
	if metrics {
		signal, item = "metrics", "data point"
	}
	fmt.Printf("**%s** (`%s`, requests: %s)\n\n", signal, filepath.Base(file), dataset.HalfName(cfg.half))
	fmt.Printf("| format | bytes/%s, SDK-sized | vs OTLP zstd | bytes/%s, 8192 per request | vs OTLP zstd |\n|---|---|---|---|---|\n", item, item)
	for _, r := range rows {
		fmt.Printf("| %s | %.2f | %.2fx | %.2f | %.2fx |\n", r.name, r.bytes[0], r.bytes[0]/rows[0].bytes[0], r.bytes[1], r.bytes[1]/rows[0].bytes[1])
	}
	fmt.Println()
	for _, n := range notes {
		fmt.Printf("- %s\n", n)
	}
	fmt.Printf("\nServer CPU per %s to turn the wire bytes into validated OTLP (ns): OTLP zstd, the decompression and otlpdecode's Check* (the pipeline's validation, without its check-pool hand-off); our stream, the stateful decoder, the envelope and Check*; with columns, the stateful decoder, the inverse transform and the envelope, and Check* only of the messages the columns' decoder does not vouch for (ingest.Pipeline.ExportValidated; how many it vouched for in the last column):\n\n", item)
	fmt.Printf("| requests | OTLP, each message zstd, + check | otlp-lite stream + check | ratio | columns + stream (+ check unless vouched for) | ratio | messages vouched for |\n|---|---|---|---|---|---|---|\n")
	for _, r := range checkRows {
		fmt.Println(r)
	}
	fmt.Printf("\nServer CPU per %s to decompress alone, without the validation (ns; our stream: the stateful decoder and the envelope; with columns, the inverse transform too, alone in the last column):\n\n", item)
	fmt.Printf("| requests | OTLP, each message zstd | otlp-lite stream | ratio | columns + stream | ratio | of which the inverse transform |\n|---|---|---|---|---|---|---|\n")
	for _, r := range cpuRows {
		fmt.Println(r)
	}
	fmt.Printf("\nClient CPU per %s to compress (ns; our stream: the envelope and the stateful encoder; with columns, the transform too):\n\n", item)
	fmt.Printf("| requests | OTLP, each message zstd | otlp-lite stream | ratio | columns + stream | ratio |\n|---|---|---|---|---|---|\n")
	for _, r := range encRows {
		fmt.Println(r)
	}
	fmt.Println()
}

const grpcPrefix = 5

// perMessage compresses each request alone, as grpc-go's zstd compressor
// of the Collector's otlp exporter does (klauspost/compress, default level).
func perMessage(reqs [][]byte) (int, [][]byte) {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	total := 0
	var out [][]byte
	for _, r := range reqs {
		c := enc.EncodeAll(r, nil)
		out = append(out, c)
		total += len(c) + grpcPrefix
	}
	return total, out
}

// ourStream sends the requests as the streaming mode's client does with
// stateful compression: envelopes through one StreamEncoder per stream,
// and with columns through the columnar transform first.
func ourStream(reqs [][]byte, cfg config, columns bool) (int, [][]byte) {
	total := 0
	var out [][]byte
	var enc *compression.StreamEncoder
	cenc := otlpcolumns.NewEncoder(cfg.sig)
	var ccols []byte
	for i, r := range reqs {
		if i%cfg.rotate == 0 {
			enc = newStreamEncoder(cfg)
			cenc = otlpcolumns.NewEncoder(cfg.sig)
		}
		env, err := otlpclient.AppendEnvelope(nil, uint64(i+1), r)
		if err != nil {
			log.Fatal(err)
		}
		if columns {
			ccols = cenc.Append(ccols[:0], env)
			env = ccols
		}
		m, err := enc.AppendMessage(nil, env)
		if err != nil {
			log.Fatal(err)
		}
		out = append(out, m)
		total += len(m) + grpcPrefix
	}
	return total, out
}

func levelOf(cfg config) int {
	if cfg.level == 0 {
		return compression.DefaultStreamLevel
	}
	return cfg.level
}

func newStreamEncoder(cfg config) *compression.StreamEncoder {
	var enc *compression.StreamEncoder
	var err error
	if cfg.level == 0 {
		enc, err = compression.NewStreamEncoder(cfg.window)
	} else {
		enc, err = compression.NewStreamEncoderLevel(cfg.window, cfg.level)
	}
	if err != nil {
		log.Fatal(err)
	}
	return enc
}

// arrowBytes produces BatchArrowRecords with one Producer across the
// requests and compresses each message alone with zstd level 5, as the
// otel-arrow gRPC compressor does.
func arrowBytes(reqs [][]byte, metrics, ipcZstd bool) int {
	opt := arrowcfg.WithNoZstd()
	if ipcZstd {
		opt = arrowcfg.WithZstd()
	}
	p := arrowrecord.NewProducerWithOptions(opt)
	defer p.Close()
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(5)))
	total := 0
	var buf []byte
	for _, r := range reqs {
		var bar *arrowpb.BatchArrowRecords
		var err error
		if metrics {
			var md pmetric.Metrics
			if md, err = (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(r); err == nil {
				bar, err = p.BatchArrowRecordsFromMetrics(md)
			}
		} else {
			var td ptrace.Traces
			if td, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(r); err == nil {
				bar, err = p.BatchArrowRecordsFromTraces(td)
			}
		}
		if err != nil {
			log.Fatalf("otel-arrow producer: %v", err)
		}
		b, err := proto.Marshal(bar)
		if err != nil {
			log.Fatal(err)
		}
		buf = enc.EncodeAll(b, buf[:0])
		total += len(buf) + grpcPrefix
	}
	return total
}

// stefBytes writes the requests with one STEF writer, flushing after each,
// and counts each flushed chunk as one STEFDataMessage (the gRPC prefix, its
// tef_bytes field's tag and length).
func stefBytes(reqs [][]byte, metrics bool, c pkg.Compression) int {
	var buf pkg.MemChunkWriter
	opts := pkg.WriterOptions{Compression: c}
	var flush func() error
	var write func(r []byte) error
	if metrics {
		w, err := otelstef.NewMetricsWriter(&buf, opts)
		if err != nil {
			log.Fatal(err)
		}
		conv := stefmetrics.OtlpToStefUnsorted{}
		flush = w.Flush
		write = func(r []byte) error {
			md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(r)
			if err != nil {
				return err
			}
			return conv.Convert(md, w)
		}
	} else {
		w, err := otelstef.NewSpansWriter(&buf, opts)
		if err != nil {
			log.Fatal(err)
		}
		conv := steftraces.OtlpToStefUnsorted{}
		flush = w.Flush
		write = func(r []byte) error {
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(r)
			if err != nil {
				return err
			}
			return conv.Convert(td, w)
		}
	}
	total, seen := 0, 0
	for _, r := range reqs {
		if err := write(r); err != nil {
			log.Fatalf("stef writer: %v", err)
		}
		if err := flush(); err != nil {
			log.Fatal(err)
		}
		b := buf.Bytes()
		chunk := len(b) - seen
		seen = len(b)
		total += chunk + grpcPrefix + 1 + len(binary.AppendUvarint(nil, uint64(chunk)))
	}
	return total
}

// serverCPU is what decodeCPU measures, over all its rounds.
type serverCPU struct {
	// per, stream, cols: the decompression alone (per-message zstd; our
	// stream and the envelope; with columns, the inverse transform too),
	// inv the inverse transform alone.
	per, stream, cols, inv time.Duration
	// perV, streamV, colsV: the same and the validation the pipeline
	// makes (otlpdecode's Check*), for columns only of the messages the
	// decoder does not vouch for (vouched of msgs vouched for).
	perV, streamV, colsV time.Duration
	vouched, msgs        int
}

// decodeCPU is the CPU the server spends decompressing: per-message zstd
// through compression.Decompress (the unary path), our stream through one
// StreamDecoder per stream and the envelope's unwrapping, and with columns
// the inverse transform between them; and the inverse transform alone
// (the columns decompressed before the clock); and the first three with
// the validation the pipeline runs on every request (otlpdecode.Check*,
// on the caller's goroutine: the pipeline's hand-off to its check pool is
// not counted) unless, with columns, the decoder vouches for the request
// (handler/stream.go: ingest.Pipeline.ExportValidated). The seven run in
// turn, round by round (interleaved), so that a machine shared with other
// work slows each of them alike.
func decodeCPU(per, stream, cols [][]byte, cfg config) serverCPU {
	limit := 64 << 20
	plain := decompressed(cols, cfg, limit)
	var sc serverCPU
	sc.msgs = len(cols)
	perMessage := func(check bool) {
		var dst []byte
		for _, c := range per {
			var err error
			if dst, err = compression.Decompress(dst[:0], compression.Zstd, c, limit); err != nil {
				log.Fatal(err)
			}
			if check {
				validate(cfg, dst)
			}
		}
	}
	t := interleaved(cfg.rounds,
		func() { perMessage(false) },
		func() { decodeStream(stream, cfg, limit, false, false) },
		func() { decodeStream(cols, cfg, limit, true, false) },
		func() { inverse(plain, cfg, limit) },
		func() { perMessage(true) },
		func() { decodeStream(stream, cfg, limit, false, true) },
		func() { sc.vouched = decodeStream(cols, cfg, limit, true, true) })
	sc.per, sc.stream, sc.cols, sc.inv, sc.perV, sc.streamV, sc.colsV = t[0], t[1], t[2], t[3], t[4], t[5], t[6]
	return sc
}

// checkOpts are the pipeline's default validation options.
var checkOpts otlpdecode.Options

// validate runs the pipeline's validation of a request of cfg.sig.
func validate(cfg config, req []byte) {
	check := otlpdecode.CheckTraces
	if cfg.sig == otlpcolumns.Metrics {
		check = otlpdecode.CheckMetrics
	}
	res, err := check(req, &checkOpts)
	if err != nil || res.Rejected != 0 {
		log.Fatalf("the dataset's request does not validate: %+v, %v", res, err)
	}
}

// interleaved returns the process CPU time (user+system) each of fs
// takes over rounds, after a warm-up run of each, running them in turn
// in each round.
func interleaved(rounds int, fs ...func()) []time.Duration {
	for _, f := range fs {
		f()
	}
	out := make([]time.Duration, len(fs))
	for range rounds {
		for i, f := range fs {
			out[i] += cpuOf(f)
		}
	}
	return out
}

// cpuOf returns the process CPU time (user+system, getrusage) f takes.
func cpuOf(f func()) time.Duration {
	var a, b syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &a)
	f()
	syscall.Getrusage(syscall.RUSAGE_SELF, &b)
	t := func(r syscall.Rusage) time.Duration { return time.Duration(r.Utime.Nano() + r.Stime.Nano()) }
	return t(b) - t(a)
}

// decompressed returns the stream's messages decompressed (the columns'
// transformed messages), a StreamDecoder per stream as the server's.
func decompressed(cols [][]byte, cfg config, limit int) [][]byte {
	var plain [][]byte
	var dec *compression.StreamDecoder
	for i, m := range cols {
		if i%cfg.rotate == 0 {
			if dec != nil {
				dec.Close()
			}
			dec = newStreamDecoder(cfg)
		}
		b, err := dec.DecodeMessage(nil, m, otlpcolumns.MaxEncodedLen(limit), nil)
		if err != nil {
			log.Fatal(err)
		}
		plain = append(plain, b)
	}
	dec.Close()
	return plain
}

// inverse runs the inverse transform over a stream's decompressed
// messages, a decoder per stream as the server's.
func inverse(plain [][]byte, cfg config, limit int) {
	var out []byte
	var cdec *otlpcolumns.Decoder
	for i, m := range plain {
		if i%cfg.rotate == 0 {
			cdec = otlpcolumns.NewDecoder(cfg.sig)
		}
		var err error
		if out, err = cdec.Decode(out[:0], m, limit, nil); err != nil {
			log.Fatal(err)
		}
	}
}

// profileDecode writes the CPU profile of the columns' inverse transform
// alone (the stream's messages decompressed before it starts), run
// rounds × 20 times, for samples enough, to file.
func profileDecode(file string, cols [][]byte, cfg config) {
	limit := 64 << 20
	plain := decompressed(cols, cfg, limit)
	f, err := os.Create(file)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	for range 20 * cfg.rounds {
		inverse(plain, cfg, limit)
	}
	pprof.StopCPUProfile()
}

// decodeStream decodes a stream's messages as the server does: a
// StreamDecoder per stream, with columns a Decoder too, the envelope
// unwrapped; with check, each request validated (Check*) unless the
// columns' decoder vouched for it. It returns how many it vouched for.
func decodeStream(stream [][]byte, cfg config, limit int, columns, check bool) (vouched int) {
	var dst, plain []byte
	var dec *compression.StreamDecoder
	cdec := otlpcolumns.NewDecoder(cfg.sig)
	for i, m := range stream {
		if i%cfg.rotate == 0 {
			if dec != nil {
				dec.Close()
			}
			dec = newStreamDecoder(cfg)
			cdec = otlpcolumns.NewDecoder(cfg.sig)
		}
		var err error
		if dst, err = dec.DecodeMessage(dst[:0], m, otlpcolumns.MaxEncodedLen(limit), nil); err != nil {
			log.Fatal(err)
		}
		env := dst
		ok := false
		if columns {
			if plain, err = cdec.Decode(plain[:0], dst, limit, nil); err != nil {
				log.Fatal(err)
			}
			env = plain
			_, ok = cdec.Vouched()
		}
		_, req, err := otlp.UnwrapEnvelope(env)
		if err != nil {
			log.Fatal(err)
		}
		if ok {
			vouched++
		} else if check {
			validate(cfg, req)
		}
	}
	dec.Close()
	return vouched
}

func newStreamDecoder(cfg config) *compression.StreamDecoder {
	dec, err := compression.NewStreamDecoder(cfg.window)
	if err != nil {
		log.Fatal(err)
	}
	return dec
}
