package main

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the Collector's configgrpc imports it too

	"github.com/otlp-lite/otlp-lite/bench/grpczstd"
)

func init() {
	grpczstd.Register()
}

// counters count what the servers drop, like otlp-lite's discard storage,
// so that the consumer is not optimised away and the work is comparable.
type counters struct {
	spans, points, records atomic.Int64
}

type tracesServer struct {
	ptraceotlp.UnimplementedGRPCServer
	c *counters
}

func (s *tracesServer) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.c.spans.Add(int64(req.Traces().SpanCount()))
	return ptraceotlp.NewExportResponse(), nil
}

type metricsServer struct {
	pmetricotlp.UnimplementedGRPCServer
	c *counters
}

func (s *metricsServer) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	s.c.points.Add(int64(req.Metrics().DataPointCount()))
	return pmetricotlp.NewExportResponse(), nil
}

type logsServer struct {
	plogotlp.UnimplementedGRPCServer
	c *counters
}

func (s *logsServer) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	s.c.records.Add(int64(req.Logs().LogRecordCount()))
	return plogotlp.NewExportResponse(), nil
}

// newGRPCServer returns a grpc-go server with the Collector's otlpreceiver
// defaults (configgrpc): 4 MiB max message, no stream limit; the benchmark
// payloads stay far below it.
func newGRPCServer(c *counters) *grpc.Server {
	srv := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(srv, &tracesServer{c: c})
	pmetricotlp.RegisterGRPCServer(srv, &metricsServer{c: c})
	plogotlp.RegisterGRPCServer(srv, &logsServer{c: c})
	return srv
}
