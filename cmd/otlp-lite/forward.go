// Forwarding from the disk log to OTLP destinations (package forward, run
// by package service): the -forward flags and the forward-remove command.

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/service"
)

// registerForwardFlags defines the forwarding flags (service.ForwardConfig)
// in their own section.
func registerForwardFlags(s *flagSections, f *service.ForwardConfig) {
	s.add("Forwarding (-storage disk)", func(fs *flag.FlagSet) {
		fs.StringVar(&f.DeadLetterMaxBytes, "forward-dead-letter-max-bytes", f.DeadLetterMaxBytes, "size past which a destination's oldest dead letters (records it refused for good) are deleted, never more than -storage-max-bytes when that is set (same units); 0: no limit of its own")
		fs.DurationVar(&f.DeadLetterMaxAge, "forward-dead-letter-max-age", f.DeadLetterMaxAge, "age past which a destination's dead letters are deleted; 0: no limit")
		fs.Var(&forwardList{dests: &f.Destinations}, "forward", "forward what is stored to a destination, `NAME=URL`: grpc://, grpcs://, stream://, streams://, http://, https:// host:port (and a path for HTTP) or unix:PATH (a Unix socket: grpc://unix:/run/otlp.sock), or kafka://brokers (unless built with -tags nokafka), with query parameters signals, compression, encoding, header, tenant-header, start, timeout, retry-initial-backoff, retry-max-backoff, inflight, tls-ca, tls-cert, tls-key, tls-server-name, insecure-skip-verify (kafka://: topic-*, tls, sasl-mechanism, sasl-username, sasl-password-env or sasl-password-file; see README); at least once, from a durable cursor per destination that holds data against -storage-max-age")
	})
}

// forwardList is serve's repeatable -forward NAME=URL (package forward
// reads the URL, at parse time, so a bad one is a one-line error before
// anything starts). In OTLP_LITE_FORWARD, destinations are separated by
// white space: a URL has none (a space in a header value is %20).
type forwardList struct {
	dests *[]forward.Destination
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
	*f.dests = append(*f.dests, d)
	f.raw = append(f.raw, v)
	return nil
}

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
		removed, err := service.RemoveDestination(*dataDir, name)
		for _, sig := range removed {
			fmt.Fprintf(stdout, "removed the %s cursor of destination %s\n", sig, name)
		}
		if err != nil {
			fmt.Fprintf(stderr, "forward-remove: %v\n", err)
			return 1
		}
		if len(removed) == 0 {
			fmt.Fprintf(stderr, "forward-remove: destination %s has no cursor in %s\n", name, *dataDir)
			status = 1
		}
	}
	return status
}
