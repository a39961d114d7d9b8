package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

// versionCmd is `otlp-lite version [-v]`: one line (version, VCS revision
// when the build recorded one, Go version, platform); -v adds what the
// binary was built from, as runtime/debug.ReadBuildInfo reports it, in the
// format of `go version -m` (BuildInfo.String, which debug.ParseBuildInfo
// reads back): the Go version, the package and main module, every
// dependency as path, version and checksum (a replaced one followed by its
// "=>" line) and the build settings (-tags, -ldflags, CGO_ENABLED, GOARCH,
// GOOS, vcs.revision, ...). It is the list a vulnerability scanner needs,
// the same the image's SBOM is made from.
func versionCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	verbose := fs.Bool("v", false, "also print the Go version, main module, every dependency (path, version, checksum, replacement) and the build settings the binary was built with, as go version -m does")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "otlp-lite version: unexpected argument %q (otlp-lite version -h lists the flags)\n", fs.Arg(0))
		return 2
	}
	printVersion(stdout)
	if *verbose {
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			// Only a binary built without module support lacks it.
			fmt.Fprintln(stdout, "no build information in this binary")
			return 0
		}
		fmt.Fprint(stdout, bi.String())
	}
	return 0
}

func printVersion(w io.Writer) {
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " (" + s.Value[:12] + ")"
			}
		}
	}
	fmt.Fprintf(w, "otlp-lite %s%s %s %s/%s\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
