package forward

import (
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// TestParseUnixURL: SCHEME://unix:PATH is a destination on a Unix socket,
// for every protocol, its query read as any other; TLS to a socket needs
// tls-server-name (a path names no host), and a socket's URL has no path
// prefix.
func TestParseUnixURL(t *testing.T) {
	good := map[string]func(Destination) bool{
		"a=grpc://unix:/run/otlp.sock?compression=none": func(d Destination) bool {
			return d.Protocol == GRPC && d.Endpoint == "unix:/run/otlp.sock" && d.TLS == nil && d.Compression.String() == "identity" &&
				d.String() == "grpc://unix:/run/otlp.sock"
		},
		"a=stream://unix:///run/otlp.sock": func(d Destination) bool {
			return d.Protocol == Stream && d.Endpoint == "unix:/run/otlp.sock" && d.InFlight == DefaultStreamInFlight
		},
		"a=http://unix:rel.sock?encoding=json": func(d Destination) bool {
			return d.Protocol == HTTP && d.Endpoint == "unix:rel.sock" && d.JSON && d.Path == ""
		},
		"a=grpcs://unix:/run/otlp.sock?tls-server-name=otel.example": func(d Destination) bool {
			return d.TLS != nil && d.TLS.ServerName == "otel.example"
		},
		"a=https://unix:/run/otlp.sock?insecure-skip-verify=true": func(d Destination) bool {
			return d.TLS != nil && d.TLS.InsecureSkipVerify
		},
	}
	for in, ok := range good {
		d, err := Parse(in)
		if err != nil || !ok(d) {
			t.Errorf("Parse(%q) = %+v, %v", in, d, err)
		}
	}
	bad := map[string]string{
		"a=grpcs://unix:/run/otlp.sock":              "a socket path names no host",
		"a=grpc://unix://host/run/otlp.sock":         "cannot parse endpoint",
		"a=grpc://unix:":                             "socket path is empty",
		"a=grpc://unix:/x.sock#frag":                 "control character, ? or #",
		"a=grpc://unix:/x.sock?tls-ca=x":             "need a TLS scheme",
		"a=http://unix:/x.sock?color=red":            "unknown parameter",
		"a=grpc://unix:/" + strings.Repeat("d", 120): "more than the 107",
	}
	for in, want := range bad {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") ||
			!strings.HasPrefix(err.Error(), "invalid -forward a: ") {
			t.Errorf("Parse(%q) = %v, want one line containing %q", in, err, want)
		}
	}
	// Redaction holds for a socket's URL: its errors, and the URL as the
	// /config page and the logs show it, hide a credential header.
	const secret = "s3cr3t-token"
	raw := "grpcs://unix:/run/otlp.sock?header=Authorization:Bearer%20" + secret
	if _, err := Parse("a=" + raw); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("Parse of a socket URL with a credential: %v", err)
	}
	if shown := redact.URL(raw); strings.Contains(shown, secret) || !strings.Contains(shown, "unix:/run/otlp.sock") {
		t.Errorf("redact.URL(%q) = %q", raw, shown)
	}
	if got := otlpclient.AuthorityOf("unix:/run/otlp.sock"); got != "localhost" {
		t.Errorf("AuthorityOf = %q", got)
	}
}

// TestUnixHostKeepsItsMeaning: a URL whose host is literally "unix" means
// what it meant before sockets: grpc://unix:4317 is host unix, port 4317,
// which an Endpoint string cannot say any more (ParseEndpoint, as
// grpc-go, reads unix:4317 as the socket ./4317), so it is refused with
// the two ways out, never dialed as a socket file named 4317 in the
// working directory; and unix:PASSWORD@host is user info, refused as
// before, never a socket path that shows the password wherever the
// destination is.
func TestUnixHostKeepsItsMeaning(t *testing.T) {
	for _, in := range []string{
		"a=grpc://unix:4317",
		"a=http://unix:4318/prefix",
		"a=stream://unix:4317?compression=none",
		"a=grpcs://unix:443?tls-server-name=x",
	} {
		d, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), "unix:./") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = endpoint %q, %v; want an error naming unix:./PATH", in, d.Endpoint, err)
		}
	}
	const secret = "pa55w0rd-unix"
	d, err := Parse("a=grpc://unix:" + secret + "@collector:4317")
	if err == nil || !strings.Contains(err.Error(), "user info") || strings.Contains(err.Error(), secret) {
		t.Errorf("Parse of user info unix:PASSWORD@ = endpoint %q (shown: %q), %v; want user info refused", d.Endpoint, d.String(), err)
	}
	// A socket path that merely starts with digits or holds an @ after
	// its first / is still a socket.
	for in, want := range map[string]string{
		"a=grpc://unix:./4317":        "unix:./4317",
		"a=grpc://unix:4317.sock":     "unix:4317.sock",
		"a=grpc://unix:/run/a@b.sock": "unix:/run/a@b.sock",
		"a=grpc://unix:///run/4317":   "unix:/run/4317",
	} {
		if d, err := Parse(in); err != nil || d.Endpoint != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, d.Endpoint, err, want)
		}
	}
}

// TestUnixURLPathEscapes: a socket's path in a URL is read as a URL's path
// is, %-escapes decoded (as grpc-go decodes unix:///PATH): a space is
// written %20, as Parse's error asks of a URL in OTLP_LITE_FORWARD, where
// a literal space splits values; a bad escape is a one-line error.
func TestUnixURLPathEscapes(t *testing.T) {
	d, err := Parse("a=grpc://unix:/run/my%20otlp.sock?compression=none")
	if err != nil || d.Endpoint != "unix:/run/my otlp.sock" {
		t.Errorf("Parse of a %%20 in a socket path = %q, %v; want unix:/run/my otlp.sock", d.Endpoint, err)
	}
	if d, err := Parse("a=grpc://unix:///run/a%25b.sock"); err != nil || d.Endpoint != "unix:/run/a%b.sock" {
		t.Errorf("Parse of a %%25 in a socket path = %q, %v; want unix:/run/a%%b.sock", d.Endpoint, err)
	}
	for _, in := range []string{"a=grpc://unix:/run/a%zz.sock", "a=grpc://unix:/run/a%00.sock", "a=grpc://unix:/run/a%3F.sock"} {
		if _, err := Parse(in); err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "invalid -forward a: ") {
			t.Errorf("Parse(%q) = %v, want a one-line error", in, err)
		}
	}
}
