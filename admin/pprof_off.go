//go:build nopprof

package admin

import "net/http"

// PprofBuiltIn reports whether this build can serve /debug/pprof/: not
// with -tags nopprof (the small image's).
const PprofBuiltIn = false

func mountPprof(*http.ServeMux) {}
