// Command baseline is the reference receiver of the side-by-side benchmark:
// the OpenTelemetry Collector's OTLP decode paths in front of a consumer that
// discards everything, as the Collector's otlpreceiver does in front of a
// nop exporter.
//
//   - OTLP/gRPC (grpc.go): google.golang.org/grpc with pdata's ptraceotlp,
//     pmetricotlp and plogotlp servers, whose codec unmarshals each request
//     into pdata; gzip (grpc-go's) and zstd (klauspost, as configgrpc
//     registers it) accepted.
//
//   - OTLP/HTTP (http.go): net/http serving POST /v1/{traces,metrics,logs}
//     like the otlpreceiver's HTTP side: Content-Encoding gzip or zstd
//     decompressed as confighttp does, the body read whole and unmarshalled
//     with pdata's Export*Request UnmarshalProto or UnmarshalJSON, the
//     response marshalled in the request's content type.
//
//     baseline -grpc-addr 127.0.0.1:4317 -http-addr 127.0.0.1:4318
//
// It serves until SIGINT or SIGTERM.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	grpcAddr := flag.String("grpc-addr", "127.0.0.1:4317", "address for OTLP/gRPC (host:port); empty disables it")
	httpAddr := flag.String("http-addr", "", "address for OTLP/HTTP (host:port); empty disables it")
	flag.Parse()
	if err := run(*grpcAddr, *httpAddr); err != nil {
		fmt.Fprintf(os.Stderr, "baseline: %s\n", err)
		os.Exit(1)
	}
}

func run(grpcAddr, httpAddr string) error {
	if grpcAddr == "" && httpAddr == "" {
		return errors.New("nothing to serve: both -grpc-addr and -http-addr are empty")
	}
	var c counters
	errc := make(chan error, 2)
	var stops []func()
	if grpcAddr != "" {
		ln, err := net.Listen("tcp", grpcAddr)
		if err != nil {
			return fmt.Errorf("cannot listen: %w", err)
		}
		srv := newGRPCServer(&c)
		stops = append(stops, srv.Stop)
		fmt.Fprintf(os.Stderr, "baseline: serving OTLP/gRPC on %s\n", ln.Addr())
		go func() { errc <- srv.Serve(ln) }()
	}
	if httpAddr != "" {
		ln, err := net.Listen("tcp", httpAddr)
		if err != nil {
			return fmt.Errorf("cannot listen: %w", err)
		}
		// confighttp's server defaults: no read timeout beyond the
		// header one; the Collector sets ReadHeaderTimeout 1 minute.
		srv := &http.Server{Handler: newHTTPHandler(&c), ReadHeaderTimeout: time.Minute}
		stops = append(stops, func() { srv.Close() })
		fmt.Fprintf(os.Stderr, "baseline: serving OTLP/HTTP on %s\n", ln.Addr())
		go func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sigs:
		for _, stop := range stops {
			stop()
		}
		return nil
	case err := <-errc:
		return err
	}
}
