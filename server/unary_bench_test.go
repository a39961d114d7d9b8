package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/server"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// traces100x4 is an ExportTraceServiceRequest of 100 spans with 4
// attributes each, the shape of bench/cmd/sidebyside's 100x4 cell.
func traces100x4() []byte {
	var mp easyproto.MarshalerPool
	m := mp.Get()
	rs := m.MessageMarshaler().AppendMessage(1)
	kv := rs.AppendMessage(1).AppendMessage(1)
	kv.AppendString(1, "service.name")
	kv.AppendMessage(2).AppendString(1, "bench")
	ss := rs.AppendMessage(2)
	ss.AppendMessage(1).AppendString(1, "scope")
	for i := range 100 {
		span := ss.AppendMessage(2)
		span.AppendBytes(1, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte(i)})
		span.AppendBytes(2, []byte{1, 2, 3, 4, 5, 6, 7, byte(i + 1)})
		span.AppendString(5, "GET /api/v1/items")
		span.AppendFixed64(7, 1700000000000000000)
		span.AppendFixed64(8, 1700000000001000000)
		for a := range 4 {
			kv := span.AppendMessage(9)
			kv.AppendString(1, fmt.Sprintf("attribute.key.%d", a))
			kv.AppendMessage(2).AppendString(1, fmt.Sprintf("value-%d-%d", i, a))
		}
	}
	return m.Marshal(nil)
}

// BenchmarkUnaryExport100x4 is one unary OTLP/gRPC export of 100 spans
// through the whole server (net/http's HTTP/2 server, the handler, a
// discard sink) from grpcwire's client over loopback, one at a time: the
// cost per request that is not decoding. Client and server share the
// process, so compare builds with it (bench/callgrind-ab.sh counts the
// instructions of both), never against the decode floor.
func BenchmarkUnaryExport100x4(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := server.New(handler.New(handler.Config{Sink: &discard.Sink{}}), server.Config{})
	go srv.Serve(ln)
	defer srv.Close()
	c := grpcwire.NewClient(ln.Addr().String(), nil)
	req := traces100x4()
	ctx := context.Background()
	const method = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	if _, err := c.Invoke(ctx, method, req); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Invoke(ctx, method, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTTPExport100x4H2C is BenchmarkUnaryExport100x4 over OTLP/HTTP
// (protobuf) on HTTP/2 without TLS, as an SDK's HTTP exporter with h2c or
// a proxy speaking HTTP/2 sends it: net/http serves each request on a
// goroutine of its own, as it does a gRPC call.
func BenchmarkHTTPExport100x4H2C(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := server.New(handler.New(handler.Config{Sink: &discard.Sink{}}), server.Config{})
	go srv.Serve(ln)
	defer srv.Close()
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	req := traces100x4()
	url := "http://" + ln.Addr().String() + "/v1/traces"
	post := func() {
		resp, err := c.Post(url, "application/x-protobuf", bytes.NewReader(req))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	post()
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		post()
	}
}
