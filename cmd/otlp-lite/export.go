package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"

	"github.com/otlp-lite/otlp-lite/otlpjson"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// export prints stored records of one signal, one per line, as OTLP/JSON
// TracesData / MetricsData / LogsData objects (the OTLP v1.11 "JSON Protobuf
// Encoding": hex ids, integer enums), the format the collector's
// fileexporter writes.
func export(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "./otlp-data", "directory of the disk store")
	signalName := fs.String("signal", "traces", "signal to print: traces, metrics or logs")
	format := fs.String("format", "json", "output format: json (one OTLP/JSON object per line)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	sig, err := storage.ParseSignal(*signalName)
	if err != nil {
		fmt.Fprintf(stderr, "export: %v\n", err)
		return 2
	}
	if *format != "json" {
		fmt.Fprintf(stderr, "export: unknown -format %q: want json\n", *format)
		return 2
	}
	msgType := map[storage.Signal]otlpjson.MessageType{
		storage.Traces:  otlpjson.TracesData,
		storage.Metrics: otlpjson.MetricsData,
		storage.Logs:    otlpjson.LogsData,
	}[sig]
	w := bufio.NewWriterSize(stdout, 256<<10)
	var line []byte
	err = disk.Scan(*dataDir, sig, func(r disk.Record) error {
		var err error
		line, err = otlpjson.Marshal(line[:0], msgType, r.Data)
		if err != nil {
			return fmt.Errorf("cannot encode record at %s:%d as JSON: %w", r.Segment, r.Offset, err)
		}
		line = append(line, '\n')
		_, err = w.Write(line)
		return err
	})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		fmt.Fprintf(stderr, "export: %v\n", err)
		return 1
	}
	return 0
}
