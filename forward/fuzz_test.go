package forward

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// FuzzParse: any -forward value either parses to a destination that is
// consistent, or is refused with one line naming it; never a panic. The
// seed corpus (testdata/fuzz/FuzzParse) has a URL of each scheme with
// each parameter. A TCP URL means what it meant before sockets.
func FuzzParse(f *testing.F) {
	f.Add("a=grpc://h:4317?signals=traces,logs&compression=gzip&header=X-Scope-OrgID:team-a&start=now")
	f.Add("b=https://h:443/otlp?encoding=json&timeout=5s&retry-max-backoff=1m&inflight=4")
	f.Fuzz(func(t *testing.T, v string) {
		d, err := Parse(v)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("Parse(%q): a multi-line error: %q", v, err)
			}
			return
		}
		if checkName(d.Name) != nil || d.Endpoint == "" || len(d.Signals) == 0 || d.InFlight < 1 || d.InFlight > maxInFlight ||
			d.Backoff.Initial > d.Backoff.Max || d.Timeout <= 0 || (d.JSON && d.Protocol != HTTP) {
			t.Fatalf("Parse(%q) accepted an inconsistent destination %+v", v, d)
		}
		if d.Protocol == Sink {
			return
		}
		// Sockets changed no TCP URL's meaning: a TCP endpoint is the
		// URL's host:port, as url.Parse reads it (the rule before
		// sockets), and a URL whose host:port url.Parse reads is never
		// a socket's.
		ep, err := otlpclient.ParseEndpoint(d.Endpoint)
		if err != nil {
			t.Fatalf("Parse(%q): endpoint %q does not parse: %v", v, d.Endpoint, err)
		}
		_, raw, _ := strings.Cut(v, "=")
		u, uerr := url.Parse(raw)
		switch {
		case !ep.IsUnix() && (uerr != nil || net.JoinHostPort(u.Hostname(), u.Port()) != d.Endpoint):
			t.Fatalf("Parse(%q): TCP endpoint %q is not the URL's host:port", v, d.Endpoint)
		case ep.IsUnix() && uerr == nil && u.Port() != "" && u.User == nil:
			t.Fatalf("Parse(%q): the URL's host:port %q read as the socket %q", v, u.Host, d.Endpoint)
		}
	})
}
