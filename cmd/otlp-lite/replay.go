package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/internal/wait"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// Replay timing. Backoff (otlpclient.Backoff, with its jitter) follows the
// OpenTelemetry exporters' defaults (initial 5 s in the collector; shorter
// here because replay is usually pointed at a receiver that is just
// starting) and is capped so that a long outage is retried at least every
// 30 s (or as late as the receiver's RetryInfo or Retry-After asks).
//
// When stopped, replay gives records already sent replayStopGrace to be
// acknowledged: enough for a reachable receiver to answer, so the next run
// need not resend what it stored, and short enough that stopping a replay
// against a receiver that is down does not hang.
const (
	replayInitialBackoff = 500 * time.Millisecond
	replayMaxBackoff     = 30 * time.Second
	replayCommitEvery    = time.Second
	replayProgressEvery  = 2 * time.Second
	replayStopGrace      = time.Second
)

// replay re-sends stored records to an OTLP receiver:
//
//	otlp-lite replay -data-dir DIR -endpoint HOST:PORT [-protocol grpc|stream|http]
//	    [-follow] [-cursor NAME] [-signal all|traces|metrics|logs|profiles]
//	    [-insecure | -tls-ca FILE ...] [-token-file FILE] [-header K:V] [-compression gzip|none]
//
// Each record is sent as one Export request, in stored order, and retried
// until the receiver accepts it, for as long as the receiver answers with a
// retryable failure (OTLP v1.11 "Failures": UNAVAILABLE and friends over
// gRPC, 429/502/503/504 over HTTP), or cannot be reached, waiting as long as
// the receiver's RetryInfo or Retry-After asks. A record the receiver
// refuses for good (INVALID_ARGUMENT, 400, larger than its message limit) is
// logged with its signal, segment and offset, counted as failed in the
// summary, and skipped; the exit status is then 1.
//
// With -cursor, progress is kept in a durable named cursor in the data
// directory (committed every second and at exit), so a restarted replay
// continues where the last one stopped; without it, every run starts from
// the oldest record. The cursor never passes a record that was not
// acknowledged (or logged as refused), whatever ends the run: stopped by
// SIGINT or SIGTERM with records left unacknowledged, replay says which,
// prints the last send error, and exits 1. Delivery is at least once: after
// a crash, up to a second's worth of records may be sent again.
//
// The connection flags (TLS, token, headers, compression) are loadgen's
// (clientFlags); the run ends with the same summary as loadgen's
// (clientSummary), after the count of records replayed.
func replay(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return replayContext(ctx, args, stdout, stderr)
}

type replayConfig struct {
	dataDir  string
	endpoint string
	protocol string
	follow   bool
	cursor   string
	// allowGaps accepts records retention deleted before they were
	// replayed: counted and reported, but exit status 0.
	allowGaps bool
	signals   []storage.Signal
	timeout   time.Duration
	client    clientFlags
	rec       *clientRecorder // what the summary reports
	// tenantHeader, when set, carries each record's tenant (tenants.go).
	tenantHeader string
}

func replayContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg replayConfig
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.dataDir, "data-dir", "./otlp-data", "directory of the disk store to read")
	fs.StringVar(&cfg.endpoint, "endpoint", "", "receiver to send to, host:port (required)")
	fs.StringVar(&cfg.protocol, "protocol", "grpc", "grpc (OTLP/gRPC), stream (otlp-lite's pipelined streaming mode; for WAN links) or http (OTLP/HTTP with protobuf bodies)")
	fs.BoolVar(&cfg.follow, "follow", false, "after the stored records, keep sending new ones as they arrive, until interrupted")
	fs.StringVar(&cfg.cursor, "cursor", "", "name of a durable cursor: resume from where the last replay with this name stopped")
	fs.BoolVar(&cfg.allowGaps, "allow-gaps", false, "exit 0 although retention deleted records before they were replayed (they are counted and reported either way; without it such a gap makes the exit status 1)")
	signalName := fs.String("signal", "all", "signals to replay: all, traces, metrics, logs or profiles")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "timeout of each export request; with -protocol stream, the longest wait for an acknowledgement while the stream acknowledges nothing, after which it is replaced")
	cfg.client.register(fs, true, "gzip", "none")
	summaryJSON := summaryFlag(fs)
	fs.StringVar(&cfg.tenantHeader, "tenant-header", "", "send each record's tenant in this header (the receiving otlp-lite's -tenant-header, such as X-Scope-OrgID); grpc and http only")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "replay: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if cfg.endpoint == "" {
		fmt.Fprintln(stderr, "replay: -endpoint is required")
		return 2
	}
	plain := "-insecure"
	if cfg.client.insecure {
		plain = ""
	}
	if err := checkEndpoint(cfg.endpoint, plain); err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 2
	}
	if err := cfg.client.check(fs, cfg.endpoint); err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 2
	}
	if cfg.cursor != "" {
		if err := disk.CheckConsumerName(cfg.cursor); err != nil {
			// A path is the usual mistake: the cursor lives in the data
			// directory, under the name given.
			fmt.Fprintf(stderr, "replay: bad -cursor: %v (a name, such as to-other: the cursor is kept in the data directory as cursors/SIGNAL/NAME.cursor)\n", err)
			return 2
		}
	}
	cfg.rec = new(clientRecorder)
	if *signalName == "all" {
		cfg.signals = storage.Signals
	} else {
		sig, err := storage.ParseSignal(*signalName)
		if err != nil {
			fmt.Fprintf(stderr, "replay: bad -signal: %v\n", err)
			return 2
		}
		cfg.signals = []storage.Signal{sig}
	}
	var newSender func(storage.Signal, *replayCounts) sender
	switch cfg.protocol {
	case "grpc":
		newSender = newGRPCSenders(cfg)
	case "http":
		newSender = newHTTPSenders(cfg)
	case "stream":
		if cfg.tenantHeader != "" {
			// A stream carries the headers of its start: one tenant
			// for many records.
			fmt.Fprintln(stderr, "replay: -tenant-header needs -protocol grpc or http: a stream's header cannot change per record")
			return 2
		}
	default:
		fmt.Fprintf(stderr, "replay: unknown -protocol %q: want grpc, stream or http\n", cfg.protocol)
		return 2
	}
	if newSender != nil {
		newSender = recordedSenders(newSender, cfg.rec)
	}
	if st, err := os.Stat(cfg.dataDir); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "replay: no data directory %s\n", cfg.dataDir)
		return 1
	}

	var counts [otlp.MaxSignal + 1]replayCounts
	errc := make(chan error, len(cfg.signals))
	var wg sync.WaitGroup
	for _, sig := range cfg.signals {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cfg.protocol == "stream" {
				errc <- replaySignalStream(ctx, cfg, sig, &counts[sig], stderr)
				return
			}
			errc <- replaySignal(ctx, cfg, sig, newSender(sig, &counts[sig]), &counts[sig], stderr)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(replayProgressEvery)
	defer tick.Stop()
	start := time.Now()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-tick.C:
			fmt.Fprintf(stderr, "replay: %s\n", progressLine(cfg.signals, counts[:], time.Since(start)))
			printLastErrors(stderr, cfg, counts[:])
		}
	}
	close(errc)
	status := 0
	for err := range errc {
		if err != nil {
			fmt.Fprintf(stderr, "replay: %v\n", err)
			status = 1
		}
	}
	var total replayCounts
	for _, sig := range cfg.signals {
		total.add(&counts[sig])
	}
	if status != 0 || total.failed.Load() > 0 {
		printLastErrors(stderr, cfg, counts[:])
	}
	if total.failed.Load() > 0 || total.damaged.Load() > 0 {
		status = 1
	}
	if total.gaps.Load() > 0 && !cfg.allowGaps {
		fmt.Fprintf(stderr, "replay: %s deleted by retention before they were replayed (exit status 1; -allow-gaps accepts such gaps)\n", gapText(total.lost.Load(), total.gaps.Load(), total.unknownGaps.Load()))
		status = 1
	}
	elapsed := time.Since(start)
	headline := fmt.Sprintf("replayed %d records (%d items) to %s in %v: %s",
		total.records.Load(), total.items.Load(), cfg.endpoint, elapsed.Round(time.Millisecond), progressLine(cfg.signals, counts[:], 0))
	if err := printSummary(stdout, *summaryJSON, headline, replaySummary(cfg, counts[:], elapsed)); err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		status = 1
	}
	return status
}

// replaySummary is the summary of a replay: records are its requests.
func replaySummary(cfg replayConfig, counts []replayCounts, elapsed time.Duration) clientSummary {
	s := clientSummary{Command: "replay", Endpoint: cfg.endpoint}
	for _, sig := range cfg.signals {
		c := &counts[sig]
		s.Acknowledged += c.records.Load()
		s.Failed += c.failed.Load()
		s.Items += c.items.Load()
		s.RejectedItems += c.rejected.Load()
		s.LostRecords += c.lost.Load()
		s.Retries += c.retries.Load()
		if e := c.exporter.Load(); e != nil {
			s.Retries += int64(e.Stats().Retried)
		}
	}
	s.Requests = s.Acknowledged + s.Failed
	return cfg.rec.summary(s, elapsed)
}

// recordedSenders wraps the senders that newSender makes so that each
// delivery (its bytes and latency) and each refusal for good is recorded
// for the summary; retried refusals are recorded by OnRetry.
func recordedSenders(newSender func(storage.Signal, *replayCounts) sender, rec *clientRecorder) func(storage.Signal, *replayCounts) sender {
	return func(sig storage.Signal, counts *replayCounts) sender {
		send := newSender(sig, counts)
		return func(ctx context.Context, data []byte) (int64, error) {
			sent := time.Now()
			rejected, err := send(ctx, data)
			switch {
			case err == nil:
				rec.delivered(len(data), time.Since(sent))
			case ctx.Err() == nil: // stopped is not refused
				rec.refusal(err)
			}
			return rejected, err
		}
	}
}

// replayCounts are one signal's progress, read by the progress line while
// the signal's goroutine updates them.
type replayCounts struct {
	records, items atomic.Int64 // accepted by the receiver
	rejected       atomic.Int64 // items the receiver reported as rejected (partial success)
	failed         atomic.Int64 // records refused for good
	retries        atomic.Int64
	damaged        atomic.Int64 // damaged regions skipped
	// Gaps retention made (disk.GapError): how many, the records in them,
	// and how many of them have an unknown size.
	gaps, lost, unknownGaps atomic.Int64
	// failing is the last retryable send failure, nil once a record got
	// through; with -protocol stream, exporter.LastError says it.
	failing  atomic.Pointer[error]
	exporter atomic.Pointer[otlpclient.StreamExporter]
}

func (c *replayCounts) setFailing(err error) {
	if err == nil {
		c.failing.Store(nil)
		return
	}
	c.failing.Store(&err)
}

// lastError is what keeps the signal's records from getting through, nil
// if nothing does.
func (c *replayCounts) lastError() error {
	if e := c.exporter.Load(); e != nil {
		return e.LastError()
	}
	if err := c.failing.Load(); err != nil {
		return *err
	}
	return nil
}

// printLastErrors prints each signal's last send failure, with what to do
// about it when a flag is the usual cause.
func printLastErrors(w io.Writer, cfg replayConfig, counts []replayCounts) {
	advice := ""
	if cfg.client.tls == nil {
		advice = "if the receiver uses TLS, leave out -insecure"
	}
	for _, sig := range cfg.signals {
		if err := counts[sig].lastError(); err != nil {
			fmt.Fprintf(w, "replay: %s: last error: %s\n", sig, describeSendError(err, advice))
		}
	}
}

// checkEndpoint says why endpoint is not the host:port that replay and
// loadgen want. A URL is the usual mistake (OTEL_EXPORTER_OTLP_ENDPOINT is
// one); plainFlag is the flag that turns TLS off, to suggest for http://.
func checkEndpoint(endpoint, plainFlag string) error {
	if scheme, rest, ok := strings.Cut(endpoint, "://"); ok {
		hostPort, _, _ := strings.Cut(rest, "/")
		if at := strings.LastIndexByte(hostPort, '@'); at >= 0 {
			hostPort = hostPort[at+1:] // user:password@ is not shown, nor sent
		}
		use := "-endpoint " + hostPort
		if scheme == "http" && plainFlag != "" {
			use += " " + plainFlag
		}
		return fmt.Errorf("-endpoint %q is a URL, but host:port is wanted: use %s", redact.URL(endpoint), use)
	}
	if _, _, err := net.SplitHostPort(endpoint); err != nil {
		return fmt.Errorf("-endpoint %q is not host:port: %v", redact.URL(endpoint), redact.Hide(err.Error(), redact.URLSecrets(endpoint)...))
	}
	return nil
}

// describeSendError is err with a hint when a flag is the usual cause.
// tlsAdvice is for a failure that a TLS listener causes in a client that
// spoke without TLS ("" if the client used TLS).
func describeSendError(err error, tlsAdvice string) string {
	var notTLS tls.RecordHeaderError
	switch {
	case errors.Is(err, http.ErrSchemeMismatch) || errors.As(err, &notTLS):
		return err.Error() + " (the receiver does not speak TLS there: add -insecure)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return err.Error() + " (is the receiver running, and is -endpoint its address?)"
	case tlsAdvice != "" && (errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "client conn could not be established")):
		// What a TLS listener does with the HTTP/2 preface in clear.
		return err.Error() + " (" + tlsAdvice + ")"
	}
	return err.Error()
}

func (c *replayCounts) add(o *replayCounts) {
	c.records.Add(o.records.Load())
	c.items.Add(o.items.Load())
	c.rejected.Add(o.rejected.Load())
	c.failed.Add(o.failed.Load())
	c.retries.Add(o.retries.Load())
	c.damaged.Add(o.damaged.Load())
	c.gaps.Add(o.gaps.Load())
	c.lost.Add(o.lost.Load())
	c.unknownGaps.Add(o.unknownGaps.Load())
}

// noteGap counts a gap retention made in sig's log and says so on stderr.
func (c *replayCounts) noteGap(w io.Writer, sig storage.Signal, g *disk.GapError) {
	c.gaps.Add(1)
	if g.Records < 0 {
		c.unknownGaps.Add(1)
	} else {
		c.lost.Add(g.Records)
	}
	fmt.Fprintf(w, "replay: %s: %v: they cannot be replayed\n", sig, g)
}

// gapText says what the gaps lost: "75 records" or, with gaps of unknown
// size, "at least 75 records".
func gapText(lost, gaps, unknown int64) string {
	s := fmt.Sprintf("%d records", lost)
	if unknown > 0 {
		s = "at least " + s
	}
	if gaps > 1 {
		s += fmt.Sprintf(" in %d gaps", gaps)
	}
	return s
}

func progressLine(sigs []storage.Signal, counts []replayCounts, elapsed time.Duration) string {
	var b strings.Builder
	for i, sig := range sigs {
		if i > 0 {
			b.WriteString(", ")
		}
		c := &counts[sig]
		fmt.Fprintf(&b, "%s %d records/%d items", sig, c.records.Load(), c.items.Load())
		if n := c.rejected.Load(); n > 0 {
			fmt.Fprintf(&b, " (%d items rejected)", n)
		}
		if n := c.failed.Load(); n > 0 {
			fmt.Fprintf(&b, " (%d records failed)", n)
		}
		if n := c.damaged.Load(); n > 0 {
			fmt.Fprintf(&b, " (%d damaged regions skipped)", n)
		}
		if n := c.gaps.Load(); n > 0 {
			fmt.Fprintf(&b, " (%s deleted by retention before they were replayed)", gapText(c.lost.Load(), n, c.unknownGaps.Load()))
		}
		if n := c.retries.Load(); n > 0 {
			fmt.Fprintf(&b, " (%d retries)", n)
		}
	}
	if elapsed > 0 {
		fmt.Fprintf(&b, " after %v", elapsed.Round(time.Second))
	}
	return b.String()
}

// replaySource reads one signal's records: a disk.Consumer with -cursor,
// so that progress is kept, or a disk.Reader from the oldest record
// without. Position before the first Next is where the run starts. Both
// report records retention deleted before they were read as a
// *disk.GapError.
type replaySource interface {
	Next() (disk.Record, error)
	Position() disk.Position
	CommitTo(disk.Position) error
	Close() error
}

type uncommitted struct{ *disk.Reader }

func (uncommitted) CommitTo(disk.Position) error { return nil }

func openReplaySource(cfg replayConfig, sig storage.Signal) (replaySource, error) {
	if cfg.cursor == "" {
		return uncommitted{disk.NewGapReader(cfg.dataDir, sig)}, nil
	}
	c, err := disk.OpenConsumer(cfg.dataDir, cfg.cursor, sig)
	if errors.Is(err, disk.ErrConsumerInUse) {
		return nil, fmt.Errorf("%s: -cursor %s is in use by another process (a running serve forwarding with it, or another replay): two writers would overwrite each other's progress", sig, cfg.cursor)
	}
	return c, err
}

// stoppedError reports records a stopped run left undelivered: what is
// another run's to send.
func stoppedError(cfg replayConfig, sig storage.Signal, left string) error {
	next := "a replay without -cursor starts over"
	if cfg.cursor != "" {
		next = "the next replay with -cursor " + cfg.cursor + " resumes at the first record not acknowledged"
	}
	return fmt.Errorf("%s: stopped with %s: %s", sig, left, next)
}

func replaySignal(ctx context.Context, cfg replayConfig, sig storage.Signal, send sender, counts *replayCounts, stderr io.Writer) error {
	src, err := openReplaySource(cfg, sig)
	if err != nil {
		return err
	}
	defer src.Close()
	// handled is the position after the last record delivered or refused
	// for good: the cursor may go that far and no further. The source's
	// own position is past the record being sent, which an interrupted
	// run has not delivered.
	handled := src.Position()
	lastCommit := time.Now()
	commit := func() error {
		if err := src.CommitTo(handled); err != nil {
			return fmt.Errorf("%s: %w", sig, err)
		}
		lastCommit = time.Now()
		return nil
	}
	for {
		if time.Since(lastCommit) >= replayCommitEvery {
			if err := commit(); err != nil {
				return err
			}
		}
		rec, err := src.Next()
		if err == io.EOF {
			if err := commit(); err != nil {
				return err
			}
			if !cfg.follow || !wait.For(ctx, followPoll) {
				return nil
			}
			continue
		}
		if errors.Is(err, disk.ErrCorrupt) {
			counts.damaged.Add(1)
			fmt.Fprintf(stderr, "replay: %s: skipped damaged data: %v\n", sig, err)
			handled = src.Position()
			continue
		}
		if g, ok := errors.AsType[*disk.GapError](err); ok {
			counts.noteGap(stderr, sig, g)
			handled = src.Position()
			continue
		}
		if err != nil {
			return errors.Join(fmt.Errorf("%s: %w", sig, err), commit())
		}
		rejected, err := send(withRecordTenant(ctx, cfg, rec), rec.Data)
		if err != nil {
			if ctx.Err() != nil {
				return errors.Join(stoppedError(cfg, sig, fmt.Sprintf("the record at %s:%d not accepted", rec.Segment, rec.Offset)), commit())
			}
			if tr, ok := errors.AsType[*errTarget](err); ok {
				return errors.Join(fmt.Errorf("%s: %w", sig, targetRefusal(fmt.Sprintf("%s:%d", rec.Segment, rec.Offset), tr.err)), commit())
			}
			counts.failed.Add(1)
			fmt.Fprintf(stderr, "replay: %s: record at %s:%d refused for good, skipped: %v\n", sig, rec.Segment, rec.Offset, err)
			handled = src.Position()
			continue
		}
		counts.setFailing(nil)
		counts.records.Add(1)
		counts.items.Add(int64(rec.Items))
		counts.rejected.Add(rejected)
		handled = src.Position()
	}
}

// errTarget wraps a refusal of the client or the endpoint rather than of the
// record: the target would refuse every record the same way, so replay
// stops instead of skipping them all.
type errTarget struct{ err error }

func (e *errTarget) Error() string { return e.err.Error() }
func (e *errTarget) Unwrap() error { return e.err }

// targetRefusal is the error that stops a replay at the record at where.
func targetRefusal(where string, err error) error {
	return fmt.Errorf("the target refused the record at %s as it would refuse every record (%v): check -endpoint, -protocol and the target's credentials; nothing was skipped, the next run resumes there", where, err)
}

// errPermanent wraps failures that retrying cannot fix.
type errPermanent struct{ err error }

func (e errPermanent) Error() string { return e.err.Error() }
func (e errPermanent) Unwrap() error { return e.err }

// sender sends one signal's Export request until the receiver accepts it,
// refuses it for good (errPermanent, or *errTarget when it would refuse
// every record) or ctx ends, and returns the number of items the receiver
// rejected (partial success). Retryable failures are retried by
// otlpclient's loop, as replayClientConfig sets it up.
type sender func(ctx context.Context, data []byte) (int64, error)

// replayClientConfig is the otlpclient configuration of one signal's
// records: retried until delivered or ctx ends (never dropped on a
// timeout), each attempt bounded by -timeout, each retry counted and its
// failure kept as the signal's last error.
func replayClientConfig(cfg replayConfig, sig storage.Signal, counts *replayCounts) otlpclient.Config {
	c := otlpclient.Config{
		Endpoint:       cfg.endpoint,
		TLS:            cfg.client.tls,
		Compression:    cfg.client.codec,
		Signal:         sig,
		RequestTimeout: -1,
		AttemptTimeout: cfg.timeout,
		Backoff:        otlpclient.Backoff{Initial: replayInitialBackoff, Max: replayMaxBackoff},
		OnRetry: func(err error, _ time.Duration) {
			if ae, ok := errors.AsType[*otlpclient.AttemptError](err); ok {
				err = ae.Err
			}
			counts.setFailing(err)
			counts.retries.Add(1)
			cfg.rec.refusal(err)
		},
	}
	return c
}

// newGRPCSenders returns the OTLP/gRPC senders' constructor: an
// otlpclient.UnaryExporter for each signal, all on one connection.
func newGRPCSenders(cfg replayConfig) func(storage.Signal, *replayCounts) sender {
	httpc := tenantClient(cfg, cfg.client.wrap(otlpclient.NewHTTPClient(cfg.client.tls, 0, 0)))
	return func(sig storage.Signal, counts *replayCounts) sender {
		ccfg := replayClientConfig(cfg, sig, counts)
		ccfg.HTTP = httpc
		u := otlpclient.NewUnaryExporter(ccfg)
		return func(ctx context.Context, data []byte) (int64, error) {
			ps, err := u.ExportResult(ctx, data)
			if err == nil {
				return ps.Rejected, nil
			}
			// Retryable failures are retried until ctx ends; what is left
			// is the interruption or a refusal for good.
			if st, ok := errors.AsType[*grpcwire.Status](err); ok {
				if otlpclient.RefusesClient(st) {
					return 0, &errTarget{st}
				}
				return 0, errPermanent{st}
			}
			return 0, err
		}
	}
}

// newHTTPSenders returns the OTLP/HTTP senders' constructor: an
// otlpclient.HTTPExporter for each signal, retried by otlpclient's loop.
func newHTTPSenders(cfg replayConfig) func(storage.Signal, *replayCounts) sender {
	scheme := "https://"
	if cfg.client.tls == nil {
		scheme = "http://"
	}
	client := tenantClient(cfg, cfg.client.wrap(otlpclient.NewHTTP1Client(cfg.client.tls, nil)))
	return func(sig storage.Signal, counts *replayCounts) sender {
		ccfg := replayClientConfig(cfg, sig, counts)
		ccfg.HTTP = client
		h := otlpclient.NewHTTPExporter(otlpclient.HTTPConfig{Config: ccfg, URL: scheme + cfg.endpoint + sig.Info().HTTPPath})
		return func(ctx context.Context, data []byte) (int64, error) {
			ps, err := h.ExportResult(ctx, data)
			if err == nil {
				return ps.Rejected, nil
			}
			if ae, ok := errors.AsType[*otlpclient.AttemptError](err); ok && !ae.Retryable {
				if otlpclient.RefusesClient(err) {
					return 0, &errTarget{ae.Err}
				}
				return 0, errPermanent{ae.Err}
			}
			return 0, err
		}
	}
}
