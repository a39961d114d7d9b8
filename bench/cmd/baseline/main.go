// Command baseline is the reference receiver of the side-by-side benchmark:
// the OpenTelemetry Collector's OTLP/gRPC decode path (google.golang.org/grpc
// with pdata's ptraceotlp, pmetricotlp and plogotlp servers, whose codec
// unmarshals each request into pdata) in front of a consumer that discards
// everything, as the Collector's otlpreceiver does in front of a nop
// exporter.
//
//	baseline -grpc-addr 127.0.0.1:4317
//
// It serves until SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
)

// The servers count what they drop, like otlp-lite's discard storage, so
// that the consumer is not optimised away and the work is comparable.

type tracesServer struct {
	ptraceotlp.UnimplementedGRPCServer
	spans atomic.Int64
}

func (s *tracesServer) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	s.spans.Add(int64(req.Traces().SpanCount()))
	return ptraceotlp.NewExportResponse(), nil
}

type metricsServer struct {
	pmetricotlp.UnimplementedGRPCServer
	points atomic.Int64
}

func (s *metricsServer) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	s.points.Add(int64(req.Metrics().DataPointCount()))
	return pmetricotlp.NewExportResponse(), nil
}

type logsServer struct {
	plogotlp.UnimplementedGRPCServer
	records atomic.Int64
}

func (s *logsServer) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	s.records.Add(int64(req.Logs().LogRecordCount()))
	return plogotlp.NewExportResponse(), nil
}

func main() {
	addr := flag.String("grpc-addr", "127.0.0.1:4317", "address for OTLP/gRPC (host:port)")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "baseline: cannot listen: %s\n", err)
		os.Exit(1)
	}
	// The Collector's otlpreceiver defaults (configgrpc): 4 MiB max
	// message, no stream limit; the benchmark payloads stay far below it.
	srv := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(srv, &tracesServer{})
	pmetricotlp.RegisterGRPCServer(srv, &metricsServer{})
	plogotlp.RegisterGRPCServer(srv, &logsServer{})

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		srv.Stop()
	}()
	fmt.Fprintf(os.Stderr, "baseline: serving OTLP/gRPC on %s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintf(os.Stderr, "baseline: %s\n", err)
		os.Exit(1)
	}
}
