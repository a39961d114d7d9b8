package handler

import (
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
}

var signalKinds = [...]signalKind{
	otlp.Traces: {
		signal: otlp.Traces, SignalInfo: otlp.Traces.Info(),
		check: otlpdecode.CheckTraces, filter: otlpdecode.AppendValidTraces,
		jsonRequest: otlpjson.ExportTraceServiceRequest, jsonResponse: otlpjson.ExportTraceServiceResponse,
	},
	otlp.Metrics: {
		signal: otlp.Metrics, SignalInfo: otlp.Metrics.Info(),
		check: otlpdecode.CheckMetrics, filter: otlpdecode.AppendValidMetrics,
		jsonRequest: otlpjson.ExportMetricsServiceRequest, jsonResponse: otlpjson.ExportMetricsServiceResponse,
	},
	otlp.Logs: {
		signal: otlp.Logs, SignalInfo: otlp.Logs.Info(),
		check: otlpdecode.CheckLogs, filter: otlpdecode.AppendValidLogs,
		jsonRequest: otlpjson.ExportLogsServiceRequest, jsonResponse: otlpjson.ExportLogsServiceResponse,
	},
}

// kindOf returns how the handler serves sig; nil if sig is 0 (no signal).
func kindOf(sig otlp.Signal) *signalKind {
	if sig == 0 || int(sig) >= len(signalKinds) {
		return nil
	}
	return &signalKinds[sig]
}
