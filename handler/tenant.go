package handler

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// Tenancy (off unless Config.Tenants is set): every export request is
// attributed to a tenant, taken from the first source that names one, in
// the order the operator configured; the tenant travels to the sink in the
// request's context (otlp.TenantFrom), and its quota (ingest/quota.go) is
// enforced. With Config.Tenants nil the handler does exactly what it did
// before tenants existed: one nil check per request.

// DefaultTenantHeader is the header that names the tenant when the header
// source is on: the name Grafana Tempo, Mimir and Loki use, so an agent
// already configured for them needs no change.
const DefaultTenantHeader = "X-Scope-OrgID"

// CheckTenantHeader says why name cannot be the tenant header, if it
// cannot: it must be an HTTP field name (RFC 9110 section 5.1, a token)
// and not one that carries credentials by the process's one rule of what
// is secret (redact.Name: Authorization, Proxy-Authorization, Cookie,
// X-Api-Key...). The tenant header becomes a metric label, a log field, a
// Kafka record header and topic: a credential there would be published.
func CheckTenantHeader(name string) error {
	if name == "" {
		return fmt.Errorf("is empty")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return fmt.Errorf("byte %d is not allowed in a header name", i+1)
	}
	if redact.Name(name) {
		return fmt.Errorf("%s carries credentials: its value would become a metric label, a log field and a storage key; name the tenant with tenant=NAME after its line in -auth-token-file, or in a header of its own, such as %s", name, DefaultTenantHeader)
	}
	return nil
}

// TenantSource is where a request's tenant can come from.
type TenantSource uint8

const (
	// TenantFromToken: the tenant of the bearer token that authenticated
	// the request (the token file's "tenant=" field).
	TenantFromToken TenantSource = iota + 1
	// TenantFromHeader: the value of TenantConfig.Header.
	TenantFromHeader
	// TenantFromCert: a field of the verified mTLS client certificate.
	TenantFromCert
)

var tenantSourceNames = map[TenantSource]string{TenantFromToken: "token", TenantFromHeader: "header", TenantFromCert: "cert"}

func (s TenantSource) String() string { return tenantSourceNames[s] }

// ParseTenantSources parses a comma-separated list of sources (token,
// header, cert), each at most once, in the order they are tried.
func ParseTenantSources(list string) ([]TenantSource, error) {
	var out []TenantSource
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		var src TenantSource
		for s, n := range tenantSourceNames {
			if n == name {
				src = s
			}
		}
		if src == 0 {
			return nil, fmt.Errorf("unknown tenant source %q: want token, header or cert", name)
		}
		for _, o := range out {
			if o == src {
				return nil, fmt.Errorf("tenant source %q is listed twice", name)
			}
		}
		out = append(out, src)
	}
	return out, nil
}

// CertField is the field of a client certificate that names its tenant.
type CertField string

// The certificate fields a tenant can come from. A URI or e-mail SAN is
// not offered: its ':', '/' and '@' are not allowed in tenant names.
const (
	CertCommonName = CertField("cn")      // the subject's common name
	CertDNSName    = CertField("san-dns") // the first DNS subject alternative name
	CertOrgUnit    = CertField("ou")      // the subject's first organizational unit
)

// ParseCertField checks a certificate field name.
func ParseCertField(s string) (CertField, error) {
	switch f := CertField(s); f {
	case CertCommonName, CertDNSName, CertOrgUnit:
		return f, nil
	}
	return "", fmt.Errorf("unknown certificate field %q: want cn, san-dns or ou", s)
}

func (f CertField) of(c *x509.Certificate) string {
	switch f {
	case CertCommonName:
		return c.Subject.CommonName
	case CertDNSName:
		if len(c.DNSNames) > 0 {
			return c.DNSNames[0]
		}
	case CertOrgUnit:
		if len(c.Subject.OrganizationalUnit) > 0 {
			return c.Subject.OrganizationalUnit[0]
		}
	}
	return ""
}

// TenantConfig turns tenancy on.
type TenantConfig struct {
	// Sources are tried in order; the first that names a tenant wins.
	// Empty means every source that is configured: token (when the
	// Authenticator is a TenantAuthenticator), header, cert.
	Sources []TenantSource
	// Header names the tenant header; empty means DefaultTenantHeader.
	// It must pass CheckTenantHeader (New panics otherwise): a header
	// that carries credentials cannot name the tenant.
	Header string
	// CertField is the client certificate field that names the tenant;
	// empty means certificates name no tenant.
	CertField CertField
	// Default is the tenant of a request no source names; empty means
	// otlp.DefaultTenant. Ignored when Required.
	Default string
	// Required refuses a request no source names a tenant for, with
	// UNAUTHENTICATED (HTTP 401).
	Required bool
	// Quotas holds the per-tenant limits; nil means no limits (tenants
	// are identified, counted and stored, not throttled).
	Quotas *QuotaFile
}

// TenantAuthenticator is an Authenticator whose credentials may name a
// tenant (TokenFile does). tenant is "" when the credential names none.
type TenantAuthenticator interface {
	Authenticator
	AuthenticateTenant(r *http.Request) (tenant string, ok bool)
}

// tenancy is the handler's tenant machinery: identity. The tenants'
// states, quotas and counters are the pipeline's (ingest.TenantsConfig).
type tenancy struct {
	sources  []TenantSource
	header   string
	cert     CertField
	def      string
	required bool
}

func newTenancy(cfg *TenantConfig, hasTenantAuth bool) *tenancy {
	t := &tenancy{sources: cfg.Sources, header: cfg.Header, cert: cfg.CertField, def: cfg.Default, required: cfg.Required}
	if t.header == "" {
		t.header = DefaultTenantHeader
	}
	if err := CheckTenantHeader(t.header); err != nil {
		panic(fmt.Sprintf("handler.New: TenantConfig.Header %s", err))
	}
	if t.def == "" {
		t.def = otlp.DefaultTenant
	}
	if len(t.sources) == 0 {
		if hasTenantAuth {
			t.sources = append(t.sources, TenantFromToken)
		}
		t.sources = append(t.sources, TenantFromHeader)
		if t.cert != "" {
			t.sources = append(t.sources, TenantFromCert)
		}
	}
	return t
}

// identify finds the tenant of r (tokenTenant is what the bearer token
// named, if anything) and returns r with the tenant in its context. A
// request it refuses has been answered: ok is false.
func (h *Handler) identify(w http.ResponseWriter, r *http.Request, grpc bool, tokenTenant string) (_ *http.Request, ok bool) {
	t := h.ten
	name, src := "", TenantSource(0)
	for _, s := range t.sources {
		switch s {
		case TenantFromToken:
			name = tokenTenant
		case TenantFromHeader:
			vs := r.Header.Values(t.header)
			if len(vs) > 1 {
				h.refuseEarly(w, r, grpc, http.StatusBadRequest, grpcwire.Errorf(grpcwire.InvalidArgument,
					"%d %s headers sent: send exactly one, naming the tenant", len(vs), t.header))
				return r, false
			}
			if len(vs) == 1 {
				name = strings.TrimSpace(vs[0])
			}
		case TenantFromCert:
			// Only a certificate the TLS handshake verified against
			// the client CAs can name a tenant.
			if t.cert != "" && r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
				name = t.cert.of(r.TLS.VerifiedChains[0][0])
			}
		}
		if name != "" {
			src = s
			break
		}
	}
	if name == "" {
		if t.required {
			if !grpc {
				// RFC 9110 section 15.5.2: a 401 carries a challenge.
				w.Header().Set("WWW-Authenticate", `Bearer realm="otlp-lite"`)
			}
			h.refuseEarly(w, r, grpc, http.StatusUnauthorized, grpcwire.Errorf(grpcwire.Unauthenticated,
				"no tenant: this server requires one (%s)", t.describeSources()))
			return r, false
		}
		name = t.def
	} else if err := otlp.CheckClientTenantName(name); err != nil {
		// INVALID_ARGUMENT (400), not UNAUTHENTICATED: the credentials
		// may be fine, the tenant name as sent is malformed and only
		// the client can fix it; neither is retried by OTLP clients.
		h.refuseEarly(w, r, grpc, http.StatusBadRequest, grpcwire.Errorf(grpcwire.InvalidArgument,
			"tenant name from the %s %s", t.sourceName(src), err))
		return r, false
	}
	// A token's tenant is the operator's (a line of the token file), as
	// is the default tenant (src 0): they are known, and keep their own
	// state whatever names a header invents. A certificate's is not: a
	// CA may issue one per device.
	// A name the client chose: a sink bounds what it may create (the
	// Kafka sink's topics, as -kafka-max-client-topics).
	return r.WithContext(h.p.WithTenant(r.Context(), name, src == TenantFromToken || src == 0)), true
}

// requestTenant returns the tenant r was attributed to, as sent (a
// checked name: at most otlp.MaxTenantNameLength bytes of A-Z a-z 0-9 . _ -,
// safe in any log line), and whether it has one.
func requestTenant(r *http.Request) (string, bool) {
	return otlp.TenantFrom(r.Context())
}

func (t *tenancy) sourceName(s TenantSource) string {
	switch s {
	case TenantFromToken:
		return "bearer token"
	case TenantFromHeader:
		return "header " + t.header
	case TenantFromCert:
		return "client certificate's " + string(t.cert)
	}
	return "request"
}

func (t *tenancy) describeSources() string {
	var parts []string
	for _, s := range t.sources {
		switch s {
		case TenantFromToken:
			parts = append(parts, "a bearer token with a tenant")
		case TenantFromHeader:
			parts = append(parts, "the header "+t.header)
		case TenantFromCert:
			parts = append(parts, "a client certificate with a "+string(t.cert))
		}
	}
	return "send " + strings.Join(parts, " or ")
}

// tenantExempt reports whether r needs no tenant: gRPC health checks and
// CORS preflights carry no data (and come without credentials).
func (h *Handler) tenantExempt(r *http.Request, grpc bool) bool {
	if grpc {
		service, _, ok := splitMethod(r.URL.Path)
		return ok && service == healthService
	}
	return r.Method == http.MethodOptions
}

// refuseEarly answers a request refused before its body is read, in its
// protocol's form.
func (h *Handler) refuseEarly(w http.ResponseWriter, r *http.Request, grpc bool, httpStatus int, st *grpcwire.Status) {
	if grpc {
		call, early := grpcwire.StartCall(w, r, h.limits)
		if early != nil {
			h.recordRefusal(r, ingest.GRPC, 0, early)
			return
		}
		h.refuseGRPC(call, ingest.GRPC, st)
		call.Close()
		return
	}
	h.cors.apply(w, r)
	h.writeHTTPError(w, r, requestEncoding(r), httpStatus, st)
}
