package handler

import (
	"net/http"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// signalKind is a signal as the handler serves it: the protocol's row for it
// (otlp.SignalInfo: names, services, paths, item words), the OTLP/JSON
// response type the handler writes and the refusal by headers. Validation,
// transcoding and the counters are the pipeline's (ingest's signalKind).
type signalKind struct {
	signal otlp.Signal
	*otlp.SignalInfo
	// jsonResponse is the OTLP/JSON response message type.
	jsonResponse otlpjson.MessageType
	// checkHeader, when set, refuses a request by its headers (gRPC
	// metadata) before its body is read.
	checkHeader func(http.Header) *grpcwire.Status
}

var signalKinds = [...]signalKind{
	otlp.Traces:  newSignalKind(otlp.Traces),
	otlp.Metrics: newSignalKind(otlp.Metrics),
	otlp.Logs:    newSignalKind(otlp.Logs),
	otlp.Profiles: func() signalKind {
		k := newSignalKind(otlp.Profiles)
		k.checkHeader = checkProfilesVersion
		return k
	}(),
}

// newSignalKind is sig's row: the protocol's facts from otlp and its JSON
// response from otlpjson.
func newSignalKind(sig otlp.Signal) signalKind {
	_, resp, _ := otlpjson.ForSignal(sig)
	return signalKind{signal: sig, SignalInfo: sig.Info(), jsonResponse: resp}
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
