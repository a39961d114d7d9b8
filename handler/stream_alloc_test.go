package handler

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// bigTraceRequest is an ExportTraceServiceRequest of about 2 MB (spans
// from 7,900 to 8,290, as a batch processor cuts them: each request's size
// a little different from the last), with attributes and names that
// repeat, as real spans do; i varies the ids and the span count.
func bigTraceRequest(i int) []byte {
	var mp easyproto.MarshalerPool
	m := mp.Get()
	rs := m.MessageMarshaler().AppendMessage(1)
	res := rs.AppendMessage(1)
	kv := res.AppendMessage(1)
	kv.AppendString(1, "service.name")
	kv.AppendMessage(2).AppendString(1, "checkout")
	ss := rs.AppendMessage(2)
	ss.AppendMessage(1).AppendString(1, "io.opentelemetry.http")
	n := 7900 + (i*131)%391
	for j := range n {
		span := ss.AppendMessage(2)
		id := [16]byte{byte(i), byte(i >> 8), byte(j), byte(j >> 8), 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
		span.AppendBytes(1, id[:])
		span.AppendBytes(2, id[8:])
		span.AppendString(5, "GET /api/products/"+strconv.Itoa(j%97))
		span.AppendInt32(6, 2)
		span.AppendFixed64(7, uint64(1_700_000_000_000_000_000+j*1000))
		span.AppendFixed64(8, uint64(1_700_000_000_000_500_000+j*1000))
		for _, a := range [][2]string{
			{"http.method", "GET"},
			{"http.route", "/api/products/{id}"},
			{"http.status_code", strconv.Itoa(200 + j%3)},
			{"net.peer.name", "frontend-" + strconv.Itoa(j%7)},
			{"user_agent.original", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"},
		} {
			kv := span.AppendMessage(9)
			kv.AppendString(1, a[0])
			kv.AppendMessage(2).AppendString(1, a[1])
		}
	}
	return m.Marshal(nil)
}

// allocStream is one export stream with stateful zstd (and columns, if
// asked) against a handler storing into a discard sink, sending the same
// few requests over and over as new stream messages.
type allocStream struct {
	tb    testing.TB
	s     *testStream
	enc   *compression.StreamEncoder
	cols  *otlpcolumns.Encoder
	reqs  [][]byte
	buf   []byte
	colsB []byte
	id    uint64
}

func newAllocStream(tb testing.TB, columns bool) *allocStream {
	h := New(Config{Sink: &discard.Sink{}, Logger: quietLogger()})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	c := grpcwire.NewClient(ln.Addr().String(), nil)
	offer := "zstd"
	if columns {
		offer = "zstd; columns"
	}
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", c.BaseURL+"/otlplite.v1.StreamExporter/ExportTraces", pr)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set(otlp.StreamCompressionHeader, offer)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { pw.Close(); resp.Body.Close() })
	got := resp.Header.Get(otlp.StreamCompressionHeader)
	if otlp.AcceptedStreamZstd(got) == 0 || otlp.AcceptedStreamColumns(got) != columns {
		tb.Fatalf("answer %q to %q", got, offer)
	}
	a := &allocStream{tb: tb, s: &testStream{pw: pw, resp: resp}}
	a.enc, _ = compression.NewStreamEncoder(otlp.AcceptedStreamZstd(got))
	if columns {
		a.cols = otlpcolumns.NewEncoder(otlpcolumns.Traces)
	}
	// An id may be sent again once it is acknowledged: the six
	// envelopes, made once, are sent in turn with their own ids.
	for i := range 6 {
		a.reqs = append(a.reqs, envelope(uint64(i+1), bigTraceRequest(i)))
	}
	return a
}

// encode makes the next request's stream message (framed) in a.buf.
func (a *allocStream) encode() {
	a.id = a.id%uint64(len(a.reqs)) + 1
	plain := a.reqs[a.id-1]
	if a.cols != nil {
		a.colsB = a.cols.Append(a.colsB[:0], plain)
		plain = a.colsB
	}
	var err error
	a.buf, err = a.enc.AppendMessage(append(a.buf[:0], 0, 0, 0, 0, 0), plain)
	if err != nil {
		a.tb.Fatal(err)
	}
	n := len(a.buf) - 5
	a.buf[1], a.buf[2], a.buf[3], a.buf[4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
}

// roundTrip sends the encoded message and waits for its acknowledgement.
func (a *allocStream) roundTrip() {
	if _, err := a.s.pw.Write(a.buf); err != nil {
		a.tb.Fatal(err)
	}
	ack, ok := a.s.recv()
	if !ok || ack.code != resultSuccess || ack.id != a.id {
		a.tb.Fatalf("ack %+v (ok %v) for request %d", ack, ok, a.id)
	}
}

// BenchmarkStreamZstdMessage and BenchmarkStreamColumnsMessage: one long
// export stream of ~2 MB trace requests (about 8,100 spans), stateful zstd
// without and with columns, one request in flight: the server's B/op and
// allocs/op per message in steady state (the client's encoding is outside
// the timer; its write and the ack's read are in it).
func BenchmarkStreamZstdMessage(b *testing.B)    { benchmarkStreamMessage(b, false) }
func BenchmarkStreamColumnsMessage(b *testing.B) { benchmarkStreamMessage(b, true) }

func benchmarkStreamMessage(b *testing.B, columns bool) {
	a := newAllocStream(b, columns)
	for range 12 { // warm: pools, the decoder's window, the columns' tables
		a.encode()
		a.roundTrip()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		a.encode()
		b.StartTimer()
		a.roundTrip()
	}
}
