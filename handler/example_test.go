package handler_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/storage"
)

// countingSink is an embedding engine's own storage: here it only counts.
type countingSink struct{ spans atomic.Int64 }

func (s *countingSink) Write(_ context.Context, sig storage.Signal, data []byte, items int) error {
	// data is valid only during Write: copy what you keep.
	if sig == storage.Traces {
		s.spans.Add(int64(items))
	}
	return nil
}

func (s *countingSink) Close() error { return nil }

// Mount the OTLP receiver on your own server, with your own sink.
func Example() {
	sink := &countingSink{}
	h := handler.New(handler.Config{Sink: sink})

	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true) // gRPC clients use h2c
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln)
	defer srv.Close()

	// One span, hand-encoded: ResourceSpans{ScopeSpans{Span{trace_id, span_id}}}
	// (ids must not be all zeroes: trace.proto calls those invalid).
	span := append([]byte{0x0a, 16}, bytes.Repeat([]byte{0xab}, 16)...)
	span = append(span, append([]byte{0x12, 8}, bytes.Repeat([]byte{0xcd}, 8)...)...)
	scope := append([]byte{0x12, byte(len(span))}, span...)
	rs := append([]byte{0x12, byte(len(scope))}, scope...)
	req := append([]byte{0x0a, byte(len(rs))}, rs...)

	client := grpcwire.NewClient(ln.Addr().String(), nil)
	_, err := client.Invoke(context.Background(), "/opentelemetry.proto.collector.trace.v1.TraceService/Export", req)
	fmt.Println("error:", err)
	fmt.Println("spans stored:", sink.spans.Load())
	// Output:
	// error: <nil>
	// spans stored: 1
}
