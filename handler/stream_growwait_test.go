package handler

import (
	"bufio"
	"bytes"
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/easyproto"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
)

// growSeeds makes every request of openGrowStream's streams its own.
var growSeeds atomic.Uint64

// growRequest is request i of a stream: an ExportTraceServiceRequest of n
// spans whose ids are random, so that it compresses as real spans do (a
// few times, not a thousand: a message within the decoder's ratio of its
// declared length to its bytes).
func growRequest(i, n int) []byte { return growRequestRepeating(uint64(i), n, n) }

// growRequestRepeating is growRequest with only distinct spans' ids and
// times, repeated: a request that compresses many times more.
func growRequestRepeating(seed uint64, n, distinct int) []byte {
	var rng *rand.Rand
	var mp easyproto.MarshalerPool
	m := mp.Get()
	defer mp.Put(m)
	rs := m.MessageMarshaler().AppendMessage(1)
	attr := rs.AppendMessage(1).AppendMessage(1)
	attr.AppendString(1, "service.name")
	attr.AppendMessage(2).AppendString(1, "checkout")
	ss := rs.AppendMessage(2)
	ss.AppendMessage(1).AppendString(1, "scope")
	var id [16]byte
	for k := range n {
		if k%distinct == 0 {
			rng = rand.New(rand.NewPCG(seed, 7))
		}
		span := ss.AppendMessage(2)
		for j := range id {
			id[j] = byte(rng.Uint32())
		}
		id[0] = byte(seed) | 1
		span.AppendBytes(1, id[:])
		span.AppendBytes(2, id[8:])
		span.AppendString(5, "GET /api/cart/"+strconv.Itoa(k%17))
		span.AppendFixed64(7, 1_700_000_000_000_000_000+rng.Uint64N(1e9))
		span.AppendFixed64(8, 1_700_000_000_000_000_000+rng.Uint64N(1e9))
	}
	return m.Marshal(nil)
}

// admissionCounter reads one of the admission's counters (or gauges)
// from h's metrics.
func admissionCounter(t *testing.T, h *Handler, name string) int {
	t.Helper()
	var buf bytes.Buffer
	h.Metrics().WritePrometheus(&buf)
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(f)
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

const refusedGrow = "otlplite_admission_refusals_decompressed_over_budget_total"

// growStream is a stream with stateful compression (and columns) and the
// messages it sends, encoded in order.
type growStream struct {
	*testStream
	reqs, msgs [][]byte
	// stages are each message's decode stages' outputs: the zstd
	// output, then with columns the envelope the columns decode to.
	stages [][2]int
}

func openGrowStream(t *testing.T, c *grpcwire.Client, columns bool, n, spans int) *growStream {
	return openGrowStreamRepeating(t, c, columns, n, spans, spans)
}

// openGrowStreamRepeating is openGrowStream with growRequestRepeating's
// requests.
func openGrowStreamRepeating(t *testing.T, c *grpcwire.Client, columns bool, n, spans, distinct int) *growStream {
	t.Helper()
	offer := "zstd"
	if columns {
		offer = "zstd; columns"
	}
	s := &growStream{testStream: openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, offer)}
	got := s.resp.Header.Get(otlp.StreamCompressionHeader)
	if otlp.AcceptedStreamZstd(got) == 0 || otlp.AcceptedStreamColumns(got) != columns {
		t.Fatalf("answer %q to %q", got, offer)
	}
	enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
	t.Cleanup(enc.Close)
	cols := otlpcolumns.NewEncoder(otlpcolumns.Traces)
	for i := 1; i <= n; i++ {
		req := growRequestRepeating(growSeeds.Add(1), spans, distinct)
		env := envelope(uint64(i), req)
		stage := [2]int{len(env), 0}
		if columns {
			cenv := cols.Append(nil, env)
			stage = [2]int{len(cenv), len(env)}
			env = cenv
		}
		msg, err := enc.AppendMessage(nil, env)
		if err != nil {
			t.Fatal(err)
		}
		s.reqs, s.msgs, s.stages = append(s.reqs, req), append(s.msgs, msg), append(s.stages, stage)
	}
	return s
}

// finishInOrder checks that the stream ended OK with every request
// acknowledged Success in order, each stored once, as sent.
func (s *growStream) finishInOrder(t *testing.T, sink *memSink) {
	t.Helper()
	acks, st := s.finish()
	if st.Code != grpcwire.OK || len(acks) != len(s.reqs) {
		t.Fatalf("stream ended with %v after %d of %d acknowledgements", st, len(acks), len(s.reqs))
	}
	for i, a := range acks {
		if a.id != uint64(i+1) || a.code != resultSuccess {
			t.Fatalf("acknowledgement %d: %+v, want request %d's Success", i, a, i+1)
		}
	}
	stored := sink.all()
	if len(stored) != len(s.reqs) {
		t.Fatalf("%d requests stored, want %d", len(stored), len(s.reqs))
	}
	for i, w := range stored {
		if !bytes.Equal(w.data, s.reqs[i]) {
			t.Fatalf("stored request %d is not request %d as sent", i, i+1)
		}
	}
}

// TestStreamGrowWaits: a stream with stateful compression (zstd, and zstd
// with columns) whose decode meets a budget another holder fills waits for
// the holder to let go, as a request's Charge does, instead of being ended
// whole (its client would resend every pending request on a cold stream):
// every request is stored once and acknowledged in order, on the one
// stream, none refused. "columns-stage" leaves room for the zstd output
// and not for the envelope the columns decode to.
func TestStreamGrowWaits(t *testing.T) {
	for _, tc := range []struct {
		name          string
		columns       bool
		columnsStage  bool
		requests, big int
	}{
		{"zstd", false, false, 6, 1500},
		{"columns", true, false, 6, 1500},
		{"columns-stage", true, true, 6, 1500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 16 << 20
			sink := &memSink{}
			h := New(Config{Sink: sink, Logger: quietLogger(),
				Admission: AdmissionConfig{RequestLimit: limit, MaxWait: time.Minute},
				// One request at a time: the stream's decode is what
				// meets the full budget, and the acknowledgements come
				// in order.
				Stream: StreamConfig{MaxInFlight: 1}})
			c := startHandler(t, h)
			s := openGrowStream(t, c, tc.columns, tc.requests, tc.big)
			// The holder leaves room for the first message's wire
			// bytes (and, for columns-stage, its zstd output with an
			// eighth) and half of what its decode needs next.
			inFlight, _ := h.p.AdmissionState()
			first := s.stages[0][0]
			free := len(s.msgs[0]) + 64 + first/2
			if tc.columnsStage {
				free = len(s.msgs[0]) + 64 + first + first/8 + s.stages[0][1]/2
			}
			hold := h.p.Take(context.Background())
			if err := hold.Charge(context.Background(), int(limit-inFlight)-free); err != nil {
				t.Fatal(err)
			}
			s.sendRaw(s.msgs[0])
			waitFor(t, func() bool {
				_, waiting := h.p.AdmissionState()
				return waiting > 0 || admissionCounter(t, h, refusedGrow) > 0
			})
			if n := admissionCounter(t, h, refusedGrow); n > 0 {
				h.p.Done(hold)
				t.Fatalf("the stream's decode was refused at once (%d refusals) where it should wait for the holder", n)
			}
			// What waits is the stage's declared output (with an
			// eighth at most) and the stream's window, unread meanwhile.
			_, waiting := h.p.AdmissionState()
			stage := s.stages[0][0]
			if tc.columnsStage {
				stage = s.stages[0][1]
			}
			if w := int(waiting) - ingest.DefaultStreamWindow; w < stage || w > stage+stage/8 {
				h.p.Done(hold)
				t.Fatalf("%d bytes wait beside the window, want the %d bytes the stage declares and at most an eighth more", w, stage)
			}
			sent := make(chan struct{})
			go func() {
				defer close(sent)
				for _, m := range s.msgs[1:] {
					s.sendRaw(m)
				}
			}()
			h.p.Done(hold)
			<-sent
			s.pw.Close()
			s.finishInOrder(t, sink)
			if n := admissionCounter(t, h, refusedGrow); n != 0 {
				t.Fatalf("%d decodes refused", n)
			}
			waitFor(t, func() bool { in, waiting := h.p.AdmissionState(); return in == h.p.StreamStateHeld() && waiting == 0 })
		})
	}
}
