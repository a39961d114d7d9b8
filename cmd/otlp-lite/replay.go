package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// replayProgressEvery is how often replay prints its progress.
const replayProgressEvery = 2 * time.Second

// replay re-sends stored records to an OTLP receiver:
//
//	otlp-lite replay -data-dir DIR -endpoint HOST:PORT [-protocol grpc|stream|http]
//	    [-follow] [-cursor NAME] [-signal all|traces|metrics|logs|profiles]
//	    [-insecure | -tls-ca FILE ...] [-token-file FILE] [-header K:V] [-compression gzip|none]
//
// replay is forwarding (package forward) with one destination: the same
// loop, retries and backoff, verdicts on failures (otlpclient.Classify),
// dead letters and gap reporting. Each record is sent as one Export
// request, in stored order (one at a time over grpc and http; pipelined on
// the stream), and retried until the receiver accepts it, for as long as
// the receiver answers with a retryable failure (OTLP v1.11 "Failures":
// UNAVAILABLE and friends over gRPC, 429/502/503/504 over HTTP), or cannot
// be reached, waiting as long as the receiver's RetryInfo or Retry-After
// asks. A record the receiver refuses for good (INVALID_ARGUMENT, 400,
// larger than its message limit) is logged with its signal, segment and
// offset, counted as failed in the summary, and kept in the dead-letter
// store forward.DeadLetterDir(DIR, "replay-"+NAME) (`otlp-lite export`
// reads it); the exit status is then 1. A receiver that refuses the client
// rather than the record (credentials, a wrong path) stops the signal
// before that record, nothing skipped.
//
// With -cursor, progress is kept in a durable named cursor in the data
// directory (committed as acknowledgements arrive and at exit), so a
// restarted replay continues where the last one stopped; without it,
// every run starts from the oldest record. The cursor never passes a
// record that was not acknowledged (or dead-lettered), whatever ends the
// run: stopped by SIGINT or SIGTERM with records left unacknowledged,
// replay says how many, prints the last send error, and exits 1. Delivery
// is at least once: after a crash, up to forward.DefaultStreamInFlight
// records may be sent again. A replay cursor is not one of serve's
// forwarding cursors (forward.CursorPrefix): retention does not wait for
// it, and records it deletes first are reported as gaps (-allow-gaps).
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
	// tenantHeader, when set, carries each record's tenant
	// (forward.Destination.TenantHeader).
	tenantHeader string
	// noKeys sends records without idempotency keys (-idempotency-keys=false).
	noKeys bool
}

func replayContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg replayConfig
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.dataDir, "data-dir", "./otlp-data", "directory of the disk store to read")
	fs.StringVar(&cfg.endpoint, "endpoint", "", "receiver to send to, host:port, or unix:PATH for a Unix socket (required)")
	fs.StringVar(&cfg.protocol, "protocol", "grpc", "grpc (OTLP/gRPC), stream (otlp-lite's pipelined streaming mode; for WAN links) or http (OTLP/HTTP with protobuf bodies)")
	fs.BoolVar(&cfg.follow, "follow", false, "after the stored records, keep sending new ones as they arrive, until interrupted")
	fs.StringVar(&cfg.cursor, "cursor", "", "name of a durable cursor: resume from where the last replay with this name stopped")
	fs.BoolVar(&cfg.allowGaps, "allow-gaps", false, "exit 0 although retention deleted records before they were replayed (they are counted and reported either way; without it such a gap makes the exit status 1)")
	signalName := fs.String("signal", "all", "signals to replay: all, traces, metrics, logs or profiles")
	fs.DurationVar(&cfg.timeout, "timeout", forward.DefaultTimeout, "timeout of each export request; with -protocol stream, the longest wait for an acknowledgement while the stream acknowledges nothing, after which it is replaced")
	cfg.client.register(fs, true, "gzip", "none")
	summaryJSON := summaryFlag(fs)
	keys := fs.Bool("idempotency-keys", true, "send each record with an idempotency key made of the log's identity (DATA/ID) and the record's position, so that a receiver keeping a window of keys (otlp-lite) stores it once however often it is replayed, a replay interrupted and run again included; false: at least once")
	fs.StringVar(&cfg.tenantHeader, "tenant-header", "", "send each record's tenant in this header (the receiving otlp-lite's -tenant-header, such as X-Scope-OrgID); grpc and http only")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	cfg.noKeys = !*keys
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
	var proto forward.Protocol
	switch cfg.protocol {
	case "grpc":
		proto = forward.GRPC
	case "http":
		proto = forward.HTTP
	case "stream":
		proto = forward.Stream
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
	if st, err := os.Stat(cfg.dataDir); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "replay: no data directory %s\n", cfg.dataDir)
		return 1
	}

	dest := replayDestination(cfg, proto)
	var mu sync.Mutex // one line at a time on stderr
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "replay: "+format+"\n", args...)
	}
	readWith := fmt.Sprintf("otlp-lite export -data-dir %s", forward.DeadLetterDir(cfg.dataDir, dest.Name))
	f, err := forward.New(forward.Options{
		DataDir: cfg.dataDir,
		// A replay cursor is not held by the retention of a serve on
		// the same directory: gaps are reported, and -allow-gaps
		// decides the exit status.
		Unheld:            true,
		Once:              !cfg.follow,
		StopOnRefusal:     true,
		LazyDeadLetters:   true,
		NoIdempotencyKeys: cfg.noKeys,
		Observe: func(e forward.Event) {
			switch e.Kind {
			case forward.Delivered:
				cfg.rec.delivered(e.Bytes, e.Latency)
			case forward.Retried, forward.RefusedClient:
				cfg.rec.refusal(attemptCause(e.Err))
			case forward.RefusedData:
				cfg.rec.refusal(e.Err)
				say("%s: record at %s refused for good, kept as a dead letter (%s -signal %s): %v", e.Signal, e.Record, readWith, e.Signal, e.Err)
			case forward.Damaged:
				say("%s: skipped damaged data: %v", e.Signal, e.Err)
			case forward.Gap:
				say("%s: %v: they cannot be replayed", e.Signal, e.Err)
			}
		},
	}, []forward.Destination{dest})
	if errors.Is(err, disk.ErrConsumerInUse) {
		say("-cursor %s is in use by another process (a running serve forwarding with it, or another replay): two writers would overwrite each other's progress", cfg.cursor)
		return 1
	}
	if err != nil {
		say("%v", err)
		return 1
	}
	tick := time.NewTicker(replayProgressEvery)
	defer tick.Stop()
	start := time.Now()
loop:
	for {
		select {
		case <-f.Done():
			break loop
		case <-ctx.Done():
			break loop
		case <-tick.C:
			stats := f.Stats()
			say("%s", progressLine(stats, time.Since(start)))
			printLastErrors(stderr, cfg, stats)
		}
	}
	status := 0
	// Close gives what is in flight a moment, and commits the cursor.
	if err := f.Close(); err != nil {
		say("%v", err)
		status = 1
	}
	stats := f.Stats()
	var total forward.Stats
	for _, st := range stats {
		if re, ok := errors.AsType[*forward.RefusedError](st.Err); ok {
			say("%s: %v", st.Signal, targetRefusal(re.Record, re.Err))
		} else if st.Err != nil {
			say("%s: %v", st.Signal, st.Err)
		}
		if st.Unfinished > 0 {
			say("%v", stoppedError(cfg, st.Signal, fmt.Sprintf("%d records not acknowledged", st.Unfinished)))
		}
		if st.Lost > 0 {
			say("%s: %d records refused for good could not be kept as dead letters and are lost", st.Signal, st.Lost)
		}
		if st.Err != nil || st.Unfinished > 0 || st.Lost > 0 {
			status = 1
		}
		total.Sent += st.Sent
		total.Items += st.Items + st.RejectedItems
		total.Failed += st.Failed
		total.Damaged += st.Damaged
		total.Gaps += st.Gaps
		total.GapRecords += st.GapRecords
		total.UnknownGaps += st.UnknownGaps
	}
	if status != 0 || total.Failed > 0 {
		printLastErrors(stderr, cfg, stats)
	}
	if total.Failed > 0 || total.Damaged > 0 {
		status = 1
	}
	if total.Gaps > 0 && !cfg.allowGaps {
		say("%s deleted by retention before they were replayed (exit status 1; -allow-gaps accepts such gaps)", gapText(total.GapRecords, total.Gaps, total.UnknownGaps))
		status = 1
	}
	elapsed := time.Since(start)
	headline := fmt.Sprintf("replayed %d records (%d items) to %s in %v: %s",
		total.Sent, total.Items, cfg.endpoint, elapsed.Round(time.Millisecond), progressLine(stats, 0))
	if err := printSummary(stdout, *summaryJSON, headline, replaySummary(cfg, stats, elapsed)); err != nil {
		say("%v", err)
		status = 1
	}
	return status
}

// replayDestination is the one destination a replay forwards to: the
// connection flags' endpoint, TLS, headers and compression, forwarding's
// backoff, and replay's cursor (or none). Over grpc and http records go
// one at a time, in the log's order, so that an interrupted replay's
// cursor stops right after the last acknowledged record (nothing is sent
// twice); the stream pipelines forwarding's window.
func replayDestination(cfg replayConfig, proto forward.Protocol) forward.Destination {
	d := forward.Destination{
		Name:         "replay",
		Protocol:     proto,
		Endpoint:     cfg.endpoint,
		TLS:          cfg.client.tls,
		Header:       cfg.client.header,
		Compression:  cfg.client.codec,
		Signals:      cfg.signals,
		Timeout:      cfg.timeout,
		Backoff:      otlpclient.Backoff{Initial: forward.DefaultInitialBackoff, Max: forward.DefaultMaxBackoff},
		InFlight:     1,
		Uncommitted:  forward.DefaultStreamInFlight,
		TenantHeader: cfg.tenantHeader,
		Cursor:       cfg.cursor,
		NoCursor:     cfg.cursor == "",
	}
	d.DisableStreamCompression = !cfg.client.streamCompression
	d.DisableStreamColumns = !cfg.client.streamColumns
	if cfg.cursor != "" {
		d.Name = "replay-" + cfg.cursor
	}
	if proto == forward.Stream {
		d.InFlight = forward.DefaultStreamInFlight
	}
	return d
}

// attemptCause is err without the *otlpclient.AttemptError around it.
func attemptCause(err error) error {
	if ae, ok := errors.AsType[*otlpclient.AttemptError](err); ok {
		return ae.Err
	}
	return err
}

// replaySummary is the summary of a replay: records are its requests.
func replaySummary(cfg replayConfig, stats []forward.Stats, elapsed time.Duration) clientSummary {
	s := clientSummary{Command: "replay", Endpoint: cfg.endpoint}
	for _, st := range stats {
		s.Acknowledged += st.Sent
		s.Failed += st.Failed
		s.Items += st.Items + st.RejectedItems // in acknowledged requests
		s.RejectedItems += st.RejectedItems
		s.LostRecords += st.GapRecords
		s.Retries += st.Retries
	}
	s.Requests = s.Acknowledged + s.Failed
	return cfg.rec.summary(s, elapsed)
}

// printLastErrors prints each signal's last send failure, with what to do
// about it when a flag is the usual cause.
func printLastErrors(w io.Writer, cfg replayConfig, stats []forward.Stats) {
	advice := ""
	if cfg.client.tls == nil {
		advice = "if the receiver uses TLS, leave out -insecure"
	}
	for _, st := range stats {
		if err := st.LastError; err != nil {
			fmt.Fprintf(w, "replay: %s: last error: %s\n", st.Signal, describeSendError(attemptCause(err), advice))
		}
	}
}

// checkEndpoint says why endpoint is not the host:port or unix:PATH
// (otlpclient.ParseEndpoint) that replay and loadgen want. A URL is the usual mistake (OTEL_EXPORTER_OTLP_ENDPOINT is
// one); plainFlag is the flag that turns TLS off, to suggest for http://.
func checkEndpoint(endpoint, plainFlag string) error {
	if scheme, rest, ok := strings.Cut(endpoint, "://"); ok && scheme != "unix" {
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
	if _, err := otlpclient.ParseEndpoint(endpoint); err != nil {
		reason := err.Error()
		if ee, ok := errors.AsType[*otlpclient.EndpointError](err); ok {
			reason = ee.Reason
		}
		return fmt.Errorf("-endpoint %q is not host:port or unix:PATH: %s", redact.URL(endpoint), redact.Hide(reason, redact.URLSecrets(endpoint)...))
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
	case errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EACCES):
		// Only a unix: endpoint's dial opens a file.
		return err.Error() + " (is the receiver running, is -endpoint its socket, and may this user write to it (serve -unix-socket-mode)?)"
	case tlsAdvice != "" && (errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "client conn could not be established")):
		// What a TLS listener does with the HTTP/2 preface in clear.
		return err.Error() + " (" + tlsAdvice + ")"
	}
	return err.Error()
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

func progressLine(stats []forward.Stats, elapsed time.Duration) string {
	var b strings.Builder
	for i, c := range stats {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d records/%d items", c.Signal, c.Sent, c.Items+c.RejectedItems)
		if n := c.RejectedItems; n > 0 {
			fmt.Fprintf(&b, " (%d items rejected)", n)
		}
		if n := c.Failed; n > 0 {
			fmt.Fprintf(&b, " (%d records failed)", n)
		}
		if n := c.Damaged; n > 0 {
			fmt.Fprintf(&b, " (%d damaged regions skipped)", n)
		}
		if n := c.Gaps; n > 0 {
			fmt.Fprintf(&b, " (%s deleted by retention before they were replayed)", gapText(c.GapRecords, n, c.UnknownGaps))
		}
		if n := c.Retries; n > 0 {
			fmt.Fprintf(&b, " (%d retries)", n)
		}
	}
	if elapsed > 0 {
		fmt.Fprintf(&b, " after %v", elapsed.Round(time.Second))
	}
	return b.String()
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

// targetRefusal is the error that stops a replay at the record at where.
func targetRefusal(where string, err error) error {
	return fmt.Errorf("the target refused the record at %s as it would refuse every record (%v): check -endpoint, -protocol and the target's credentials; nothing was skipped, the next run resumes there", where, err)
}
