package kafka

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// The exported defaults (flag defaults) and otlp's signal table agree.
func TestDefaultTopics(t *testing.T) {
	for sig, want := range map[otlp.Signal]string{otlp.Traces: DefaultTracesTopic, otlp.Metrics: DefaultMetricsTopic, otlp.Logs: DefaultLogsTopic, otlp.Profiles: DefaultProfilesTopic} {
		if got := sig.Info().KafkaTopic; got != want {
			t.Errorf("%s: table says %q, default is %q", sig, got, want)
		}
	}
}
