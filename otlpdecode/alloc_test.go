package otlpdecode

import (
	"os"
	"testing"
)

// TestZeroAllocs proves the hot paths allocate nothing: Check* on every
// request, and steady-state Decode with every iterator walked (the decoder
// reused, so its buffers have grown once).
func TestZeroAllocs(t *testing.T) {
	traces := golden(t, "traces_500x10.pb")
	tracesAll := golden(t, "traces_all_fields.pb")
	metrics := golden(t, "metrics_all_kinds.pb")
	logs := golden(t, "logs_all_fields.pb")
	var td TracesDecoder
	var md MetricsDecoder
	var ld LogsDecoder
	tests := []struct {
		name string
		fn   func()
	}{
		{"CheckTraces", func() { mustOK(t)(CheckTraces(traces, nil)) }},
		{"CheckTraces/ValidateUTF8", func() { mustOK(t)(CheckTraces(tracesAll, utf8Opts)) }},
		{"CheckMetrics", func() { mustOK(t)(CheckMetrics(metrics, utf8Opts)) }},
		{"CheckLogs", func() { mustOK(t)(CheckLogs(logs, utf8Opts)) }},
		{"TracesDecoder", func() {
			if _, _, err := walkTraces(&td, traces); err != nil {
				t.Fatal(err)
			}
		}},
		{"TracesDecoder/all fields", func() {
			if _, _, err := walkTraces(&td, tracesAll); err != nil {
				t.Fatal(err)
			}
		}},
		{"MetricsDecoder", func() {
			if _, err := walkMetrics(&md, metrics); err != nil {
				t.Fatal(err)
			}
		}},
		{"LogsDecoder", func() {
			if _, err := walkLogs(&ld, logs); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		tt.fn() // warm-up: decoder buffers grow once
		if n := testing.AllocsPerRun(20, tt.fn); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tt.name, n)
		}
	}
}

func mustOK(t *testing.T) func(Result, error) {
	return func(res Result, err error) {
		if err != nil || res.Rejected != 0 {
			t.Fatalf("unexpected %+v, %v", res, err)
		}
	}
}

// TestDecodeStopsAtCallbackError checks that the callback's error is
// returned unchanged and stops the walk.
func TestDecodeStopsAtCallbackError(t *testing.T) {
	stop := errStop{}
	var d TracesDecoder
	n := 0
	err := d.Decode(golden(t, "traces_500x10.pb"), func(*Resource, *Scope, *Span) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("Decode returned %v after %d spans, want the callback's error after 3", err, n)
	}
	// The decoder is reusable after an error.
	if spans, _, err := walkTraces(&d, golden(t, "traces_500x10.pb")); err != nil || spans != 500 {
		t.Fatalf("reuse: %d spans, %v", spans, err)
	}
	var md MetricsDecoder
	if err := md.Decode(golden(t, "metrics_all_kinds.pb"), func(*Resource, *Scope, *Metric) error { return stop }); err != stop {
		t.Fatalf("MetricsDecoder returned %v", err)
	}
	var ld LogsDecoder
	if err := ld.Decode(golden(t, "logs_all_fields.pb"), func(*Resource, *Scope, *LogRecord) error { return stop }); err != stop {
		t.Fatalf("LogsDecoder returned %v", err)
	}
}

type errStop struct{}

func (errStop) Error() string { return "stop" }

// TestMetricsDecoderSurvivesClobberedView: a callback that overwrites the
// *Metric it was given must not make the next metric's iterators panic.
func TestMetricsDecoderSurvivesClobberedView(t *testing.T) {
	src, err := os.ReadFile("../testdata/otlp/metrics_all_kinds.pb")
	if err != nil {
		t.Skip(err)
	}
	var d MetricsDecoder
	err = d.Decode(src, func(_ *Resource, _ *Scope, m *Metric) error {
		for it := m.HistogramDataPoints(); it.Next(); {
		}
		for it := m.ExponentialHistogramDataPoints(); it.Next(); {
		}
		*m = Metric{}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
