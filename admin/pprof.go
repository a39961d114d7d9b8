//go:build !nopprof

package admin

import (
	"net/http"
	"net/http/pprof"
	"os"
	"strings"

	"github.com/otlp-lite/otlp-lite/internal/redact"
)

// PprofBuiltIn reports whether this build can serve /debug/pprof/: the
// small image is built with -tags nopprof, which leaves the profiler (about
// 130 KB of runtime/pprof and its profile encoder) out to stay within its
// 12 MB budget.
const PprofBuiltIn = true

// mountPprof serves the profiler on mux.
func mountPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", redactedCmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}

// redactedCmdline is pprof's /debug/pprof/cmdline (the command line, its
// arguments separated by NUL bytes) with what package redact hides hidden:
// the values of secret flags (-kafka-sasl-password), the credentials of
// -forward URLs, and every registered secret. pprof's own would show them.
func redactedCmdline(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte(strings.Join(redact.Args(os.Args), "\x00")))
}
