package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// -log-format json writes one JSON object per line; in both formats a
// multi-line error stays on one line.
func TestLogFormats(t *testing.T) {
	joined := errors.Join(errors.New("first failure"), errors.New("second failure"))
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		logger, err := newLogger(&buf, format, slog.LevelInfo)
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
	var stdout, stderr bytes.Buffer
	if code := run([]string{"serve", "-log-format", "xml"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "-log-format") {
		t.Fatalf("serve -log-format xml: exit %d, %q", code, stderr.String())
	}
}
