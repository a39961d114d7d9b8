package otlpview_test

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/internal/viewwalk"
	. "github.com/otlp-lite/otlp-lite/otlpview"
)

// TestZeroAllocs proves that a steady-state Decode with every iterator
// walked allocates nothing (the decoder reused, so that its buffers have
// grown once).
func TestZeroAllocs(t *testing.T) {
	var d viewwalk.Decoders
	for _, tt := range []struct {
		file string
		walk func([]byte) error
	}{
		{"traces_500x10.pb", d.Traces},
		{"traces_all_fields.pb", d.Traces},
		{"metrics_all_kinds.pb", d.Metrics},
		{"logs_all_fields.pb", d.Logs},
	} {
		src := pbtest.Golden(t, tt.file)
		run := func() {
			if err := tt.walk(src); err != nil {
				t.Fatal(err)
			}
		}
		run() // warm-up: decoder buffers grow once
		if n := testing.AllocsPerRun(20, run); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tt.file, n)
		}
	}
}

// TestDecodeStopsAtCallbackError checks that the callback's error is
// returned unchanged and stops the walk.
func TestDecodeStopsAtCallbackError(t *testing.T) {
	stop := errStop{}
	var d TracesDecoder
	n := 0
	err := d.Decode(pbtest.Golden(t, "traces_500x10.pb"), func(*Resource, *Scope, *Span) error {
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
	if spans, _, err := viewwalk.Traces(&d, pbtest.Golden(t, "traces_500x10.pb")); err != nil || spans != 500 {
		t.Fatalf("reuse: %d spans, %v", spans, err)
	}
	var md MetricsDecoder
	if err := md.Decode(pbtest.Golden(t, "metrics_all_kinds.pb"), func(*Resource, *Scope, *Metric) error { return stop }); err != stop {
		t.Fatalf("MetricsDecoder returned %v", err)
	}
	var ld LogsDecoder
	if err := ld.Decode(pbtest.Golden(t, "logs_all_fields.pb"), func(*Resource, *Scope, *LogRecord) error { return stop }); err != stop {
		t.Fatalf("LogsDecoder returned %v", err)
	}
}

type errStop struct{}

func (errStop) Error() string { return "stop" }

// TestMetricsDecoderSurvivesClobberedView: a callback that overwrites the
// *Metric it was given must not make the next metric's iterators panic.
func TestMetricsDecoderSurvivesClobberedView(t *testing.T) {
	var d MetricsDecoder
	err := d.Decode(pbtest.Golden(t, "metrics_all_kinds.pb"), func(_ *Resource, _ *Scope, m *Metric) error {
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
