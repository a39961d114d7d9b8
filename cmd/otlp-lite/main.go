// Command otlp-lite is a small OTLP receiver: it accepts traces, metrics
// and logs over OTLP/gRPC and stores them durably on local disk.
//
//	otlp-lite serve   [flags]   run the receiver
//	otlp-lite export  [flags]   print stored data
//	otlp-lite loadgen [flags]   generate load against an OTLP receiver
//	otlp-lite replay  [flags]   re-send stored data to an OTLP receiver
//	otlp-lite stats   [flags]   summarise a data directory
//	otlp-lite forward-remove [flags] NAME...   stop holding data for a destination
//	otlp-lite version [-v]      print the version (-v: the modules it was built with)
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/otlp-lite/otlp-lite/internal/redact"
)

const usage = `usage: otlp-lite <command> [flags]

commands:
  serve     run the receiver (OTLP/gRPC on -grpc-addr, stored in -data-dir)
  export    print stored records (-data-dir, -signal, -format json|proto, -since, -until, -follow)
  replay    re-send stored records to an OTLP receiver (-data-dir, -endpoint, -protocol grpc|stream|http, -cursor, -follow)
  stats     per-signal records, items, bytes, time range and segments of a data directory, and each forwarding destination's lag
  forward-remove  delete a forwarding destination's cursors, so that retention no longer keeps data for it
  loadgen   send synthetic spans to any OTLP/gRPC receiver (unary or streaming)
  version   print the version (-v: Go version, modules and build settings it was built with)

Run 'otlp-lite <command> -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	// Every secret a command was given is hidden in what it prints on
	// stderr (errors, logs, a receiver's refusal quoting our token).
	stderr = redact.Writer(stderr)
	switch cmd {
	case "serve":
		return serve(rest, stdout, stderr)
	case "export":
		return export(rest, stdout, stderr)
	case "loadgen":
		return loadgen(rest, stdout, stderr)
	case "replay":
		return replay(rest, stdout, stderr)
	case "stats":
		return stats(rest, stdout, stderr)
	case "forward-remove":
		return forwardRemove(rest, stdout, stderr)
	case "version", "-version", "--version":
		return versionCmd(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "otlp-lite: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// parseFlags parses a command's flags as every command does: -h prints the
// flags to stdout, so that "otlp-lite serve -h | grep tls" works, and asks
// for exit status 0; an unknown or malformed flag prints one line that
// points at -h (the flag package would print every flag after the error)
// and asks for 2, without the secrets it may quote (flagError). ok is true
// when the command should run.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "Usage of otlp-lite %s:\n", fs.Name())
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0, false
	}
	fmt.Fprintf(stderr, "otlp-lite %s: %s (otlp-lite %s -h lists the flags)\n", fs.Name(), flagError(fs, err), fs.Name())
	return 2, false
}
