package ingest

import (
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// signalKind is a signal as the pipeline serves it: the protocol's row for
// it (otlp.SignalInfo: names, item words), and the validation and
// OTLP/JSON request type the pipeline runs for it.
type signalKind struct {
	signal otlp.Signal
	*otlp.SignalInfo
	check  func(src []byte, opts *otlpdecode.Options) (otlpdecode.Result, error)
	filter func(dst, src []byte, opts *otlpdecode.Options) ([]byte, error)
	// jsonRequest is the OTLP/JSON request message type.
	jsonRequest otlpjson.MessageType
	// countSamples makes the otelcol_receiver_* counters count samples
	// (Result.Samples) rather than items: the Collector's receivers count
	// profiles that way (otelcol_receiver_accepted_profile_samples), while
	// the partial success counts profiles (rejected_profiles).
	countSamples bool
}

var signalKinds = [...]signalKind{
	otlp.Traces:  newSignalKind(otlp.Traces, otlpdecode.CheckTraces, otlpdecode.AppendValidTraces),
	otlp.Metrics: newSignalKind(otlp.Metrics, otlpdecode.CheckMetrics, otlpdecode.AppendValidMetrics),
	otlp.Logs:    newSignalKind(otlp.Logs, otlpdecode.CheckLogs, otlpdecode.AppendValidLogs),
	otlp.Profiles: func() signalKind {
		k := newSignalKind(otlp.Profiles, otlpdecode.CheckProfiles, otlpdecode.AppendValidProfiles)
		k.countSamples = true
		return k
	}(),
}

// newSignalKind is sig's row: the protocol's facts from otlp, its JSON
// request from otlpjson, and its validation.
func newSignalKind(sig otlp.Signal,
	check func([]byte, *otlpdecode.Options) (otlpdecode.Result, error),
	filter func([]byte, []byte, *otlpdecode.Options) ([]byte, error)) signalKind {
	req, _, _ := otlpjson.ForSignal(sig)
	return signalKind{signal: sig, SignalInfo: sig.Info(), check: check, filter: filter, jsonRequest: req}
}

// kindOf returns how the pipeline serves sig; nil if sig is 0 (no signal)
// or unknown.
func kindOf(sig otlp.Signal) *signalKind {
	if sig == 0 || int(sig) >= len(signalKinds) {
		return nil
	}
	return &signalKinds[sig]
}
