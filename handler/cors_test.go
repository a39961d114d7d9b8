package handler

import (
	"strings"
	"testing"
)

// TestCORSPreflightAnswerBounded: a preflight's Access-Control-Allow-Headers
// names each allowed header once, however often the request repeats it, so
// the answer is bounded by the configuration, not by the request (before,
// 440 KB of "Content-Type,x-tenant," were answered with 480 KB).
func TestCORSPreflightAnswerBounded(t *testing.T) {
	cfg := Config{CORS: CORSConfig{AllowedOrigins: []string{"https://app.example.com"}, AllowedHeaders: []string{"X-Tenant"}}}
	runHTTPCases(t, cfg, []httpCase{
		{name: "preflight repeating names", method: "OPTIONS", path: "/v1/traces",
			hdr: map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST",
				"Access-Control-Request-Headers": strings.Repeat("Content-Type,x-tenant,", 20000) + "accept"},
			wantStatus: 204, wantHeader: map[string]string{"Access-Control-Allow-Headers": "content-type, x-tenant, accept"}},
	})
}
