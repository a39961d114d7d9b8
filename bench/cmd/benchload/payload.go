package main

import (
	"fmt"
	"path/filepath"

	"github.com/otlp-lite/otlp-lite/bench"
	"github.com/otlp-lite/otlp-lite/bench/internal/dataset"
	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// payload is the pre-encoded requests and where they go: one synthetic
// request, or the requests cut from a dataset (-dataset), sent in turn.
type payload struct {
	reqs  []request
	codec compression.Codec
	json  bool

	grpcMethod   string // unary OTLP/gRPC
	streamMethod string // otlplite.v1.StreamExporter
	httpPath     string
	jsonType     otlpjson.MessageType
	check        func([]byte, *otlpdecode.Options) (otlpdecode.Result, error)
}

// request is one pre-encoded request.
type request struct {
	items int
	// proto is the Export*ServiceRequest in protobuf: what the server
	// stores, and the input of the decode floor.
	proto []byte
	// body is what goes on the wire: proto or its OTLP/JSON form,
	// compressed with codec.
	body []byte
}

// at returns the i-th request sent (from 0): the requests in turn.
func (p *payload) at(i int64) *request { return &p.reqs[i%int64(len(p.reqs))] }

// itemsIn returns the items of the first n requests sent.
func (p *payload) itemsIn(n int64) int64 {
	var per, all int64
	for _, r := range p.reqs {
		all += int64(r.items)
	}
	k := int64(len(p.reqs))
	for i := range n % k {
		per += int64(p.reqs[i].items)
	}
	return n/k*all + per
}

// maxBody returns the largest body.
func (p *payload) maxBody() int {
	n := 0
	for _, r := range p.reqs {
		n = max(n, len(r.body))
	}
	return n
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
	var r request
	switch cfg.signal {
	case "traces":
		r.items = cfg.items
		r.proto = bench.TracesBytes(cfg.items, cfg.attrs)
		p.grpcMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
		p.streamMethod = "/otlplite.v1.StreamExporter/ExportTraces"
		p.httpPath = "/v1/traces"
		p.jsonType = otlpjson.ExportTraceServiceRequest
		p.check = otlpdecode.CheckTraces
	case "metrics":
		// bench.Metrics(n) holds 30 metrics of n points each.
		n := max(cfg.items/30, 1)
		r.items = 30 * n
		r.proto = bench.MetricsBytes(n)
		p.grpcMethod = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
		p.streamMethod = "/otlplite.v1.StreamExporter/ExportMetrics"
		p.httpPath = "/v1/metrics"
		p.jsonType = otlpjson.ExportMetricsServiceRequest
		p.check = otlpdecode.CheckMetrics
	case "logs":
		r.items = cfg.items
		r.proto = bench.LogsBytes(cfg.items, cfg.attrs)
		p.grpcMethod = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
		p.streamMethod = "/otlplite.v1.StreamExporter/ExportLogs"
		p.httpPath = "/v1/logs"
		p.jsonType = otlpjson.ExportLogsServiceRequest
		p.check = otlpdecode.CheckLogs
	default:
		return p, fmt.Errorf("unknown -signal %q: want traces, metrics or logs", cfg.signal)
	}
	if p.codec != compression.Identity && cfg.protocol == "grpc-stream" {
		return p, fmt.Errorf("-protocol grpc-stream is measured uncompressed only")
	}
	p.reqs = []request{r}
	if cfg.dataset != "" {
		if p.reqs, err = datasetRequests(cfg); err != nil {
			return p, err
		}
	}
	for i := range p.reqs {
		r := &p.reqs[i]
		r.body = r.proto
		if p.json {
			if r.body, err = otlpjson.Marshal(nil, p.jsonType, r.proto); err != nil {
				return p, fmt.Errorf("cannot make the JSON request: %w", err)
			}
		}
		if p.codec != compression.Identity {
			if r.body, err = compression.Compress(nil, p.codec, r.body); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}

// datasetRequests cuts -dataset into requests of about -items items
// (traces or metrics, as -signal says).
func datasetRequests(cfg config) ([]request, error) {
	if dataset.IsMetrics(cfg.dataset) != (cfg.signal == "metrics") || cfg.signal == "logs" {
		return nil, fmt.Errorf("-dataset %s does not hold -signal %s", filepath.Base(cfg.dataset), cfg.signal)
	}
	recs, err := dataset.Read(cfg.dataset)
	if err != nil {
		return nil, err
	}
	cut, err := dataset.Cut(recs, cfg.signal == "metrics", cfg.items, false)
	if err != nil {
		return nil, fmt.Errorf("cannot cut %s: %w", filepath.Base(cfg.dataset), err)
	}
	reqs := make([]request, len(cut))
	for i, c := range cut {
		reqs[i] = request{items: c.Items, proto: c.Proto}
	}
	return reqs, nil
}
