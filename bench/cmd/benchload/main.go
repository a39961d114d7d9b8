// Command benchload is the load client of the side-by-side benchmark. It
// sends pre-encoded ExportTraceServiceRequest (or metrics, logs) bytes over
// OTLP/gRPC with a codec that passes bytes through, so that the client does
// the same work whatever server it talks to and encoding never shows up in
// the measurement.
//
//	benchload -addr 127.0.0.1:4317 -signal traces -requests 2000 -concurrency 4
//
// It prints one line: requests, items, seconds and items per second.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"

	"github.com/otlp-lite/otlp-lite/bench"
)

// rawCodec sends []byte messages as they are and keeps responses as bytes.
// Its name is "proto" so that requests carry the OTLP content-type
// application/grpc+proto; it is passed with ForceCodecV2, never registered,
// so it replaces nothing globally.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

// Payload is a pre-encoded request and the gRPC method it goes to.
type payload struct {
	method string
	items  int
	src    []byte
}

func newPayload(signal string, items, attrs int) (payload, error) {
	switch signal {
	case "traces":
		return payload{"/opentelemetry.proto.collector.trace.v1.TraceService/Export", items, bench.TracesBytes(items, attrs)}, nil
	case "metrics":
		// bench.Metrics(p) holds 30 metrics of p points each.
		p := max(items/30, 1)
		return payload{"/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", 30 * p, bench.MetricsBytes(p)}, nil
	case "logs":
		return payload{"/opentelemetry.proto.collector.logs.v1.LogsService/Export", items, bench.LogsBytes(items, attrs)}, nil
	}
	return payload{}, fmt.Errorf("unknown -signal %q: want traces, metrics or logs", signal)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:4317", "server address (host:port)")
	signal := flag.String("signal", "traces", "traces, metrics or logs")
	items := flag.Int("items", 500, "spans, data points or log records per request")
	attrs := flag.Int("attrs", 10, "attributes per span or log record")
	requests := flag.Int("requests", 2000, "requests to send")
	concurrency := flag.Int("concurrency", 4, "requests in flight")
	flag.Parse()

	p, err := newPayload(*signal, *items, *attrs)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchload: %s\n", err)
		os.Exit(2)
	}
	cc, err := grpc.NewClient(*addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(rawCodec{})))
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchload: cannot dial: %s\n", err)
		os.Exit(1)
	}
	defer cc.Close()

	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range *concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := p.src
			var resp []byte
			for next.Add(1) <= int64(*requests) {
				if err := cc.Invoke(context.Background(), p.method, &src, &resp); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		fmt.Fprintf(os.Stderr, "benchload: export failed: %s\n", firstErr)
		os.Exit(1)
	}
	n := int64(*requests) * int64(p.items)
	fmt.Printf("requests=%d items=%d bytes_per_request=%d seconds=%.3f items_per_second=%.0f\n",
		*requests, n, len(p.src), elapsed.Seconds(), float64(n)/elapsed.Seconds())
}
