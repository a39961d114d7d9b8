package otlpclient

import "fmt"

// Signal selects the OTLP signal a client exports.
type Signal uint8

// The OTLP signals.
const (
	Traces Signal = iota
	Metrics
	Logs
)

// String returns "traces", "metrics" or "logs".
func (s Signal) String() string {
	switch s {
	case Traces:
		return "traces"
	case Metrics:
		return "metrics"
	case Logs:
		return "logs"
	}
	return fmt.Sprintf("signal(%d)", uint8(s))
}

// ParseSignal parses "traces", "metrics" or "logs".
func ParseSignal(name string) (Signal, error) {
	switch name {
	case "traces":
		return Traces, nil
	case "metrics":
		return Metrics, nil
	case "logs":
		return Logs, nil
	}
	return 0, fmt.Errorf("unknown signal %q (want traces, metrics or logs)", name)
}

// unaryMethod is the standard OTLP/gRPC method of the signal
// (opentelemetry/proto/collector/*/v1/*_service.proto).
func (s Signal) unaryMethod() string {
	switch s {
	case Metrics:
		return "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
	case Logs:
		return "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
	}
	return "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
}

// streamMethod is the otlplite.v1.StreamExporter method of the signal
// (proto/otlplite/v1/stream.proto).
func (s Signal) streamMethod() string {
	switch s {
	case Metrics:
		return "/otlplite.v1.StreamExporter/ExportMetrics"
	case Logs:
		return "/otlplite.v1.StreamExporter/ExportLogs"
	}
	return "/otlplite.v1.StreamExporter/ExportTraces"
}
