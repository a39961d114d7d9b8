package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// stats prints, per signal, what the disk store in -data-dir holds:
// segments, records, items, bytes on disk and the receive-time range; and
// per forwarding destination and signal, what it has not acknowledged. It
// reads record headers only and never writes, so it is safe to run while a
// server is using the directory.
func stats(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "./otlp-data", "directory of the disk store")
	format := fs.String("format", "text", "output format: text (a table) or json")
	byTenant := fs.Bool("tenants", false, "records and items per tenant and signal instead (reads every record, not only headers)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "stats: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "stats: unknown -format %q: want text or json\n", *format)
		return 2
	}
	if st, err := os.Stat(*dataDir); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "stats: no data directory %s\n", *dataDir)
		return 1
	}
	if *byTenant {
		return printTenantStats(*dataDir, *format, stdout, stderr)
	}
	st, err := disk.ReadStats(*dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "stats: %v\n", err)
		return 1
	}
	lags, err := forwardLags(*dataDir)
	if err != nil {
		fmt.Fprintf(stderr, "stats: %v\n", err)
		return 1
	}
	if *format == "json" {
		type signalJSON struct {
			Signal   string     `json:"signal"`
			Segments int        `json:"segments"`
			Records  int64      `json:"records"`
			Items    int64      `json:"items"`
			Bytes    int64      `json:"bytes"`
			Oldest   *time.Time `json:"oldest,omitempty"`
			Newest   *time.Time `json:"newest,omitempty"`
		}
		out := struct {
			Signals    []signalJSON `json:"signals"`
			Bytes      int64        `json:"bytes"`
			Forwarding []forwardLag `json:"forwarding,omitempty"`
		}{Bytes: st.Bytes, Forwarding: lags}
		for _, s := range st.Signals {
			j := signalJSON{Signal: s.Signal.String(), Segments: s.Segments, Records: s.Records, Items: s.Items, Bytes: s.Bytes}
			if s.Records > 0 {
				oldest, newest := s.Oldest.UTC(), s.Newest.UTC()
				j.Oldest, j.Newest = &oldest, &newest
			}
			out.Signals = append(out.Signals, j)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "stats: %v\n", err)
			return 1
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "signal\tsegments\trecords\titems\tbytes\toldest\tnewest\t")
	for _, s := range st.Signals {
		oldest, newest := "-", "-"
		if s.Records > 0 {
			oldest, newest = s.Oldest.UTC().Format(time.RFC3339), s.Newest.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t\n", s.Signal, s.Segments, s.Records, s.Items, s.Bytes, oldest, newest)
	}
	fmt.Fprintf(tw, "total\t\t\t\t%d\t\t\t\n", st.Bytes)
	if len(lags) > 0 {
		fmt.Fprintln(tw, "\t\t\t\t\t\t\t")
		fmt.Fprintln(tw, "destination\tsignal\tlag records\tlag bytes\toldest unforwarded\t\t\t")
		for _, l := range lags {
			oldest := "-"
			if l.Oldest != nil {
				oldest = l.Oldest.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t\t\t\n", l.Destination, l.Signal, l.Records, l.Bytes, oldest)
		}
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "stats: %v\n", err)
		return 1
	}
	return 0
}

// forwardLag is what one forwarding destination has not acknowledged of
// one signal, read from its cursor.
type forwardLag struct {
	Destination string     `json:"destination"`
	Signal      string     `json:"signal"`
	Records     int64      `json:"lag_records"`
	Bytes       int64      `json:"lag_bytes"`
	Oldest      *time.Time `json:"oldest_unforwarded,omitempty"`
}

// forwardLags reads every forwarding cursor in dataDir (package forward).
func forwardLags(dataDir string) ([]forwardLag, error) {
	var out []forwardLag
	for _, sig := range storage.Signals {
		names, err := disk.ConsumerNames(dataDir, sig, forward.CursorPrefix)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			lag, err := disk.ReadConsumerLag(dataDir, name, sig)
			if err != nil {
				return nil, err
			}
			l := forwardLag{Destination: strings.TrimPrefix(name, forward.CursorPrefix), Signal: sig.String(), Records: lag.Records, Bytes: lag.Bytes}
			if !lag.Oldest.IsZero() {
				t := lag.Oldest.UTC()
				l.Oldest = &t
			}
			out = append(out, l)
		}
	}
	return out, nil
}
