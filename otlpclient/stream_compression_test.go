package otlpclient

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// bodyCounter counts the request body bytes of the stream calls it passes
// to h, and how many of those calls the server answered with stateful
// compression. stripOffer makes it a server that does not know the offer
// (an older one): the header never reaches h.
type bodyCounter struct {
	h          http.Handler
	stripOffer bool
	bytes      atomic.Int64
	accepted   atomic.Int32
}

func (b *bodyCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if b.stripOffer {
		r.Header.Del(otlp.StreamCompressionHeader)
	}
	r.Body = &countingBody{ReadCloser: r.Body, n: &b.bytes}
	b.h.ServeHTTP(&answerSpy{ResponseWriter: w, b: b}, r)
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type answerSpy struct {
	http.ResponseWriter
	b    *bodyCounter
	seen bool
}

func (a *answerSpy) WriteHeader(code int) {
	if !a.seen && a.Header().Get(otlp.StreamCompressionHeader) != "" {
		a.b.accepted.Add(1)
	}
	a.seen = true
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerSpy) Flush() { a.ResponseWriter.(http.Flusher).Flush() }

func (a *answerSpy) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// TestStreamCompressionMixedVersions: a new client and a new server use
// stateful compression on every stream (rotated every 30 requests, each new
// stream a new state; the messages sent before the server's answer arrives
// are compressed alone) and send at most half the bytes; a new client with
// a server that does not know the offer, or has it off, and an old client
// (no offer) with a new server, compress each message alone as before.
// Every request is acknowledged and stored exactly once in every case.
func TestStreamCompressionMixedVersions(t *testing.T) {
	const n, perStream = 90, 30
	sent := map[string]int64{}
	for _, tc := range []struct {
		name       string
		server     handler.StreamConfig
		stripOffer bool
		oldClient  bool
		stateful   bool
	}{
		{name: "new client, new server", stateful: true},
		{name: "new client, old server", stripOffer: true},
		{name: "new client, server off", server: handler.StreamConfig{CompressionWindow: -1}},
		{name: "old client, new server", oldClient: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := newCountSink()
			tc.server.MaxRequests = perStream
			bc := &bodyCounter{h: newHandler(sink, tc.server), stripOffer: tc.stripOffer}
			addr := startServer(t, bc)
			e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr}, MaxPending: 4, DisableStreamCompression: tc.oldClient})
			o := newOutcomes()
			for i := uint64(1); i <= n; i++ {
				if err := e.Send(context.Background(), testRequest(i, 20), o.done(i)); err != nil {
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
			streams := int32(e.Stats().Streams)
			if streams < n/perStream {
				t.Fatalf("%d streams: the server did not rotate", streams)
			}
			if acc := bc.accepted.Load(); tc.stateful && acc != streams || !tc.stateful && acc != 0 {
				t.Fatalf("%d of %d streams answered with stateful compression", acc, streams)
			}
			sent[tc.name] = bc.bytes.Load()
		})
	}
	stateful, alone := sent["new client, new server"], sent["old client, new server"]
	t.Logf("request bytes: stateful %d, each message alone %d", stateful, alone)
	if stateful == 0 || alone == 0 || stateful*2 > alone {
		t.Fatalf("stateful compression sent %d bytes, each message alone %d: want at most half", stateful, alone)
	}
}
