package handler

import (
	"net/http"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/internal/quote"
)

// profilesVersionHeader is the request metadata with which the
// OpenTelemetry Collector's pdata names the development version of the
// profiles schema it encoded (pprofileotlp.DevelopmentVersionHeader; its
// receivers check it). It is a Collector convention: the OTLP
// specification has no such header, and a request without it is version
// 1, as the Collector reads it too.
const profilesVersionHeader = "otlp-profiles-development-version"

// profilesVersion is the version of the profiles schema otlpdecode
// validates: pdata's "1", the v1development profiles of OTLP v1.11.
const profilesVersion = "1"

// checkProfilesVersion refuses a profiles request that says it is encoded
// with another version of the development schema: validated with v1.11's
// rules, its fields could be stored with another meaning. The rules are
// the Collector receiver's: at most one value, exactly "1".
func checkProfilesVersion(hdr http.Header) *grpcwire.Status {
	v := hdr.Values(profilesVersionHeader)
	switch {
	case len(v) == 0 || (len(v) == 1 && v[0] == profilesVersion):
		return nil
	case len(v) > 1:
		return grpcwire.Errorf(grpcwire.InvalidArgument, "%s must have one value, not %d", profilesVersionHeader, len(v))
	}
	return grpcwire.Errorf(grpcwire.InvalidArgument, "unsupported %s %s: this receiver reads version %s (the profiles of OTLP v1.11)",
		profilesVersionHeader, quote.String(v[0]), profilesVersion)
}
