package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// stats prints, per signal, what the disk store in -data-dir holds:
// segments, records, items, bytes on disk and the receive-time range. It
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
			Signals []signalJSON `json:"signals"`
			Bytes   int64        `json:"bytes"`
		}{Bytes: st.Bytes}
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
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "stats: %v\n", err)
		return 1
	}
	return 0
}
