package server_test

import (
	"context"
	"fmt"
	"net"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/server"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// Serve the OTLP receiver as the otlp-lite binary does, with your own sink.
func Example() {
	sink := &discard.Sink{} // your storage.Sink
	h := handler.New(handler.Config{Sink: sink})
	srv := server.New(h, server.Config{}) // add TLS, Limits, Metrics as needed
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)

	// One OTLP/gRPC export of 5 spans.
	client := grpcwire.NewClient(ln.Addr().String(), nil)
	batch := otlpclient.NewSpanGenerator(5, 2, 1).AppendBatch(nil)
	_, err = client.Invoke(context.Background(), "/opentelemetry.proto.collector.trace.v1.TraceService/Export", batch)
	fmt.Println("export:", err)

	// Health NOT_SERVING, streams rotate, GOAWAY, requests finish; then
	// the sink may be closed.
	fmt.Println("shutdown:", srv.Shutdown(context.Background()))
	sink.Close()
	_, spans, _ := sink.Counts(storage.Traces)
	fmt.Println("spans stored:", spans)
	// Output:
	// export: <nil>
	// shutdown: <nil>
	// spans stored: 5
}
