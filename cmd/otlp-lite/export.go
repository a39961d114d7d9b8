package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/otlp-lite/otlp-lite/internal/wait"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpjson"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// followPoll is how often -follow looks for new records once caught up.
const followPoll = 200 * time.Millisecond

// export prints stored records of one signal, oldest first, in one of two
// formats the collector's fileexporter also writes:
//
//   - json: one OTLP/JSON TracesData / MetricsData / LogsData /
//     ProfilesData object per line (the OTLP v1.11 "JSON Protobuf
//     Encoding": hex trace and span ids, integer enums); a ProfilesData
//     line carries its request's dictionary, as the fileexporter writes it;
//   - proto: per record, a 4-byte big-endian length and the protobuf
//     message (the fileexporter's format "proto").
//
// -since/-until select records by receive time; -follow keeps printing new
// records as they are stored until interrupted. Damaged records are reported
// on stderr with their position and skipped (the exit status is then 1);
// the records after them are still printed.
func export(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return exportContext(ctx, args, stdout, stderr)
}

func exportContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "./otlp-data", "directory of the disk store")
	signalName := fs.String("signal", "traces", "signal to print: traces, metrics, logs or profiles")
	format := fs.String("format", "json", "output format: json (one OTLP/JSON object per line) or proto (4-byte big-endian length + protobuf message per record)")
	sinceFlag := fs.String("since", "", "only records received at or after this time: RFC 3339 (2025-01-02T15:04:05Z) or a duration meaning that long ago (1h)")
	untilFlag := fs.String("until", "", "only records received before this time (same forms as -since)")
	follow := fs.Bool("follow", false, "after the stored records, keep printing new ones as they arrive, until interrupted (SIGINT)")
	tenant := fs.String("tenant", "", "only records of this tenant (records stored without one belong to "+otlp.DefaultTenant+")")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "export: unexpected arguments %q\n", fs.Args())
		return 2
	}
	sig, err := storage.ParseSignal(*signalName)
	if err != nil {
		fmt.Fprintf(stderr, "export: %v\n", err)
		return 2
	}
	if *format != "json" && *format != "proto" {
		fmt.Fprintf(stderr, "export: unknown -format %q: want json or proto\n", *format)
		return 2
	}
	now := time.Now()
	since, err := parseTimeFlag(*sinceFlag, now)
	if err != nil {
		fmt.Fprintf(stderr, "export: bad -since: %v\n", err)
		return 2
	}
	until, err := parseTimeFlag(*untilFlag, now)
	if err != nil {
		fmt.Fprintf(stderr, "export: bad -until: %v\n", err)
		return 2
	}
	if *follow && !until.IsZero() {
		fmt.Fprintln(stderr, "export: -until cannot be combined with -follow")
		return 2
	}
	if st, err := os.Stat(*dataDir); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "export: no data directory %s\n", *dataDir)
		return 1
	}
	msgType, _, _ := otlpjson.ForSignal(sig)

	w := bufio.NewWriterSize(stdout, 256<<10)
	var out []byte
	emit := func(r disk.Record) error {
		out = out[:0]
		if *format == "proto" {
			out = binary.BigEndian.AppendUint32(out, uint32(len(r.Data)))
			out = append(out, r.Data...)
		} else {
			var err error
			out, err = otlpjson.Marshal(out, msgType, r.Data)
			if err != nil {
				return fmt.Errorf("cannot encode record at %s:%d as JSON: %w", r.Segment, r.Offset, err)
			}
			out = append(out, '\n')
		}
		_, err := w.Write(out)
		return err
	}

	// A reader that follows the log can fall behind its retention: it
	// names what retention deleted before it was read (a *disk.GapError),
	// as replay and forwarding do, instead of skipping it silently.
	r := disk.NewGapReader(*dataDir, sig)
	defer r.Close()
	damaged, gaps := 0, 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			if !*follow {
				break
			}
			if err := w.Flush(); err != nil {
				fmt.Fprintf(stderr, "export: %v\n", err)
				return 1
			}
			if !wait.For(ctx, followPoll) {
				break // interrupted
			}
			continue
		}
		if errors.Is(err, disk.ErrCorrupt) {
			damaged++
			fmt.Fprintf(stderr, "export: skipped damaged data: %v\n", err)
			continue
		}
		if errors.Is(err, disk.ErrGap) {
			gaps++
			fmt.Fprintf(stderr, "export: %v\n", err)
			continue
		}
		if err != nil {
			w.Flush()
			fmt.Fprintf(stderr, "export: %v\n", err)
			return 1
		}
		if (!since.IsZero() && rec.Time.Before(since)) || (!until.IsZero() && !rec.Time.Before(until)) || (*tenant != "" && rec.Tenant != *tenant) {
			continue
		}
		if err := emit(rec); err != nil {
			w.Flush()
			fmt.Fprintf(stderr, "export: %v\n", err)
			return 1
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "export: %v\n", err)
		return 1
	}
	if damaged > 0 {
		fmt.Fprintf(stderr, "export: %d damaged regions skipped\n", damaged)
	}
	if gaps > 0 {
		fmt.Fprintf(stderr, "export: %d gaps: retention deleted records before they were read\n", gaps)
	}
	if damaged > 0 || gaps > 0 {
		return 1
	}
	return 0
}

// parseTimeFlag parses an RFC 3339 time, or a duration meaning that long
// before now. The empty string is the zero Time (no bound).
func parseTimeFlag(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a duration", s)
	}
	if d < 0 {
		return time.Time{}, fmt.Errorf("duration %q must not be negative", s)
	}
	return now.Add(-d), nil
}
