package ingest

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// discardSink stores nothing and fails nothing.
type discardSink struct{}

func (discardSink) Write(context.Context, otlp.Signal, []byte, int) error { return nil }
func (discardSink) Close() error                                          { return nil }

// TestRequestLogOffCostsNothing: with debug off the request log's hooks do
// not allocate, write nothing and leave no record in the pooled buffers.
func TestRequestLogOffCostsNothing(t *testing.T) {
	var logs bytes.Buffer
	p := New(Config{Sink: discardSink{}, Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	out := Result{Items: 3}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		t := p.Take(ctx)
		p.StartLog(ctx, t, "10.0.0.7:51234", HTTP, otlp.Traces)
		p.countBytes(t, HTTP, 10, 20)
		p.countRequest(t, HTTP, otlp.Traces, &out, nil)
		p.Done(t)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per request with debug off", allocs)
	}
	if logs.Len() != 0 {
		t.Fatalf("logged with debug off: %s", logs.String())
	}
	tk := p.Take(ctx)
	defer p.Done(tk)
	if tk.rlog.on || tk.rlog.ctx != nil {
		t.Fatalf("record kept: %+v", tk.rlog)
	}
}

// TestRefusalLevelTable: what clients do in normal operation (go away, let
// their own deadline pass) is logged at DEBUG, not WARN; a body that
// stalls past our read timeout stays WARN (handler's TestRefusalLevel
// checks both protocols' stall messages begin with StalledPrefix).
func TestRefusalLevelTable(t *testing.T) {
	for _, tc := range []struct {
		st   *grpcwire.Status
		want slog.Level
	}{
		{grpcwire.Errorf(grpcwire.Canceled, "context canceled"), slog.LevelDebug},
		{grpcwire.Errorf(grpcwire.DeadlineExceeded, "context deadline exceeded"), slog.LevelDebug},
		{grpcwire.Errorf(grpcwire.DeadlineExceeded, "request body stalled: no data within the 30s read timeout"), slog.LevelWarn},
		{grpcwire.Errorf(grpcwire.InvalidArgument, "cannot decode"), slog.LevelWarn},
		{grpcwire.Errorf(grpcwire.Unavailable, "cannot store"), slog.LevelWarn},
	} {
		if got := refusalLevel(tc.st); got != tc.want {
			t.Errorf("%v %q: level %v, want %v", tc.st.Code, tc.st.Message, got, tc.want)
		}
	}

}
