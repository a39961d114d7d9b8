package main

import (
	"fmt"

	"github.com/otlp-lite/otlp-lite/bench"
	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// payload is one pre-encoded request and where it goes.
type payload struct {
	items int
	// proto is the Export*ServiceRequest in protobuf: what the server
	// stores, and the input of the decode floor.
	proto []byte
	// body is what goes on the wire: proto or its OTLP/JSON form,
	// compressed with codec.
	body  []byte
	codec compression.Codec
	json  bool

	grpcMethod   string // unary OTLP/gRPC
	streamMethod string // otlplite.v1.StreamExporter
	httpPath     string
	jsonType     otlpjson.MessageType
	check        func([]byte, *otlpdecode.Options) (otlpdecode.Result, error)
}

func newPayload(cfg config) (payload, error) {
	var p payload
	var err error
	p.codec = compression.Identity
	if cfg.compression != "none" {
		if p.codec, err = compression.Parse(cfg.compression); err != nil {
			return p, fmt.Errorf("bad -compression: %w", err)
		}
	}
	switch cfg.protocol {
	case "grpc", "grpc-stream", "http-proto":
	case "http-json":
		p.json = true
	default:
		return p, fmt.Errorf("unknown -protocol %q: want grpc, grpc-stream, http-proto or http-json", cfg.protocol)
	}
	switch cfg.signal {
	case "traces":
		p.items = cfg.items
		p.proto = bench.TracesBytes(cfg.items, cfg.attrs)
		p.grpcMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
		p.streamMethod = "/otlplite.v1.StreamExporter/ExportTraces"
		p.httpPath = "/v1/traces"
		p.jsonType = otlpjson.ExportTraceServiceRequest
		p.check = otlpdecode.CheckTraces
		if p.json {
			p.body = bench.TracesJSON(cfg.items, cfg.attrs)
		}
	case "metrics":
		// bench.Metrics(n) holds 30 metrics of n points each.
		n := max(cfg.items/30, 1)
		p.items = 30 * n
		p.proto = bench.MetricsBytes(n)
		p.grpcMethod = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
		p.streamMethod = "/otlplite.v1.StreamExporter/ExportMetrics"
		p.httpPath = "/v1/metrics"
		p.jsonType = otlpjson.ExportMetricsServiceRequest
		p.check = otlpdecode.CheckMetrics
		if p.json {
			p.body = bench.MetricsJSON(n)
		}
	case "logs":
		p.items = cfg.items
		p.proto = bench.LogsBytes(cfg.items, cfg.attrs)
		p.grpcMethod = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
		p.streamMethod = "/otlplite.v1.StreamExporter/ExportLogs"
		p.httpPath = "/v1/logs"
		p.jsonType = otlpjson.ExportLogsServiceRequest
		p.check = otlpdecode.CheckLogs
		if p.json {
			p.body = bench.LogsJSON(cfg.items, cfg.attrs)
		}
	default:
		return p, fmt.Errorf("unknown -signal %q: want traces, metrics or logs", cfg.signal)
	}
	if !p.json {
		p.body = p.proto
	}
	if p.codec != compression.Identity {
		if cfg.protocol == "grpc-stream" {
			return p, fmt.Errorf("-protocol grpc-stream is measured uncompressed only")
		}
		if p.body, err = compression.Compress(nil, p.codec, p.body); err != nil {
			return p, err
		}
	}
	return p, nil
}
