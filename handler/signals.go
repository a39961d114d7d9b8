package handler

import (
	"net/http"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// signalKind is a signal as the handler serves it: the protocol's row for it
// (otlp.SignalInfo: names, services, paths, item words), and the validation
// and OTLP/JSON message types the handler runs for it.
type signalKind struct {
	signal otlp.Signal
	*otlp.SignalInfo
	check  func(src []byte, opts *otlpdecode.Options) (otlpdecode.Result, error)
	filter func(dst, src []byte, opts *otlpdecode.Options) ([]byte, error)
	// jsonRequest and jsonResponse are the OTLP/JSON message types.
	jsonRequest, jsonResponse otlpjson.MessageType
	// countSamples makes the otelcol_receiver_* counters count samples
	// (Result.Samples) rather than items: the Collector's receivers count
	// profiles that way (otelcol_receiver_accepted_profile_samples), while
	// the partial success counts profiles (rejected_profiles).
	countSamples bool
	// checkHeader, when set, refuses a request by its headers (gRPC
	// metadata) before its body is read.
	checkHeader func(http.Header) *grpcwire.Status
}

var signalKinds = [...]signalKind{
	otlp.Traces:  newSignalKind(otlp.Traces, otlpdecode.CheckTraces, otlpdecode.AppendValidTraces),
	otlp.Metrics: newSignalKind(otlp.Metrics, otlpdecode.CheckMetrics, otlpdecode.AppendValidMetrics),
	otlp.Logs:    newSignalKind(otlp.Logs, otlpdecode.CheckLogs, otlpdecode.AppendValidLogs),
	otlp.Profiles: func() signalKind {
		k := newSignalKind(otlp.Profiles, otlpdecode.CheckProfiles, otlpdecode.AppendValidProfiles)
		k.countSamples = true
		k.checkHeader = checkProfilesVersion
		return k
	}(),
}

// newSignalKind is sig's row: the protocol's facts from otlp, its JSON
// messages from otlpjson, and its validation.
func newSignalKind(sig otlp.Signal,
	check func([]byte, *otlpdecode.Options) (otlpdecode.Result, error),
	filter func([]byte, []byte, *otlpdecode.Options) ([]byte, error)) signalKind {
	req, resp, _ := otlpjson.ForSignal(sig)
	return signalKind{signal: sig, SignalInfo: sig.Info(), check: check, filter: filter, jsonRequest: req, jsonResponse: resp}
}

// headerStatus is the refusal of a request for kind by its headers, or nil.
func (kind *signalKind) headerStatus(hdr http.Header) *grpcwire.Status {
	if kind.checkHeader == nil {
		return nil
	}
	return kind.checkHeader(hdr)
}

// kindOf returns how the handler serves sig; nil if sig is 0 (no signal).
func kindOf(sig otlp.Signal) *signalKind {
	if sig == 0 || int(sig) >= len(signalKinds) {
		return nil
	}
	return &signalKinds[sig]
}
