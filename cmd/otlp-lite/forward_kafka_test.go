//go:build !nokafka

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/otlp-lite/otlp-lite/forward"
)

// TestForwardFlagShowsKafkaURL: the effective configuration (-forward's
// Redacted) shows a kafka:// destination's URL as given, which names where
// the password is, never the password.
func TestForwardFlagShowsKafkaURL(t *testing.T) {
	pwdFile := filepath.Join(t.TempDir(), "pwd")
	if err := os.WriteFile(pwdFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fl := forwardList{dests: new([]forward.Destination)}
	given := "k=kafka://127.0.0.1:9092/?sasl-mechanism=PLAIN&sasl-username=otlp&sasl-password-file=" + pwdFile
	if err := fl.Set(given); err != nil {
		t.Fatal(err)
	}
	if r := fl.Redacted(); r != given {
		t.Errorf("Redacted = %q, want %q", r, given)
	}
}
