package otlpclient

import (
	"bytes"
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// exactSink is a countSink that also checks each stored request is the
// testRequest it was sent as, byte for byte.
type exactSink struct {
	*countSink
	spans int
	other atomic.Int32
}

func (s *exactSink) Write(ctx context.Context, sig storage.Signal, data []byte, items int) error {
	if !bytes.Equal(data, testRequest(requestNumber(data), s.spans)) {
		s.other.Add(1)
	}
	return s.countSink.Write(ctx, sig, data, items)
}

// oldServer is a server that knows stateful zstd but not its columns
// parameter: the offer reaches it without the parameter.
type oldServer struct{ h http.Handler }

func (o oldServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if otlp.OffersStreamColumns(r.Header.Get(otlp.StreamCompressionHeader)) {
		r.Header.Set(otlp.StreamCompressionHeader, otlp.StreamZstd)
	}
	o.h.ServeHTTP(w, r)
}

// TestStreamColumnsMixedVersions: a client offering columns (the default) and a new
// server use the columnar transform on every stream (rotated every 30
// requests: each new stream a new state); with a server that knows zstd
// but not columns they use zstd alone; a client with DisableStreamColumns
// never gets them. Every request is acknowledged and stored exactly once,
// byte for byte.
func TestStreamColumnsMixedVersions(t *testing.T) {
	const n, perStream, spans = 90, 30, 20
	for _, tc := range []struct {
		name            string
		old, offer, use bool
	}{
		{name: "columns client, new server", offer: true, use: true},
		{name: "columns client, old server", offer: true, old: true},
		{name: "zstd client, new server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &exactSink{countSink: newCountSink(), spans: spans}
			var h http.Handler = newHandler(sink, handlerStream(perStream))
			if tc.old {
				h = oldServer{h}
			}
			bc := &columnsSpy{h: h}
			addr := startServer(t, bc)
			e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}, MaxPending: 4, DisableStreamColumns: !tc.offer})
			o := newOutcomes()
			for i := uint64(1); i <= n; i++ {
				if err := e.Send(context.Background(), testRequest(i, spans), o.done(i)); err != nil {
					t.Fatal(err)
				}
			}
			closeExporter(t, e)
			o.requireAllAcked(t, n)
			for i, c := range sink.counts() {
				if c != 1 {
					t.Fatalf("request %d stored %d times", i, c)
				}
			}
			if m := sink.other.Load(); m != 0 {
				t.Fatalf("%d requests stored with other bytes", m)
			}
			streams := int32(e.Stats().Streams)
			if acc := bc.columns.Load(); tc.use && acc != streams || !tc.use && acc != 0 {
				t.Fatalf("%d of %d streams answered with columns", acc, streams)
			}
		})
	}
}

// columnsSpy counts the streams answered with columns.
type columnsSpy struct {
	h       http.Handler
	columns atomic.Int32
}

func (c *columnsSpy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.h.ServeHTTP(&columnsAnswer{ResponseWriter: w, c: c}, r)
}

type columnsAnswer struct {
	http.ResponseWriter
	c    *columnsSpy
	seen bool
}

func (a *columnsAnswer) WriteHeader(code int) {
	if !a.seen && otlp.AcceptedStreamColumns(a.Header().Get(otlp.StreamCompressionHeader)) {
		a.c.columns.Add(1)
	}
	a.seen = true
	a.ResponseWriter.WriteHeader(code)
}

func (a *columnsAnswer) Flush() { a.ResponseWriter.(http.Flusher).Flush() }

func (a *columnsAnswer) Unwrap() http.ResponseWriter { return a.ResponseWriter }

func handlerStream(maxRequests int) handler.StreamConfig {
	return handler.StreamConfig{MaxRequests: maxRequests}
}
