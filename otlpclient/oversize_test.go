package otlpclient

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/handler"
)

// paddedRequest is a request of one span carrying n in its trace id, like
// testRequest, with an attribute of pad bytes: random (incompressible) or
// zeros.
func paddedRequest(n uint64, pad int, random bool) []byte {
	b := make([]byte, pad)
	if random {
		r := rand.New(rand.NewPCG(n, 0))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
	}
	var mp easyproto.MarshalerPool
	m := mp.Get()
	defer mp.Put(m)
	sp := m.MessageMarshaler().AppendMessage(1).AppendMessage(2).AppendMessage(2)
	var tid [16]byte
	binary.BigEndian.PutUint64(tid[8:], n)
	sp.AppendBytes(1, tid[:])
	sp.AppendBytes(2, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	sp.AppendString(5, "span")
	kv := sp.AppendMessage(9)
	kv.AppendString(1, "pad")
	kv.AppendMessage(2).AppendBytes(7, b)
	return m.Marshal(nil)
}

// TestStreamOversizeFailsAlone: the server ends the stream with
// RESOURCE_EXHAUSTED when a message is over its limit. Only that request
// fails; the others on the stream are resent and stored, whether the
// status names the wire length (uncompressed, or compressed and still too
// large) or only the limit (too large once decompressed).
func TestStreamOversizeFailsAlone(t *testing.T) {
	for _, tt := range []struct {
		name   string
		codec  compression.Codec
		random bool
	}{
		{"identity", compression.Identity, true},
		{"gzip incompressible", compression.Gzip, true},
		{"gzip over the limit once decompressed", compression.Gzip, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sink := newCountSink()
			const limit = 1 << 20
			addr := startServer(t, handler.New(handler.Config{Sink: sink, Logger: quietLogger(), MaxRecvMsgSize: limit}))
			e := NewStreamExporter(StreamConfig{Config: Config{Endpoint: addr, Compression: tt.codec}})
			o := newOutcomes()
			const n, big = 20, 10
			for i := uint64(1); i <= n; i++ {
				req := testRequest(i, 1)
				if i == big {
					req = paddedRequest(i, 2<<20, tt.random)
				}
				if err := e.Send(context.Background(), req, o.done(i)); err != nil {
					t.Fatal(err)
				}
			}
			closeExporter(t, e)
			calls, _ := o.snapshot()
			for i := uint64(1); i <= n; i++ {
				c := calls[i]
				if len(c) != 1 {
					t.Fatalf("request %d: done called %d times", i, len(c))
				}
				var re *RequestError
				switch {
				case i == big && !errors.As(c[0], &re):
					t.Fatalf("oversize request: outcome %v, want a RequestError", c[0])
				case i == big && !strings.Contains(re.Message, "too large"):
					t.Fatalf("oversize request: %v", re)
				case i != big && c[0] != nil:
					t.Fatalf("request %d failed with the oversize one: %v", i, c[0])
				}
			}
			stored := sink.counts()
			for i := uint64(1); i <= n; i++ {
				want := 1
				if i == big {
					want = 0
				}
				if stored[i] != want {
					t.Fatalf("request %d stored %d times, want %d", i, stored[i], want)
				}
			}
			if st := e.Stats(); st.Failed != 1 || st.Acknowledged != n-1 || st.Dropped != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestTooLarge picks the request a "larger than max" status is about.
func TestTooLarge(t *testing.T) {
	lost := []*pendingReq{
		{id: 1, wire: 100, size: 100},
		{id: 2, wire: 3000, size: 9000},
		{id: 3, wire: 5000, size: 5000},
	}
	for _, tt := range []struct {
		msg  string
		want uint64
	}{
		{"grpc: received message larger than max (5000 vs. 4096)", 3},
		{"grpc: received message after decompression larger than max 4096", 2},
		{"grpc: received message after decompression larger than max (9000 vs. 4096)", 2},
		{"request too large for the budget", 1}, // the one being read
	} {
		got := tooLarge(lost, grpcwire.Errorf(grpcwire.ResourceExhausted, "%s", tt.msg))
		if got == nil || got.id != tt.want {
			t.Errorf("%q: got %+v, want request %d", tt.msg, got, tt.want)
		}
	}
	if tooLarge(nil, grpcwire.Errorf(grpcwire.ResourceExhausted, "x")) != nil {
		t.Error("a request picked from none")
	}
}
