package otlpclient

import "github.com/otlp-lite/otlp-lite/otlp"

// Signal selects the OTLP signal a client exports: an alias of otlp.Signal.
// The zero Signal, like any value that is not a signal, means Traces.
type Signal = otlp.Signal

// The OTLP signals.
const (
	Traces  = otlp.Traces
	Metrics = otlp.Metrics
	Logs    = otlp.Logs
	// Profiles is OTLP's profiles signal (Alpha in v1.11): its requests
	// carry their ProfilesDictionary, which both exporters send with them.
	Profiles = otlp.Profiles
)

// ParseSignal parses "traces", "metrics", "logs" or "profiles".
func ParseSignal(name string) (Signal, error) { return otlp.ParseSignal(name) }

// signalInfo is s's row of the signal table; Traces for the zero Signal
// and for values that are not signals.
func signalInfo(s Signal) *otlp.SignalInfo {
	if i := s.Info(); i != nil {
		return i
	}
	return otlp.Traces.Info()
}
