package redact

import (
	"strings"
	"testing"
)

// The one rule: names whose values are secrets, and the names that only
// say where a secret is or whose it is.
func TestName(t *testing.T) {
	for _, n := range []string{
		"kafka-sasl-password", "sasl-password", "OTLP_LITE_KAFKA_SASL_PASSWORD", "token", "auth-token",
		"Authorization", "proxy-authorization", "Cookie", "Set-Cookie", "X-Api-Key", "x-auth-token",
		"X-Amz-Security-Token", "api_key", "Ocp-Apim-Subscription-Key", "client_secret", "private-key", "db-pwd", "X-Session-Id", "session",
	} {
		if !Name(n) {
			t.Errorf("Name(%q) = false, want a secret", n)
		}
	}
	for _, n := range []string{
		"auth-token-file", "token-file", "sasl-password-env", "sasl-password-file", "kafka-sasl-username",
		"kafka-sasl-mechanism", "tls-key", "kafka-tls-key", "tls-cert", "kafka-key-by-trace-id",
		"kafka-message-key-from-metadata-key-traces", "kafka-include-metadata-keys", "X-Scope-OrgID",
		"User-Agent", "Content-Type", "forward", "header", "grpc-addr", "kafka-consume-session-timeout", "",
	} {
		if Name(n) {
			t.Errorf("Name(%q) = true, want not a secret", n)
		}
	}
}

// URL hides what a forwarding URL carries, parsed or not.
func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"grpc://x:1", "grpc://x:1"},
		{"a=grpc://x:1?header=Authorization:Bearer%20S3KR1T&compression=none", "a=grpc://x:1?header=Authorization:<redacted>&compression=none"},
		{"grpc://x:1?header=Authorization%3ABearer%20S3KR1T", "grpc://x:1?header=Authorization%3A<redacted>"},
		{"grpc://x:1?header=X-Scope-OrgID:team-a&header=X-Api-Key:S3KR1T", "grpc://x:1?header=X-Scope-OrgID:team-a&header=X-Api-Key:<redacted>"},
		{"https://user:S3KR1T@x:1/p?x=1", "https://user:<redacted>@x:1/p?x=1"},
		{"https://S3KR1T@x:1", "https://<redacted>@x:1"},
		{"kafka://b:9092?sasl-password=S3KR1T&sasl-password-env=VAR&tls-key=/k.pem", "kafka://b:9092?sasl-password=<redacted>&sasl-password-env=VAR&tls-key=/k.pem"},
		// Malformed: a newline in the header, a header without a colon,
		// a control character that keeps it from parsing.
		{"grpc://x:1?header=Authorization%0ABearer%20S3KR1T", "grpc://x:1?header=<redacted>"},
		{"grpc://x:1?header=Authorization:Bearer S3KR1T\nfoo", "grpc://x:1?header=Authorization:<redacted>"},
		{"grpc://x:1?token=S3KR1T;bogus", "grpc://x:1?token=<redacted>;bogus"},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestArgs(t *testing.T) {
	got := strings.Join(Args([]string{"serve", "-kafka-sasl-password", "S3KR1T", "--kafka-sasl-password=S3KR1T",
		"-forward", "a=grpc://x:1?header=Authorization:S3KR1T", "-forward=b=http://u:S3KR1T@x:1", "-admin-pprof", "-auth-token-file", "/t"}), " ")
	want := "serve -kafka-sasl-password <redacted> --kafka-sasl-password=<redacted> -forward a=grpc://x:1?header=Authorization:<redacted> -forward=b=http://u:<redacted>@x:1 -admin-pprof -auth-token-file /t"
	if got != want {
		t.Fatalf("Args\n = %q\nwant %q", got, want)
	}
}

// A registered secret is hidden in free text, in the forms an output may
// quote it in; short values are not searched for.
func TestRegisterString(t *testing.T) {
	Register("Bearer tok-XYZZY/1", "abc")
	for _, in := range []string{
		`HTTP 400: echo authorization: Bearer tok-XYZZY/1`,
		`the credential tok-XYZZY/1 alone`,
		`escaped tok-XYZZY%2F1`,
	} {
		if got := String(in); strings.Contains(got, "XYZZY") || !strings.Contains(got, Mark) {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
	if got := String("abc abcd"); got != "abc abcd" {
		t.Errorf("a value shorter than MinLen was searched for: %q", got)
	}
}

func TestLine(t *testing.T) {
	if got := Line("a\nb\r\x1b[31m\u2028c\td"); got != `a\nb\r\x1b[31m\u2028c\td` {
		t.Fatalf("Line = %q", got)
	}
	if got := Line("plain"); got != "plain" {
		t.Fatalf("Line(plain) = %q", got)
	}
}

func TestWriter(t *testing.T) {
	Register("wr1-SeCrEt")
	var b strings.Builder
	w := Writer(&b)
	msg := "replay: the target answered: wr1-SeCrEt is wrong\n"
	if n, err := w.Write([]byte(msg)); n != len(msg) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if b.String() != "replay: the target answered: <redacted> is wrong\n" {
		t.Fatalf("wrote %q", b.String())
	}
}
