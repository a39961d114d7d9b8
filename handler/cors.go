package handler

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// CORSConfig lets browsers send OTLP/HTTP from other origins (the Fetch
// standard's CORS protocol). It is off unless AllowedOrigins is non-empty.
type CORSConfig struct {
	// AllowedOrigins are exact origins ("https://app.example.com"),
	// patterns with one "*" ("https://*.example.com"), or "*" for any.
	AllowedOrigins []string
	// AllowedHeaders are request headers allowed besides the ones every
	// OTLP client sends (Content-Type, Content-Encoding, Accept,
	// Accept-Encoding, X-Requested-With).
	AllowedHeaders []string
	// MaxAge is how long, in seconds, a browser may cache a preflight
	// answer; zero leaves Access-Control-Max-Age out.
	MaxAge int
}

type corsPolicy struct {
	origins []string
	headers map[string]bool
	maxAge  string
}

// baseCORSHeaders are the request headers OTLP/HTTP clients need (and
// Idempotency-Key, docs/exactly-once.md).
var baseCORSHeaders = []string{"content-type", "content-encoding", "accept", "accept-encoding", "x-requested-with", "idempotency-key"}

// newCORSPolicy returns the policy for cfg. With auth on, browsers must be
// allowed to send the Authorization header the receiver requires.
func newCORSPolicy(cfg CORSConfig, auth bool) corsPolicy {
	p := corsPolicy{origins: cfg.AllowedOrigins}
	if len(p.origins) == 0 {
		return p
	}
	p.headers = map[string]bool{}
	headers := append(slices.Clone(baseCORSHeaders), cfg.AllowedHeaders...)
	if auth {
		headers = append(headers, "authorization")
	}
	for _, h := range headers {
		p.headers[strings.ToLower(strings.TrimSpace(h))] = true
	}
	if cfg.MaxAge > 0 {
		p.maxAge = strconv.Itoa(cfg.MaxAge)
	}
	return p
}

func (p *corsPolicy) enabled() bool { return len(p.origins) > 0 }

func (p *corsPolicy) originAllowed(origin string) bool {
	for _, o := range p.origins {
		if o == "*" || o == origin {
			return true
		}
		if prefix, suffix, ok := strings.Cut(o, "*"); ok &&
			len(origin) > len(prefix)+len(suffix) &&
			strings.HasPrefix(origin, prefix) && strings.HasSuffix(origin, suffix) {
			return true
		}
	}
	return false
}

// apply adds CORS response headers for an allowed origin and answers a
// preflight request. It reports whether the request was a preflight and is
// now fully answered.
func (p *corsPolicy) apply(w http.ResponseWriter, r *http.Request) bool {
	if !p.enabled() {
		return false
	}
	origin := r.Header.Get("Origin")
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	h := w.Header()
	h.Add("Vary", "Origin")
	if origin == "" || !p.originAllowed(origin) {
		if preflight {
			// Like the collector: no CORS headers, so the browser stops.
			w.WriteHeader(http.StatusNoContent)
		}
		return preflight
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if !preflight {
		// Retry-After is not a CORS-safelisted response header: without
		// this a browser client cannot honour a throttling delay.
		h.Set("Access-Control-Expose-Headers", "Retry-After")
		return false
	}
	h.Add("Vary", "Access-Control-Request-Method")
	h.Add("Vary", "Access-Control-Request-Headers")
	h.Set("Access-Control-Allow-Methods", "POST")
	// Each allowed name once, in the order first asked: the answer is
	// bounded by the configured names, whatever a request repeats (a
	// request header of "content-type," a hundred thousand times would
	// otherwise be answered at its own size).
	var allowed []string
	for name := range strings.SplitSeq(r.Header.Get("Access-Control-Request-Headers"), ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "" && p.headers[name] && !slices.Contains(allowed, name) {
			allowed = append(allowed, name)
		}
	}
	if len(allowed) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(allowed, ", "))
	}
	if p.maxAge != "" {
		h.Set("Access-Control-Max-Age", p.maxAge)
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}
