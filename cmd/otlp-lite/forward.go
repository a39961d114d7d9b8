// Forwarding from the disk log to OTLP destinations (package forward): the
// -forward flag, its serve extension, and the forward-remove command.

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/deadletter"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

func init() {
	serveExtensions = append(serveExtensions, func(s *flagSections) extensionFlags {
		f := &forwardFlags{}
		s.add("Forwarding (-storage disk)", func(fs *flag.FlagSet) {
			fs.StringVar(&f.deadLetterMaxBytes, "forward-dead-letter-max-bytes", "1GiB", "size past which a destination's oldest dead letters (records it refused for good) are deleted, never more than -storage-max-bytes when that is set (same units); 0: no limit of its own")
			fs.DurationVar(&f.deadLetterMaxAge, "forward-dead-letter-max-age", deadletter.DefaultMaxAge, "age past which a destination's dead letters are deleted; 0: no limit")
			fs.Var(&f.list, "forward", "forward what is stored to a destination, `NAME=URL`: grpc://, grpcs://, stream://, streams://, http://, https:// host:port (and a path for HTTP) or kafka://brokers (unless built with -tags nokafka), with query parameters signals, compression, encoding, header, tenant-header, start, timeout, retry-initial-backoff, retry-max-backoff, inflight, tls-ca, tls-cert, tls-key, tls-server-name, insecure-skip-verify (kafka://: topic-*, tls, sasl-mechanism, sasl-username, sasl-password-env or sasl-password-file; see README); at least once, from a durable cursor per destination that holds data against -storage-max-age")
		})
		return f
	})
}

// forwardList is serve's repeatable -forward NAME=URL (package forward
// reads the URL, at parse time, so a bad one is a one-line error before
// anything starts). In OTLP_LITE_FORWARD, destinations are separated by
// white space: a URL has none (a space in a header value is %20).
type forwardList struct {
	dests []forward.Destination
	raw   []string
}

func (*forwardList) repeatable() {}

func (f *forwardList) String() string { return strings.Join(f.raw, " ") }

// Redacted shows each destination as given, its secrets hidden by the one
// rule (redact.URL: credential headers, userinfo, secret parameters).
func (f *forwardList) Redacted() string {
	shown := make([]string, len(f.raw))
	for i, raw := range f.raw {
		shown[i] = redact.URL(raw)
	}
	return strings.Join(shown, " ")
}

func (f *forwardList) Set(v string) error {
	d, err := forward.Parse(v)
	if err != nil {
		return err
	}
	for _, o := range f.dests {
		if o.Name == d.Name {
			return fmt.Errorf("two destinations are called %q", d.Name)
		}
	}
	f.dests = append(f.dests, d)
	f.raw = append(f.raw, v)
	return nil
}

// forwardFlags is the forwarding extension's side of serve's flags.
type forwardFlags struct {
	list               forwardList
	lost               lossCounter
	deadLetterMaxBytes string
	deadLetterMaxAge   time.Duration
	// deadLetter is the bound of each destination's dead letters (package
	// deadletter, as the Kafka source's): the flags, the size within
	// -storage-max-bytes (diskOptions).
	deadLetter deadletter.Bound
}

// lossCounter counts, as otlplite_forward_lost_records_total, what
// -storage-max-bytes deleted before a destination got it. The store calls
// it from its first retention pass, while it opens, before the metrics
// are handed to extensions: what it reports until then is kept and added
// when they are (summed per cursor: bounded by the number of cursors, also
// when serve runs without -forward and they are never handed over).
type lossCounter struct {
	mu    sync.Mutex
	count func(consumer string, sig storage.Signal, records int64)
	early map[lossKey]int64
}

type lossKey struct {
	consumer string
	sig      storage.Signal
}

func (l *lossCounter) onLoss(consumer string, sig storage.Signal, records int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == nil {
		if l.early == nil {
			l.early = map[lossKey]int64{}
		}
		l.early[lossKey{consumer, sig}] += records
		return
	}
	l.count(consumer, sig, records)
}

func (l *lossCounter) attach(set *metrics.Set) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count = forward.CountLoss(set)
	for k, n := range l.early {
		l.count(k.consumer, k.sig, n)
	}
	l.early = nil
}

func (f *forwardFlags) validate(cfg *serveConfig) error {
	if len(f.list.dests) > 0 && cfg.storageKind != "disk" {
		return fmt.Errorf("-forward needs -storage disk (it forwards from the disk log), not -storage %s", cfg.storageKind)
	}
	n, err := parseSize(f.deadLetterMaxBytes)
	if err != nil {
		return fmt.Errorf("bad -forward-dead-letter-max-bytes: %w", err)
	}
	if f.deadLetterMaxAge < 0 {
		return fmt.Errorf("bad -forward-dead-letter-max-age %v: must not be negative", f.deadLetterMaxAge)
	}
	f.deadLetter = deadletter.Bound{MaxBytes: n, MaxAge: f.deadLetterMaxAge}
	return nil
}

// diskOptions makes forwarding cursors hold segments against
// -storage-max-age, and counts what -storage-max-bytes deletes before a
// destination got it. It applies with or without -forward: a cursor left
// by an earlier run still holds its data until forward-remove.
//
// It also caps the dead letters' size at -storage-max-bytes: what a
// destination refused never takes more room than the log itself may.
func (f *forwardFlags) diskOptions(_ *serveConfig, o *disk.Options) error {
	o.HoldPrefix = forward.CursorPrefix
	o.OnLoss = f.lost.onLoss
	if o.MaxBytes > 0 && (f.deadLetter.MaxBytes == 0 || f.deadLetter.MaxBytes > o.MaxBytes) {
		f.deadLetter.MaxBytes = o.MaxBytes
	}
	return nil
}

func (f *forwardFlags) newExtension(*serveConfig) (serveExtension, error) {
	if len(f.list.dests) == 0 {
		return nil, nil
	}
	return &forwarding{dests: f.list.dests, lost: &f.lost, flags: f}, nil
}

// forwarding runs the forwarders beside the receivers.
type forwarding struct {
	dests []forward.Destination
	lost  *lossCounter
	flags *forwardFlags
	f     *forward.Forwarder
}

func (x *forwarding) start(env *serveEnv) error {
	if env.store == nil {
		return errors.New("-forward needs -storage disk")
	}
	x.lost.attach(env.metrics)
	var err error
	x.f, err = forward.New(forward.Options{DataDir: env.dataDir, Store: env.store, Metrics: env.metrics, Logger: env.logger, DeadLetter: x.flags.deadLetter}, x.dests)
	return err
}

// stop gives records in flight a moment to be acknowledged and commits
// every cursor; what is left is sent after the next start.
func (x *forwarding) stop(context.Context) error { return x.f.Close() }

// forwardRemove deletes destinations' cursors, so that they no longer hold
// data against retention:
//
//	otlp-lite forward-remove -data-dir DIR NAME...
//
// Run it for a destination that serve no longer forwards to: a running
// forwarder writes its cursor again. Forwarding to NAME later starts anew.
func forwardRemove(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("forward-remove", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "./otlp-data", "directory of the disk store")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "forward-remove: name the destinations whose cursors to remove: forward-remove -data-dir DIR NAME...")
		return 2
	}
	if st, err := os.Stat(*dataDir); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "forward-remove: no data directory %s\n", *dataDir)
		return 1
	}
	release, err := lockOffline("forward-remove", *dataDir, "its forwarder would write the cursors again")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer release()
	status := 0
	for _, name := range fs.Args() {
		found := false
		for _, sig := range storage.Signals {
			names, err := disk.ConsumerNames(*dataDir, sig, forward.CursorName(name))
			if err != nil {
				fmt.Fprintf(stderr, "forward-remove: %v\n", err)
				return 1
			}
			for _, n := range names {
				if n != forward.CursorName(name) {
					continue // another destination whose name starts alike
				}
				if err := disk.RemoveConsumer(*dataDir, n, sig); err != nil {
					fmt.Fprintf(stderr, "forward-remove: %v\n", err)
					return 1
				}
				found = true
				fmt.Fprintf(stdout, "removed the %s cursor of destination %s\n", sig, name)
			}
		}
		if !found {
			fmt.Fprintf(stderr, "forward-remove: destination %s has no cursor in %s\n", name, *dataDir)
			status = 1
		}
	}
	return status
}
