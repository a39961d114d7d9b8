package otlpjson

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// Every signal has its JSON messages, named after it; nothing else does.
func TestForSignal(t *testing.T) {
	for _, sig := range otlp.Signals {
		data, resp, ok := ForSignal(sig)
		if !ok || data.String() != sig.Info().Data || resp.String() != sig.Info().Response {
			t.Errorf("%v: %v %v %v, want %s and %s", sig, data, resp, ok, sig.Info().Data, sig.Info().Response)
		}
	}
	for _, sig := range []otlp.Signal{0, otlp.MaxSignal + 1} {
		if _, _, ok := ForSignal(sig); ok {
			t.Errorf("ForSignal(%d) is ok", sig)
		}
	}
}
