package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// loadgen runs `otlp-lite loadgen`: it sends synthetic trace batches shaped
// like the OTLP proposal's benchmark (otlpclient.SpanGenerator) to an OTLP
// receiver, in one of three modes, and reports throughput and client CPU.
//
//   - unary: -concurrency workers, each making one standard OTLP Export
//     call at a time (the proposal's "sequential" with -concurrency 1).
//   - unary-async: up to -concurrency Export calls in flight at once (the
//     proposal's "concurrent", 20 in its benchmark).
//   - stream: -concurrency otlplite.v1.StreamExporter streams, each with up
//     to -max-pending unacknowledged requests.
//
// All of them share one HTTP/2 connection. unary and unary-async work
// against any OTLP/gRPC receiver; stream needs otlp-lite.
func loadgen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint", "localhost:4317", "receiver address, host:port (h2c)")
	mode := fs.String("mode", "stream", "unary (one call at a time per worker), unary-async (-concurrency calls in flight) or stream (otlplite.v1.StreamExporter)")
	spansPerBatch := fs.Int("spans-per-batch", 500, "spans in each batch (request)")
	attrs := fs.Int("attrs", 10, "attributes per span: two ints, then strings with random 1-50 character keys and 1-20 character values")
	batches := fs.Int("batches", 0, "number of batches to send; 0 means run for -duration")
	duration := fs.Duration("duration", 10*time.Second, "how long to send when -batches is 0")
	concurrency := fs.Int("concurrency", 1, "unary: workers; unary-async: calls in flight; stream: streams")
	maxPending := fs.Int("max-pending", 256, "stream: unacknowledged requests per stream (cover the bandwidth-delay product)")
	codecName := fs.String("compression", "none", "request compression: none, gzip or zstd")
	latency := fs.Duration("latency", 0, "round-trip time added to the connection by a delaying dialer (e.g. 20ms)")
	window := fs.Int("receive-window", 0, "client HTTP/2 receive window per stream in bytes (0: 4 MiB); responses only")
	requestTimeout := fs.Duration("request-timeout", 30*time.Second, "drop a request not acknowledged within this time")
	rebalanceRequests := fs.Int("rebalance-requests", 0, "stream: half-close and replace a stream after this many requests (0: never)")
	rebalanceTimeout := fs.Duration("rebalance-timeout", 0, "stream: half-close and replace a stream after this age (0: never)")
	pregenerate := fs.Int("pregenerate", 16, "distinct batches generated before sending and then cycled, so generation is not measured")
	seed := fs.Uint64("seed", 1, "random seed of the span generator")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "loadgen: unexpected arguments %q\n", fs.Args())
		return 2
	}
	codec := compression.Identity
	if *codecName != "none" {
		var err error
		if codec, err = compression.Parse(*codecName); err != nil || (codec != compression.Gzip && codec != compression.Zstd) {
			fmt.Fprintf(stderr, "loadgen: -compression must be none, gzip or zstd, not %q\n", *codecName)
			return 2
		}
	}
	if *mode != "unary" && *mode != "unary-async" && *mode != "stream" {
		fmt.Fprintf(stderr, "loadgen: -mode must be unary, unary-async or stream, not %q\n", *mode)
		return 2
	}
	if *concurrency < 1 || *pregenerate < 1 || *spansPerBatch < 1 || *attrs < 0 {
		fmt.Fprintln(stderr, "loadgen: -concurrency, -pregenerate and -spans-per-batch must be positive, -attrs not negative")
		return 2
	}
	if err := checkEndpoint(*endpoint, ""); err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		return 2
	}

	gen := otlpclient.NewSpanGenerator(*spansPerBatch, *attrs, *seed)
	payloads := make([][]byte, *pregenerate)
	size := 0
	for i := range payloads {
		payloads[i] = gen.AppendBatch(nil)
		size += len(payloads[i])
	}
	fmt.Fprintf(stderr, "loadgen: %s to %s, %d spans x %d attributes per batch (%d bytes on average), concurrency %d, compression %s, added latency %v\n",
		*mode, *endpoint, *spansPerBatch, *attrs, size/len(payloads), *concurrency, *codecName, *latency)

	cfg := otlpclient.Config{
		Endpoint:       *endpoint,
		Signal:         otlpclient.Traces,
		Compression:    codec,
		RequestTimeout: *requestTimeout,
		HTTP:           otlpclient.NewHTTPClient(nil, *latency, *window),
	}

	// Issue batch numbers until -batches or -duration (or Ctrl-C) says stop.
	interrupt, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	stopCtx := interrupt
	if *batches == 0 {
		var cancel context.CancelFunc
		stopCtx, cancel = context.WithTimeout(interrupt, *duration)
		defer cancel()
	}
	// lastErr is the last failure of a batch, for the summary.
	var lastErr atomic.Pointer[error]
	noteErr := func(err error) {
		if err != nil {
			lastErr.Store(&err)
		}
	}
	var issued atomic.Int64
	take := func() ([]byte, bool) {
		if stopCtx.Err() != nil {
			return nil, false
		}
		n := issued.Add(1)
		if *batches > 0 && n > int64(*batches) {
			return nil, false
		}
		return payloads[int(n-1)%len(payloads)], true
	}

	var stats func() otlpclient.Stats
	var run func()
	streamErr := func() error { return nil } // what ended the last failed stream
	switch *mode {
	case "unary", "unary-async":
		u := otlpclient.NewUnaryExporter(cfg)
		stats = u.Stats
		run = func() {
			var wg sync.WaitGroup
			if *mode == "unary" {
				// Each worker waits for its call before the next. An
				// interrupt ends the calls in flight (counted as dropped):
				// retrying a receiver that is down could take the whole
				// -request-timeout.
				for range *concurrency {
					wg.Go(func() {
						for req, ok := take(); ok; req, ok = take() {
							noteErr(u.Export(interrupt, req))
						}
					})
				}
				wg.Wait()
				return
			}
			// unary-async: one producer keeps -concurrency calls in
			// flight. Calls in flight at the end of -duration still
			// finish: the summary counts acknowledged batches.
			sem := make(chan struct{}, *concurrency)
			for req, ok := take(); ok; req, ok = take() {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					noteErr(u.Export(interrupt, req))
				})
			}
			wg.Wait()
		}
	case "stream":
		exps := make([]*otlpclient.StreamExporter, *concurrency)
		for i := range exps {
			exps[i] = otlpclient.NewStreamExporter(otlpclient.StreamConfig{
				Config:            cfg,
				MaxPending:        *maxPending,
				RebalanceRequests: *rebalanceRequests,
				RebalanceTimeout:  *rebalanceTimeout,
			})
		}
		stats = func() otlpclient.Stats {
			var s otlpclient.Stats
			for _, e := range exps {
				s = s.Add(e.Stats())
			}
			return s
		}
		streamErr = func() error {
			for _, e := range exps {
				if err := e.LastError(); err != nil {
					return err
				}
			}
			return nil
		}
		run = func() {
			var wg sync.WaitGroup
			for _, e := range exps {
				wg.Go(func() {
					for {
						req, ok := take()
						if !ok {
							break
						}
						if err := e.Send(interrupt, req, noteErr); err != nil {
							break
						}
					}
					// Drain what is in flight, unless interrupted.
					ctx, cancel := context.WithTimeout(interrupt, *requestTimeout)
					defer cancel()
					if err := e.Close(ctx); err != nil {
						fmt.Fprintf(stderr, "loadgen: %v\n", err)
					}
				})
			}
			wg.Wait()
		}
	}

	cpu0 := cpuTime()
	start := time.Now()
	done := make(chan struct{})
	go func() { run(); close(done) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last uint64
progress:
	for {
		select {
		case <-done:
			break progress
		case <-tick.C:
			s := stats()
			fmt.Fprintf(stderr, "%5.0fs acknowledged=%d (%d/s) sent=%d retried=%d dropped=%d\n",
				time.Since(start).Seconds(), s.Acknowledged, s.Acknowledged-last, s.Sent, s.Retried, s.Dropped)
			last = s.Acknowledged
		}
	}
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	s := stats()
	perWall := float64(s.Acknowledged) / wall.Seconds()
	perCPU := 0.0
	if cpu > 0 {
		perCPU = float64(s.Acknowledged) / cpu.Seconds()
	}
	fmt.Fprintf(stdout, "mode=%s latency=%v concurrency=%d compression=%s wall=%.2fs client_cpu=%.2fs batches=%d batches/s=%.1f spans/s=%.0f batches/client_cpu_s=%.1f acknowledged=%d retried=%d dropped=%d failed=%d duplicates=%d streams=%d rejected_spans=%d\n",
		*mode, *latency, *concurrency, *codecName, wall.Seconds(), cpu.Seconds(), s.Acknowledged, perWall,
		perWall*float64(*spansPerBatch), perCPU, s.Acknowledged, s.Retried, s.Dropped, s.Failed, s.Duplicates, s.Streams, s.Rejected)
	status := 0
	if s.Dropped > 0 || s.Failed > 0 {
		fmt.Fprintf(stderr, "loadgen: %d batches dropped, %d failed\n", s.Dropped, s.Failed)
		status = 1
	}
	if s.Acknowledged == 0 {
		fmt.Fprintln(stderr, "loadgen: nothing was acknowledged")
		status = 1
	}
	if interrupt.Err() != nil {
		if *batches > 0 {
			fmt.Fprintf(stderr, "loadgen: interrupted with %d of %d batches acknowledged\n", s.Acknowledged, *batches)
		} else {
			fmt.Fprintf(stderr, "loadgen: interrupted after %.1fs of %v\n", wall.Seconds(), *duration)
		}
		status = 1
	}
	if status != 0 {
		err := streamErr()
		if p := lastErr.Load(); err == nil && p != nil {
			err = *p
		}
		if err != nil {
			fmt.Fprintf(stderr, "loadgen: last error: %s\n", describeSendError(err, "if the receiver uses TLS: loadgen speaks only h2c"))
		}
	}
	return status
}

// cpuTime is the user plus system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
