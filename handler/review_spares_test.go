package handler

import (
	"sync"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
)

// The review of streamspares (session 13): what a spare columns decoder
// carries from one client's stream to the next, and the spares' account
// when streams of every kind end, well or in an error, at once.

// TestReviewColumnsSpareForgetsSeries: a spare columns decoder carries
// nothing of the stream it decoded to the next: a client whose first
// message is another stream's second columns message (its data points'
// attributes sent as references to the series of that stream's first) is
// refused INVALID_ARGUMENT, nothing of it stored, though the decoder it
// got decoded that first message; as on a new decoder.
func TestReviewColumnsSpareForgetsSeries(t *testing.T) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	c := startHandler(t, h)
	req := metrics500x10()
	cols := otlpcolumns.NewEncoder(otlpcolumns.Metrics)
	first := cols.Append(nil, envelope(1, req))
	second := cols.Append(nil, envelope(2, req))
	// On a new decoder the second message alone is corrupt: it refers
	// to the first's series.
	if _, err := otlpcolumns.NewDecoder(otlpcolumns.Metrics).Decode(nil, second, 64<<20, nil); err == nil {
		t.Fatal("a new decoder decodes the second message alone")
	}

	a := openStream(t, c, "ExportMetrics", otlp.StreamCompressionHeader, "zstd; columns")
	encA, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
	defer encA.Close()
	msg, _ := encA.AppendMessage(nil, first)
	a.sendRaw(msg)
	a.pw.Close()
	if acks, st := a.finish(); st.Code != grpcwire.OK || len(acks) != 1 {
		t.Fatalf("stream a: %v, %d acks", st, len(acks))
	}
	waitSpares(t, h, 2)
	if n, _ := h.spares.cols[otlp.Metrics].Held(); n != 1 {
		t.Fatalf("%d metrics columns decoders kept after stream a", n)
	}

	b := openStream(t, c, "ExportMetrics", otlp.StreamCompressionHeader, "zstd; columns")
	encB, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
	defer encB.Close()
	msg, _ = encB.AppendMessage(nil, second)
	b.sendRaw(msg)
	b.pw.Close()
	acks, st := b.finish()
	if n := counterValue(h.Metrics(), `otlplite_stream_decoders_reused_total{kind="columns"}`); n != 1 {
		t.Fatalf("stream b took %d spare columns decoders, want stream a's", n)
	}
	if st.Code != grpcwire.InvalidArgument || len(acks) != 0 {
		t.Fatalf("stream b's first message, a's second: %v, %d acks; want INVALID_ARGUMENT", st, len(acks))
	}
	t.Logf("stream b: %v", st)
	if n := len(sink.all()); n != 1 {
		t.Fatalf("%d requests stored, want stream a's only", n)
	}
}

// TestReviewSparesAccountExact: streams of every signal with zstd and
// columns, ending at once and in every way (whole, rotated, in a decoder
// error that the spare's Reset must forget, the client gone), their
// decoders taken again by the next: the spares stay within their bound,
// the stream state charged is the spares' exactly, and once the spares
// are let go the whole budget is back (no charge lost or returned twice).
// Every request acknowledged is stored.
//
// With a budget whose half holds three streams' decoders, the spares are
// reclaimed by the streams and requests that need their room while other
// streams end and give theirs (streams that find no room are served
// without compression, and their columns messages refused).
func TestReviewSparesAccountExact(t *testing.T) {
	t.Run("default budget", func(t *testing.T) { reviewSparesAccount(t, 0) })
	t.Run("tight budget", func(t *testing.T) { reviewSparesAccount(t, 6*oneSpare) })
}

func reviewSparesAccount(t *testing.T, limit int64) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger(), Stream: StreamConfig{MaxRequests: 2},
		Admission: AdmissionConfig{RequestLimit: limit, MaxWait: time.Millisecond}})
	c := startHandler(t, h)
	methods := []struct {
		method string
		sig    otlpcolumns.Signal
		req    []byte
	}{
		{"ExportTraces", otlpcolumns.Traces, traceRequest(goodID, goodID)},
		{"ExportMetrics", otlpcolumns.Metrics, metrics500x10()},
	}
	var mu sync.Mutex
	acked := 0
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 4 {
				m := methods[(g+i)%len(methods)]
				s := openStream(t, c, m.method, otlp.StreamCompressionHeader, "zstd; columns")
				enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
				cols := otlpcolumns.NewEncoder(m.sig)
				// The server may end a stream before all is sent
				// (no room for its state or a request under the
				// tight budget): a send's error is not the test's.
				send := func(msg []byte) { _, _ = s.pw.Write(frame(msg)) }
				sendColumns := func(id uint64) {
					msg, _ := enc.AppendMessage(nil, cols.Append(nil, envelope(id, m.req)))
					send(msg)
				}
				switch (g + i) % 4 {
				case 0: // whole
					sendColumns(1)
					s.pw.Close()
				case 1: // rotated after its second request (MaxRequests)
					sendColumns(1)
					sendColumns(2)
				case 2: // a request, then garbage: the decoder errs
					sendColumns(1)
					send([]byte{0, 5, 1, 2, 3, 4, 5})
				case 3: // a columns message that is not one
					bad, _ := enc.AppendMessage(nil, []byte{1, 0xff, 0xff})
					send(bad)
				}
				acks, _ := s.finish()
				enc.Close()
				mu.Lock()
				acked += len(acks)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	waitFor(t, func() bool { return h.streamStateNotSpare() == 0 })
	n, cost := h.spares.held()
	nz, _ := h.spares.zstd.Held()
	if n-nz > 2*maxStreamSpares || nz > maxStreamSpares {
		t.Fatalf("%d decoders kept (%d zstd)", n, nz)
	}
	if held := h.p.StreamStateHeld(); held != cost {
		t.Fatalf("stream state %d, the spares' %d", held, cost)
	}
	t.Logf("%d decoders kept, charged %d; %d reused", n, cost,
		counterValue(h.Metrics(), `otlplite_stream_decoders_reused_total{kind="zstd"}`)+counterValue(h.Metrics(), `otlplite_stream_decoders_reused_total{kind="columns"}`))
	h.spares.dropAll()
	// The requests' charges come back as their tickets are done, after
	// their acknowledgements.
	waitFor(t, func() bool { in, w := h.p.AdmissionState(); return in == 0 && w == 0 })
	if held := h.p.StreamStateHeld(); held != 0 {
		t.Fatalf("stream state %d with no stream and no spare", held)
	}
	if got := len(sink.all()); got != acked {
		t.Fatalf("%d stored, %d acknowledged", got, acked)
	}
}

// TestReviewSparesAfterShutdown: streams that end after the Handler's
// Shutdown (which does not close the spares) still leave their decoders
// within the bound, charged once, and a later stream takes them: nothing
// panics or leaks.
func TestReviewSparesAfterShutdown(t *testing.T) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	c := startHandler(t, h)
	s := openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, "zstd; columns")
	enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
	defer enc.Close()
	s.sendColumns(otlpcolumns.NewEncoder(otlpcolumns.Traces), enc, 1, traceRequest(goodID))
	h.Shutdown()
	s.pw.Close()
	acks, _ := s.finish()
	// The stream's read loop gives its charge back and then its two
	// decoders to the spares (streamCodec.close), after the client has its
	// trailers: wait for both, or dropAll below could run between them.
	waitFor(t, func() bool { n, _ := h.spares.held(); return h.streamStateNotSpare() == 0 && n == 2 })
	n, cost := h.spares.held()
	if held := h.p.StreamStateHeld(); held != cost || n > 2 {
		t.Fatalf("after Shutdown: %d spares charged %d, stream state %d", n, cost, held)
	}
	h.spares.dropAll()
	waitFor(t, func() bool { in, w := h.p.AdmissionState(); return in == 0 && w == 0 })
	if got := len(sink.all()); got != len(acks) {
		t.Fatalf("%d stored, %d acknowledged", got, len(acks))
	}
}

// TestReviewGrowthRoomHonestStream: the eighth of room a stream's decode
// buffer gets (streamalloc) never refuses an honest request: a request
// whose decoded bytes fit what the budget has left beside the stream's
// decoder, but not with an eighth more, is acknowledged and stored (it
// was refused retryably, the stream ended UNAVAILABLE, and its client
// would resend it into the same refusal for as long as the budget stays
// so), zstd alone and with columns.
func TestReviewGrowthRoomHonestStream(t *testing.T) {
	for _, tc := range []struct {
		name, offer string
		state       int64
		spans       int // enough that the request, not the state, sets the budget
	}{
		{"zstd", "zstd", compression.StreamDecoderCost(DefaultStreamCompressionWindow), 60000},
		{"columns", "zstd; columns", compression.StreamDecoderCost(DefaultStreamCompressionWindow) + otlpcolumns.DecoderCost, 160000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := make([][]byte, tc.spans)
			for i := range ids {
				ids[i] = goodID
			}
			plain := envelope(1, traceRequest(ids...))
			enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
			defer enc.Close()
			body := plain
			if tc.name == "columns" {
				body = otlpcolumns.NewEncoder(otlpcolumns.Traces).Append(nil, plain)
			}
			msg, _ := enc.AppendMessage(nil, body)
			// Room for the decoder, the message and its decoded bytes
			// (with columns, the zstd output too, with its room: it
			// stays charged while the columns are decoded), and a
			// little more: less than an eighth of the request.
			need := tc.state + int64(len(msg)+len(plain)) + 16<<10
			if tc.name == "columns" {
				need += int64(len(body) + len(body)/8)
			}
			limit := max(need, 2*tc.state)
			if limit-need > int64(len(plain))/8 {
				t.Fatalf("a budget of %d leaves %d beyond the request: not a test of the room", limit, limit-need)
			}
			sink := &memSink{}
			h := New(Config{Sink: sink, Logger: quietLogger(), MaxRecvMsgSize: 16 << 20,
				Admission: AdmissionConfig{RequestLimit: limit, MaxWait: time.Millisecond}})
			c := startHandler(t, h)
			s := openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, tc.offer)
			if got := s.resp.Header.Get(otlp.StreamCompressionHeader); got == "" {
				t.Fatal("stateful compression declined")
			}
			s.sendRaw(msg)
			s.pw.Close()
			acks, st := s.finish()
			if st.Code != grpcwire.OK || len(acks) != 1 || acks[0].code != 0 {
				t.Fatalf("a %d-byte request (%d on the wire) in a budget of %d with %d of stream state: %v, acks %+v", len(plain), len(msg), limit, tc.state, st, acks)
			}
			if n := len(sink.all()); n != 1 {
				t.Fatalf("%d stored", n)
			}
		})
	}
}

// TestReviewSparesServeUnderPressure: with the state's half of the budget
// full of an ended stream's decoders, the next stream takes them (their
// charge becomes its own), rather than charging its own state first,
// which found no room, reclaimed every spare and made new decoders.
func TestReviewSparesServeUnderPressure(t *testing.T) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger(), Admission: AdmissionConfig{RequestLimit: 2 * oneSpare, MaxWait: time.Millisecond}})
	c := startHandler(t, h)
	acked := columnsStreams(t, c, 1)
	waitSpares(t, h, 2)
	if _, cost := h.spares.held(); cost != h.p.AdmissionLimit()/2 {
		t.Fatalf("spares charged %d: the test wants them to fill the state's half, %d", cost, h.p.AdmissionLimit()/2)
	}
	for range 3 {
		acked += columnsStreams(t, c, 1)
		waitSpares(t, h, 2)
	}
	for _, kind := range []string{"zstd", "columns"} {
		if n := counterValue(h.Metrics(), `otlplite_stream_decoders_reused_total{kind="`+kind+`"}`); n != 3 {
			t.Errorf("%s decoders reused %d times, want 3", kind, n)
		}
	}
	if n := counterValue(h.Metrics(), "otlplite_stream_compression_declined_total"); n != 0 {
		t.Errorf("%d offers declined", n)
	}
	if got := len(sink.all()); got != acked || acked != 4 {
		t.Fatalf("%d stored, %d acknowledged, want 4", got, acked)
	}
}
