package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// -log-format json writes one JSON object per line; in both formats a
// multi-line error stays on one line.
func TestLogFormats(t *testing.T) {
	joined := errors.Join(errors.New("first failure"), errors.New("second failure"))
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		logger, err := NewLogger(&buf, format, "info")
		if err != nil {
			t.Fatal(err)
		}
		logger.Error("server failed", "err", joined, "note", "a\nb")
		out := strings.TrimSuffix(buf.String(), "\n")
		if strings.Contains(out, "\n") || strings.Contains(out, `\n`) {
			t.Fatalf("%s: not one line, or a literal \\n: %q", format, out)
		}
		if format == "json" {
			var rec map[string]any
			if err := json.Unmarshal([]byte(out), &rec); err != nil {
				t.Fatalf("json line does not parse: %v: %s", err, out)
			}
			if rec["msg"] != "server failed" || rec["err"] != "first failure; second failure" || rec["level"] != "ERROR" {
				t.Fatalf("json record %v", rec)
			}
		} else if !strings.Contains(out, `err="first failure; second failure"`) {
			t.Fatalf("text line %q", out)
		}
	}
	if _, err := New(Config{LogFormat: "xml"}); err == nil || !strings.Contains(err.Error(), "-log-format") {
		t.Fatalf("LogFormat xml: %v", err)
	}
}

// TestLogValueBounded: a log value quoting what a client sent (a refused
// path, a peer's error) is cut to maxLogValue bytes, so a line's size does
// not follow its input: the refusal log bounds lines per second, this
// bounds each line (60 requests of HPACK-compressed headers wrote 300 MB of
// log before it).
func TestLogValueBounded(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		logger, err := NewLogger(&buf, format, "info")
		if err != nil {
			t.Fatal(err)
		}
		huge := strings.Repeat("é", 2<<20) // 4 MiB, two bytes a rune
		logger.Warn("refused", "path", huge, "err", errors.New(huge))
		out := buf.String()
		if len(out) > 4*maxLogValue {
			t.Fatalf("%s: a line of %d bytes for two 4 MiB values", format, len(out))
		}
		if !strings.Contains(out, "... (4194304 bytes)") || !strings.Contains(out, strings.Repeat("é", 100)) {
			t.Fatalf("%s: the cut value does not keep its prefix and say its length: %.300q", format, out)
		}
		if format == "json" {
			var rec map[string]any
			if err := json.Unmarshal([]byte(out), &rec); err != nil {
				t.Fatalf("json line does not parse after the cut: %v", err)
			}
		}
	}
}
