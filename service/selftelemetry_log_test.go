package service

import (
	"bytes"
	"log/slog"
	"slices"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/internal/redact"
)

// TestSelfLogs: the log tee keeps WARN and above, with the attributes of
// WithAttrs and WithGroup as dotted keys and registered secrets hidden,
// passes every record its own handler takes on, and keeps at most
// selfLogMaxRecords between pushes, counting what it drops.
func TestSelfLogs(t *testing.T) {
	redact.Register("tee-secret-42")
	var out bytes.Buffer
	base, _ := NewLogger(&out, "text", "error")
	logger, buf := withSelfLogs(base)
	buf.dropped = metrics.NewSet().NewCounter("dropped_total")
	logger.Info("not kept")
	logger.With("dest", "d1").WithGroup("g").Warn("refused by tee-secret-42", "code", 7)
	recs := buf.take()
	if len(recs) != 1 {
		t.Fatalf("%d records kept, want 1", len(recs))
	}
	r := recs[0]
	if r.level != slog.LevelWarn || r.msg != "refused by <redacted>" ||
		!slices.Equal(r.attrs, [][2]string{{"dest", "d1"}, {"g.code", "7"}}) {
		t.Fatalf("record kept: %+v", r)
	}
	if out.Len() != 0 {
		t.Fatalf("the error-level handler wrote a warning: %q", out.String())
	}
	logger.Error("shown")
	if !bytes.Contains(out.Bytes(), []byte("shown")) {
		t.Fatalf("the handler did not get the error: %q", out.String())
	}
	for range selfLogMaxRecords + 10 {
		logger.Warn("w")
	}
	if n := len(buf.take()); n != selfLogMaxRecords {
		t.Fatalf("%d records kept, want %d", n, selfLogMaxRecords)
	}
	if d := buf.dropped.Get(); d != 11 {
		t.Fatalf("%d dropped, want 11 (the error above, then 10 warnings)", d)
	}
	if severity(slog.LevelWarn) != 13 || severity(slog.LevelError) != 17 {
		t.Fatalf("severities %d %d", severity(slog.LevelWarn), severity(slog.LevelError))
	}
}
