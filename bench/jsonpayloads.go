package bench

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The OTLP/JSON payloads are the same data as the protobuf ones, written by
// pdata's JSONMarshaler: what the Collector's own exporters send with
// encoding json, with the OTLP/JSON rules (specification.md "JSON Protobuf
// Encoding"): hex trace and span ids, integer enums, 64-bit integers as
// strings, lowerCamelCase keys.

// TracesJSON returns Traces(spans, attrsPerSpan) as OTLP/JSON.
func TracesJSON(spans, attrsPerSpan int) []byte {
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(Traces(spans, attrsPerSpan))
	if err != nil {
		panic(fmt.Sprintf("cannot marshal traces as JSON: %s", err))
	}
	return b
}

// MetricsJSON returns Metrics(points) as OTLP/JSON.
func MetricsJSON(points int) []byte {
	b, err := (&pmetric.JSONMarshaler{}).MarshalMetrics(Metrics(points))
	if err != nil {
		panic(fmt.Sprintf("cannot marshal metrics as JSON: %s", err))
	}
	return b
}

// LogsJSON returns Logs(records, attrsPerRecord) as OTLP/JSON.
func LogsJSON(records, attrsPerRecord int) []byte {
	b, err := (&plog.JSONMarshaler{}).MarshalLogs(Logs(records, attrsPerRecord))
	if err != nil {
		panic(fmt.Sprintf("cannot marshal logs as JSON: %s", err))
	}
	return b
}
