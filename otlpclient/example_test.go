package otlpclient_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
)

type nopSink struct{}

func (nopSink) Write(context.Context, storage.Signal, []byte, int) error { return nil }
func (nopSink) Close() error                                             { return nil }

// A StreamExporter pipelines batches on one stream and reports each
// outcome asynchronously; Close waits for the acknowledgements.
func ExampleStreamExporter() {
	// An in-process otlp-lite receiver on a loopback port (h2c).
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &http.Server{Protocols: new(http.Protocols), Handler: handler.New(handler.Config{
		Sink: nopSink{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	defer srv.Close()

	e := otlpclient.NewStreamExporter(otlpclient.StreamConfig{
		Config: otlpclient.Config{Endpoint: ln.Addr().String(), Signal: otlpclient.Traces},
	})
	gen := otlpclient.NewSpanGenerator(100, 10, 1)
	for range 5 {
		batch := gen.AppendBatch(nil) // kept by the exporter until acknowledged
		if err := e.Send(context.Background(), batch, func(err error) {
			if err != nil {
				fmt.Println("lost:", err)
			}
		}); err != nil {
			fmt.Println(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Close(ctx); err != nil {
		fmt.Println(err)
	}
	st := e.Stats()
	fmt.Printf("acknowledged %d, dropped %d, streams %d\n", st.Acknowledged, st.Dropped, st.Streams)
	// Output: acknowledged 5, dropped 0, streams 1
}
