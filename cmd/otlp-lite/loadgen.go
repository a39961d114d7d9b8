package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/internal/wait"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// Bounds of loadgen's flags. Pointed at a receiver with no other flag,
// loadgen sends loadgenDefaultBatches requests and stops: enough for the
// latency percentiles to mean something (p99 of 100), about 25 MB with the
// default batch shape, so a mistaken run cannot fill the receiver's disk
// (a run for -duration as fast as the receiver takes wrote 2.3 GB in 3 s
// into a `make run` server). A run without a bound on requests must say
// how long it runs (-duration), and -rate bounds its bytes.
const (
	loadgenDefaultBatches = 100
	// loadgenMaxRequest is the largest request loadgen builds: the
	// largest any receiver takes by default (otlp-lite's
	// -grpc-max-recv-msg-size; the Collector's is 4 MiB).
	loadgenMaxRequest = grpcwire.DefaultMaxRecvMsgSize
	// loadgenMaxPregenerated bounds the memory the pregenerated
	// batches take.
	loadgenMaxPregenerated = 1 << 30
	// loadgenMaxConcurrency bounds the streams or calls in flight: beyond
	// it they only queue in the client for the receiver's HTTP/2
	// SETTINGS_MAX_CONCURRENT_STREAMS (otlp-lite: 250 by default).
	loadgenMaxConcurrency = 1000
)

// loadgenOptions are loadgen's flags.
type loadgenOptions struct {
	endpoint           string
	mode               string
	spansPerBatch      int
	attrs              int
	batches            int
	duration           time.Duration
	rate               float64
	concurrency        int
	maxPending         int
	latency            time.Duration
	window             int
	requestTimeout     time.Duration
	rebalanceRequests  int
	rebalanceTimeout   time.Duration
	pregenerate        int
	idempotencyKeys    bool
	seed               uint64
	summaryJSON        *string
	client             clientFlags
	estimatedBatchSize int // from one generated span, for the checks
}

// loadgen runs `otlp-lite loadgen`: it sends synthetic trace batches shaped
// like the OTLP proposal's benchmark (otlpclient.SpanGenerator) to an OTLP
// receiver, in one of three modes, says what it is about to send before it
// starts, and ends with a summary (loadgenSummary).
//
//   - unary: -concurrency workers, each making one standard OTLP Export
//     call at a time (the proposal's "sequential" with -concurrency 1).
//   - unary-async: up to -concurrency Export calls in flight at once (the
//     proposal's "concurrent", 20 in its benchmark).
//   - stream: -concurrency otlplite.v1.StreamExporter streams, each with up
//     to -max-pending unacknowledged requests.
//
// All of them share one HTTP/2 connection, h2c or TLS (clientFlags).
// unary and unary-async work against any OTLP/gRPC receiver; stream needs
// otlp-lite.
func loadgen(args []string, stdout, stderr io.Writer) int {
	o, code, ok := parseLoadgenFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	// The progress loop and the stream workers' close errors write to
	// stderr from several goroutines.
	stderr = &syncWriter{w: stderr}
	gen := otlpclient.NewSpanGenerator(o.spansPerBatch, o.attrs, o.seed)
	payloads := make([][]byte, o.pregenerate)
	size := 0
	for i := range payloads {
		payloads[i] = gen.AppendBatch(nil)
		size += len(payloads[i])
	}
	fmt.Fprintln(stderr, o.announce(size/len(payloads)))

	var rec clientRecorder
	cfg := otlpclient.Config{
		Endpoint:       o.endpoint,
		TLS:            o.client.tls,
		Signal:         otlpclient.Traces,
		Compression:    o.client.codec,
		RequestTimeout: o.requestTimeout,
		HTTP:           o.client.wrap(otlpclient.NewHTTPClientFor(o.endpoint, o.client.tls, o.latency, o.window)),
		OnRetry:        func(err error, _ time.Duration) { rec.refusal(err) },
		// A random key per batch, kept across its retries; on a stream,
		// a random client identity per stream (its requests' ids).
		IdempotencyKeys: o.idempotencyKeys,
	}

	// Issue batch numbers until -batches or -duration (or Ctrl-C) says
	// stop, at most -rate a second.
	interrupt, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	stopCtx := interrupt
	if o.duration > 0 {
		var cancel context.CancelFunc
		stopCtx, cancel = context.WithTimeout(interrupt, o.duration)
		defer cancel()
	}
	// lastErr is the last failure of a batch, for the summary.
	var lastErr atomic.Pointer[error]
	var issued atomic.Int64
	start := time.Now()
	take := func() ([]byte, bool) {
		if stopCtx.Err() != nil {
			return nil, false
		}
		n := issued.Add(1)
		if o.batches > 0 && n > int64(o.batches) {
			return nil, false
		}
		if o.rate > 0 {
			due := start.Add(time.Duration(float64(n-1) / o.rate * float64(time.Second)))
			if d := time.Until(due); d > 0 && !wait.For(stopCtx, d) {
				return nil, false
			}
		}
		return payloads[int(n-1)%len(payloads)], true
	}
	// done records a request's outcome.
	done := func(req []byte, sent time.Time) func(error) {
		return func(err error) {
			switch {
			case err == nil:
				rec.delivered(len(req), time.Since(sent))
				return
			case interrupt.Err() == nil:
				// An interrupted request is no refusal; it is
				// counted as dropped.
				rec.refusal(err)
			}
			lastErr.Store(&err)
		}
	}

	var stats func() otlpclient.Stats
	var run func()
	streamErr := func() error { return nil } // what ended the last failed stream
	switch o.mode {
	case "unary", "unary-async":
		u := otlpclient.NewUnaryExporter(cfg)
		stats = u.Stats
		export := func(req []byte) { sent := time.Now(); done(req, sent)(u.Export(interrupt, req)) }
		run = func() {
			var wg sync.WaitGroup
			if o.mode == "unary" {
				// Each worker waits for its call before the next. An
				// interrupt ends the calls in flight (counted as dropped):
				// retrying a receiver that is down could take the whole
				// -request-timeout.
				for range o.concurrency {
					wg.Go(func() {
						for req, ok := take(); ok; req, ok = take() {
							export(req)
						}
					})
				}
				wg.Wait()
				return
			}
			// unary-async: one producer keeps -concurrency calls in
			// flight. Calls in flight at the end of -duration still
			// finish: the summary counts acknowledged batches.
			sem := make(chan struct{}, o.concurrency)
			for req, ok := take(); ok; req, ok = take() {
				sem <- struct{}{}
				wg.Go(func() {
					defer func() { <-sem }()
					export(req)
				})
			}
			wg.Wait()
		}
	case "stream":
		exps := make([]*otlpclient.StreamExporter, o.concurrency)
		for i := range exps {
			sc := otlpclient.StreamConfig{
				Config:            cfg,
				MaxPending:        o.maxPending,
				RebalanceRequests: o.rebalanceRequests,
				RebalanceTimeout:  o.rebalanceTimeout,
			}
			sc.DisableStreamCompression = !o.client.streamCompression
			sc.DisableStreamColumns = !o.client.streamColumns
			exps[i] = otlpclient.NewStreamExporter(sc)
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
						if err := e.Send(interrupt, req, done(req, time.Now())); err != nil {
							break
						}
					}
					// Drain what is in flight, unless interrupted.
					ctx, cancel := context.WithTimeout(interrupt, o.requestTimeout)
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
	finished := make(chan struct{})
	go func() { run(); close(finished) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last uint64
progress:
	for {
		select {
		case <-finished:
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
	if o.mode == "stream" && rec.refusals() == 0 {
		// The stream exporter retries FailedRetryable acknowledgements
		// and broken streams by itself: what still holds requests back
		// is its last failure.
		rec.refusal(streamErr())
	}
	sum := rec.summary(clientSummary{
		Command: "loadgen", Endpoint: o.endpoint,
		Requests:     int64(s.Acknowledged + s.Failed + s.Dropped),
		Acknowledged: int64(s.Acknowledged), Failed: int64(s.Failed), Dropped: int64(s.Dropped),
		Items: int64(s.Acknowledged) * int64(o.spansPerBatch), RejectedItems: int64(s.Rejected),
		Retries: int64(s.Retried),
	}, wall)
	perCPU := 0.0
	if cpu > 0 {
		perCPU = float64(s.Acknowledged) / cpu.Seconds()
	}
	headline := fmt.Sprintf("loadgen: -mode %s, -concurrency %d, %d spans x %d attributes per request, compression %s, added latency %v; client CPU %.2fs (%.1f requests per CPU second)",
		o.mode, o.concurrency, o.spansPerBatch, o.attrs, o.client.compression, o.latency, cpu.Seconds(), perCPU)
	status := 0
	if err := printSummary(stdout, *o.summaryJSON, headline, sum); err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		status = 1
	}
	if s.Dropped > 0 || s.Failed > 0 {
		fmt.Fprintf(stderr, "loadgen: %d batches dropped, %d failed\n", s.Dropped, s.Failed)
		status = 1
	}
	if s.Acknowledged == 0 {
		fmt.Fprintln(stderr, "loadgen: nothing was acknowledged")
		status = 1
	}
	if interrupt.Err() != nil {
		if o.batches > 0 {
			fmt.Fprintf(stderr, "loadgen: interrupted with %d of %d batches acknowledged\n", s.Acknowledged, o.batches)
		} else {
			fmt.Fprintf(stderr, "loadgen: interrupted after %.1fs of %v\n", wall.Seconds(), o.duration)
		}
		status = 1
	}
	if status != 0 {
		err := streamErr()
		if p := lastErr.Load(); err == nil && p != nil {
			err = *p
		}
		if err != nil {
			advice := ""
			if o.client.tls == nil {
				advice = "if the receiver uses TLS, add -tls (and -tls-ca if its certificate is not signed by a system CA)"
			}
			fmt.Fprintf(stderr, "loadgen: last error: %s\n", describeSendError(err, advice))
		}
	}
	return status
}

// parseLoadgenFlags parses and checks loadgen's flags: every value and
// every combination that cannot make sense is refused here, with one line
// and exit status 2, before anything is sent.
func parseLoadgenFlags(args []string, stdout, stderr io.Writer) (o loadgenOptions, code int, ok bool) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.endpoint, "endpoint", "localhost:4317", "receiver address, host:port, or unix:PATH for a Unix socket")
	fs.StringVar(&o.mode, "mode", "unary", "unary (standard OTLP/gRPC Export calls, one at a time per worker; any receiver), unary-async (-concurrency calls in flight) or stream (otlplite.v1.StreamExporter; otlp-lite only)")
	fs.IntVar(&o.spansPerBatch, "spans-per-batch", 500, "spans in each batch (request); 500 is the OTLP proposal's benchmark")
	fs.IntVar(&o.attrs, "attrs", 10, "attributes per span: two ints, then strings with random 1-50 character keys and 1-20 character values")
	fs.IntVar(&o.batches, "batches", loadgenDefaultBatches, "number of batches (requests) to send, then stop; 0: no limit, -duration ends the run. The default is a bounded run (about 25 MB of spans, enough for a p99 latency) that cannot fill a receiver's disk by mistake; -duration without -batches lifts it")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (0: when -batches are sent); giving it without -batches lifts the default limit on requests")
	fs.Float64Var(&o.rate, "rate", 0, "at most this many requests a second (0: as fast as they are acknowledged)")
	fs.IntVar(&o.concurrency, "concurrency", 1, fmt.Sprintf("unary: workers; unary-async: calls in flight; stream: streams (1 to %d)", loadgenMaxConcurrency))
	fs.IntVar(&o.maxPending, "max-pending", 256, "stream: unacknowledged requests per stream (cover the bandwidth-delay product)")
	fs.DurationVar(&o.latency, "latency", 0, "round-trip time added to the connection by a delaying dialer (e.g. 20ms)")
	fs.IntVar(&o.window, "receive-window", 0, "client HTTP/2 receive window per stream in bytes (0: 4 MiB); responses only")
	fs.DurationVar(&o.requestTimeout, "request-timeout", 30*time.Second, "drop a request not acknowledged within this time, retries included")
	fs.IntVar(&o.rebalanceRequests, "rebalance-requests", 0, "stream: half-close and replace a stream after this many requests (0: never)")
	fs.DurationVar(&o.rebalanceTimeout, "rebalance-timeout", 0, "stream: half-close and replace a stream after this age (0: never)")
	fs.BoolVar(&o.idempotencyKeys, "idempotency-keys", false, "send each batch with a random idempotency key, the same on its retries (a stream: a random client id), so that a receiver keeping a window of keys (otlp-lite) stores a batch once though a lost acknowledgement made it retry; off by default so that figures compare with other receivers")
	fs.IntVar(&o.pregenerate, "pregenerate", 16, "distinct batches generated before sending and then cycled, so generation is not measured")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed of the span generator")
	o.summaryJSON = summaryFlag(fs)
	o.client.register(fs, false, "none", "gzip", "zstd")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return o, code, false
	}
	if err := o.check(fs); err != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", err)
		return o, 2, false
	}
	return o, 0, true
}

func (o *loadgenOptions) check(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := checkEndpoint(o.endpoint, ""); err != nil {
		return err
	}
	if err := o.client.check(fs, o.endpoint); err != nil {
		return err
	}
	set := o.client.explicit
	switch o.mode {
	case "unary", "unary-async":
		for _, name := range []string{"max-pending", "rebalance-requests", "rebalance-timeout"} {
			if set[name] {
				return fmt.Errorf("-%s applies to -mode stream only, not %s", name, o.mode)
			}
		}
	case "stream":
	default:
		return fmt.Errorf("-mode must be unary, unary-async or stream, not %q", o.mode)
	}
	switch {
	case o.concurrency < 1 || o.concurrency > loadgenMaxConcurrency:
		return fmt.Errorf("-concurrency %d: want 1 to %d", o.concurrency, loadgenMaxConcurrency)
	case o.spansPerBatch < 1:
		return errors.New("-spans-per-batch must be positive")
	case o.attrs < 0 || o.attrs > 1000:
		return fmt.Errorf("-attrs %d: want 0 to 1000", o.attrs)
	case o.pregenerate < 1:
		return errors.New("-pregenerate must be positive")
	case o.batches < 0 || o.duration < 0 || o.rate < 0:
		return errors.New("-batches, -duration and -rate cannot be negative")
	case o.maxPending < 1:
		return errors.New("-max-pending must be positive")
	case o.latency < 0 || o.window < 0 || o.rebalanceRequests < 0 || o.rebalanceTimeout < 0:
		return errors.New("-latency, -receive-window, -rebalance-requests and -rebalance-timeout cannot be negative")
	case o.requestTimeout <= 0:
		return errors.New("-request-timeout must be positive")
	}
	if set["duration"] && !set["batches"] {
		o.batches = 0 // -duration alone: run for that long
	}
	if o.batches == 0 && o.duration == 0 {
		return errors.New("-batches 0 needs -duration: nothing would end the run (Ctrl-C is not a plan)")
	}
	// One span's batch, times the spans: an estimate within ~10% that
	// does not build a huge batch to find out it is too large.
	one := len(otlpclient.NewSpanGenerator(1, o.attrs, o.seed).AppendBatch(nil))
	o.estimatedBatchSize = one * o.spansPerBatch
	if o.spansPerBatch > loadgenMaxRequest/100 || o.estimatedBatchSize > loadgenMaxRequest {
		return fmt.Errorf("-spans-per-batch %d with -attrs %d makes requests of about %s, more than receivers accept (%s)",
			o.spansPerBatch, o.attrs, fmtBytes(int64(o.estimatedBatchSize)), fmtBytes(loadgenMaxRequest))
	}
	if int64(o.estimatedBatchSize)*int64(o.pregenerate) > loadgenMaxPregenerated {
		return fmt.Errorf("-pregenerate %d batches of about %s would take more than %s of memory",
			o.pregenerate, fmtBytes(int64(o.estimatedBatchSize)), fmtBytes(loadgenMaxPregenerated))
	}
	return nil
}

// announce is the line loadgen prints before it sends anything: what,
// how much, where and how.
func (o *loadgenOptions) announce(batchSize int) string {
	// The most the run can send: -batches, or -rate for -duration.
	requests := int64(o.batches)
	if o.rate > 0 && o.duration > 0 {
		byRate := int64(o.rate*o.duration.Seconds()) + 1
		if requests == 0 || byRate < requests {
			requests = byRate
		}
	}
	var amount string
	switch {
	case o.batches > 0 && requests == int64(o.batches):
		amount = fmt.Sprintf("%d requests (~%s)", requests, fmtBytes(requests*int64(batchSize)))
		if o.duration > 0 {
			amount += fmt.Sprintf(" within %v", o.duration)
		}
	case requests > 0:
		amount = fmt.Sprintf("up to %d requests (~%s) in %v", requests, fmtBytes(requests*int64(batchSize)), o.duration)
	default:
		amount = fmt.Sprintf("requests for %v with no bound on bytes (-rate or -batches would bound them)", o.duration)
	}
	how := map[string]string{
		"unary":       fmt.Sprintf("OTLP/gRPC Export calls (%d at a time)", o.concurrency),
		"unary-async": fmt.Sprintf("OTLP/gRPC Export calls (%d in flight)", o.concurrency),
		"stream":      fmt.Sprintf("otlp-lite export streams (%d, up to %d requests pending on each)", o.concurrency, o.maxPending),
	}[o.mode]
	rate := "as fast as they are acknowledged"
	if o.rate > 0 {
		rate = fmt.Sprintf("at most %g requests/s", o.rate)
	}
	return fmt.Sprintf("loadgen: about to send traces to %s: %s, %d spans x %d attributes per request (~%s), by %s over %s, %s",
		o.endpoint, amount, o.spansPerBatch, o.attrs, fmtBytes(int64(batchSize)), how, o.client.describe(), rate)
}

// fmtBytes writes n in SI units, as the summary's MB/s.
func fmtBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// cpuTime is the user plus system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// syncWriter serialises writes to w from several goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
