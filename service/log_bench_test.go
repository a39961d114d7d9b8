package service

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/internal/redact"
)

// BenchmarkRequestLogLine is the cost of the log's redaction on a debug
// request line (the busiest log line): oneLineAttr alone, as before, and
// composed with redactAttr before and after a secret is registered.
func BenchmarkRequestLogLine(b *testing.B) {
	line := func(l *slog.Logger) {
		l.Debug("request", "peer", "127.0.0.1:51234", "transport", "grpc", "signal", "traces", "items", 500,
			"rejected", 0, "wire_bytes", 21034, "bytes", 98311, "result", "OK", "duration", 1200*time.Microsecond)
	}
	for _, c := range []struct {
		name    string
		replace func([]string, slog.Attr) slog.Attr
		secret  bool
	}{
		{"oneLineAttr", oneLineAttr, false},
		{"redacted", func(g []string, a slog.Attr) slog.Attr { return redactAttr(oneLineAttr(g, a)) }, false},
		{"redacted-with-secrets", func(g []string, a slog.Attr) slog.Attr { return redactAttr(oneLineAttr(g, a)) }, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.secret {
				redact.Register("bench-secret-value", "Bearer bench-token-1234")
			}
			l := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: c.replace}))
			b.ReportAllocs()
			for b.Loop() {
				line(l)
			}
		})
	}
}
