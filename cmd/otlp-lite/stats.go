package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/otlp-lite/otlp-lite/admin"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// stats prints what the disk store in -data-dir holds (admin.WriteStats),
// or with -tenants per tenant (admin.WriteTenantStats). It never writes,
// so it is safe to run while a server is using the directory.
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
	write, what := admin.WriteStats, "stats: %v\n"
	if *byTenant {
		write = admin.WriteTenantStats
	}
	if err := write(stdout, *dataDir, *format); err != nil {
		if errors.Is(err, disk.ErrCorrupt) && *byTenant {
			// Counted what was readable; said what was not.
			what = "stats: skipped damaged data: %v\n"
		}
		fmt.Fprintf(stderr, what, err)
		return 1
	}
	return 0
}
