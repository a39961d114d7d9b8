// Command benchload is the load client of the side-by-side benchmark. It
// sends pre-encoded (and pre-compressed) export requests, so that the client
// does the same work whatever server it talks to and neither encoding nor
// compression shows up in the measurement:
//
//	benchload -addr 127.0.0.1:4317 -protocol grpc -compression gzip -requests 2000 -concurrency 4
//
// Protocols:
//
//   - grpc: OTLP/gRPC unary calls (grpc-go, a codec that passes bytes
//     through); with -compression the bytes are compressed once up front and
//     sent with grpc-encoding through a pass-through compressor;
//   - grpc-stream: otlp-lite's otlplite.v1.StreamExporter
//     (proto/otlplite/v1/stream.proto) on one bidirectional stream, each
//     request wrapped by otlpclient.AppendEnvelope with a fresh id,
//     -concurrency requests unacknowledged at most;
//   - http-proto, http-json: OTLP/HTTP POST /v1/{traces,metrics,logs} over
//     HTTP/1.1 keep-alive connections (-concurrency of them), with
//     Content-Type application/x-protobuf or application/json and
//     Content-Encoding for -compression.
//
// With -dataset FILE it sends real data instead (../shared/datasets): the
// file cut into requests of about -items spans or data points, in order,
// each sent in turn.
//
// With -header, every request carries the header (gRPC: the metadata), as a
// client of a receiver with tenancy on sends its tenant.
//
// It prints one line: requests, items, bytes per request, seconds and items
// per second.
//
// With -floor it sends nothing and measures instead, in this process, the
// decode floor of the same bytes: the CPU time per item (getrusage around a
// loop) of otlpdecode.Check* alone, and of everything the server must do to
// the request body before it (decompression with otlp-lite's compression
// package, JSON transcoding with otlpjson) plus Check. Run it pinned to the
// server's core so it is charged like the server.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

type config struct {
	addr        string
	protocol    string
	compression string
	signal      string
	items       int
	attrs       int
	requests    int
	concurrency int
	floor       bool
	floorTime   float64
	headers     headerList
	dataset     string
}

// headerList is the repeatable -header flag: request headers (gRPC
// metadata) sent with every request, such as the tenant header of a
// receiver with tenancy on.
type headerList [][2]string

func (h *headerList) String() string {
	var b strings.Builder
	for i, kv := range *h {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(kv[0] + ": " + kv[1])
	}
	return b.String()
}

func (h *headerList) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" {
		return fmt.Errorf("%q is not 'Name: value'", s)
	}
	*h = append(*h, [2]string{name, value})
	return nil
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:4317", "server address (host:port)")
	flag.StringVar(&cfg.protocol, "protocol", "grpc", "grpc, grpc-stream, http-proto or http-json")
	flag.StringVar(&cfg.compression, "compression", "none", "none, gzip or zstd")
	flag.StringVar(&cfg.signal, "signal", "traces", "traces, metrics or logs")
	flag.IntVar(&cfg.items, "items", 500, "spans, data points or log records per request")
	flag.IntVar(&cfg.attrs, "attrs", 10, "attributes per span or log record")
	flag.IntVar(&cfg.requests, "requests", 2000, "requests to send")
	flag.IntVar(&cfg.concurrency, "concurrency", 4, "requests in flight (grpc-stream: unacknowledged requests on the stream)")
	flag.BoolVar(&cfg.floor, "floor", false, "measure the in-process decode floor of the payload instead of sending it")
	flag.Float64Var(&cfg.floorTime, "floor-seconds", 2, "with -floor: CPU seconds to spend measuring each of the two floors")
	flag.Var(&cfg.headers, "header", "'Name: value' header (gRPC metadata) sent with every request, e.g. 'X-Scope-OrgID: team-a'; repeatable")
	flag.StringVar(&cfg.dataset, "dataset", "", "send the requests cut from this dataset file (../shared/datasets, traces or metrics as -signal) in turn, of about -items items each, instead of one synthetic request")
	flag.Parse()

	p, err := newPayload(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchload: %s\n", err)
		os.Exit(2)
	}
	if cfg.floor {
		err = runFloor(cfg, p)
	} else {
		err = runLoad(cfg, p)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchload: %s\n", err)
		os.Exit(1)
	}
}
