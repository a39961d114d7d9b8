package forward

import (
	"strings"
	"testing"
)

// FuzzParse: any -forward value either parses to a destination that is
// consistent, or is refused with one line naming it; never a panic. The
// seed corpus (testdata/fuzz/FuzzParse) has a URL of each scheme with
// each parameter.
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
	})
}
