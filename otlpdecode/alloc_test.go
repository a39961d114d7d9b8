package otlpdecode

import (
	"testing"
)

// TestZeroAllocs proves the hot path allocates nothing: Check* runs on
// every request. (otlpview's tests prove the same of its decoders.)
func TestZeroAllocs(t *testing.T) {
	traces := golden(t, "traces_500x10.pb")
	tracesAll := golden(t, "traces_all_fields.pb")
	metrics := golden(t, "metrics_all_kinds.pb")
	logs := golden(t, "logs_all_fields.pb")
	tests := []struct {
		name string
		fn   func()
	}{
		{"CheckTraces", func() { mustOK(t)(CheckTraces(traces, nil)) }},
		{"CheckTraces/ValidateUTF8", func() { mustOK(t)(CheckTraces(tracesAll, utf8Opts)) }},
		{"CheckMetrics", func() { mustOK(t)(CheckMetrics(metrics, utf8Opts)) }},
		{"CheckLogs", func() { mustOK(t)(CheckLogs(logs, utf8Opts)) }},
	}
	for _, tt := range tests {
		tt.fn() // warm-up
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
