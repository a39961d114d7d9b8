package handler

import (
	"context"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
)

const admissionWaits = "otlplite_admission_waits_total"

// holdAllBut charges a holder ticket with all of h's budget but free
// bytes, and returns it with its charge (Done it).
func holdAllBut(t *testing.T, h *Handler, free int) (*ingest.Ticket, int64) {
	t.Helper()
	inFlight, _ := h.p.AdmissionState()
	n := h.p.AdmissionLimit() - inFlight - int64(free)
	hold := h.p.Take(context.Background())
	// Grow takes it without waiting behind anyone.
	if err := hold.Grow(int(n)); err != nil {
		t.Fatal(err)
	}
	return hold, n
}

// waitBudgetBack waits for h's budget to hold only what holds and the
// streams' decoder state (their own or kept as spares), nothing waiting.
func waitBudgetBack(t *testing.T, h *Handler, holds int64) {
	t.Helper()
	waitFor(t, func() bool {
		in, waiting := h.p.AdmissionState()
		return in == holds+h.p.StreamStateHeld() && waiting == 0
	})
}

// lie returns the stream message msg with its declared length replaced
// by n.
func lie(msg []byte, n int) []byte {
	_, k := binary.Uvarint(msg[1:])
	return append(binary.AppendUvarint([]byte{0}, uint64(n)), msg[1+k:]...)
}

// TestStreamGrowWaitHostileLength: what a stream message declares does
// not make its stream wait for more than its bytes can carry. A declared
// length over the message limit is refused before anything is charged or
// waited for (RESOURCE_EXHAUSTED, as before); one at the limit carried by
// a few hundred bytes (zstd: 256 times its bytes at most; columns: 16
// times their columns at most, beyond 64 KiB) has only that reserved,
// with room for it in the budget and none for the declared length: it
// does not wait, the stream ends on the output that does not match, and
// the budget is whole again.
func TestStreamGrowWaitHostileLength(t *testing.T) {
	const limit = 4 << 20
	for _, tc := range []struct {
		name     string
		columns  bool
		declared int
		want     grpcwire.Code
	}{
		{"zstd over the limit", false, limit + 1, grpcwire.ResourceExhausted},
		{"zstd at the limit", false, limit, grpcwire.InvalidArgument},
		{"columns at the limit", true, limit, grpcwire.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			h := New(Config{Sink: sink, Logger: quietLogger(), MaxRecvMsgSize: limit,
				Admission: AdmissionConfig{RequestLimit: 16 << 20, MaxWait: time.Minute}})
			c := startHandler(t, h)
			s := openGrowStream(t, c, tc.columns, 1, 40)
			msg := lie(s.msgs[0], tc.declared)
			// What may be reserved: 256 times the message's zstd bytes
			// (a few hundred), or with columns an honest zstd stage
			// and 16 times its columns (64 KiB at least).
			body := len(msg) - 1 - binary.PutUvarint(make([]byte, 10), uint64(tc.declared))
			free := len(msg) + 64 + max(64<<10, 256*body)
			if tc.columns {
				enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
				defer enc.Close()
				cols := otlpcolumns.NewEncoder(otlpcolumns.Traces).Append(nil, envelope(1, s.reqs[0]))
				if cols[0] != 1 {
					t.Fatal("the request was not transformed")
				}
				_, k := binary.Uvarint(cols[1:])
				cols = append(binary.AppendUvarint([]byte{1}, uint64(tc.declared)), cols[1+k:]...)
				msg, _ = enc.AppendMessage(nil, cols)
				free = len(msg) + 64 + len(cols) + len(cols)/8 + max(64<<10, 16*len(cols))
			}
			hold, held := holdAllBut(t, h, free)
			defer h.p.Done(hold)
			s.sendRaw(msg)
			if _, st := s.finish(); st.Code != tc.want {
				t.Fatalf("stream ended with %v, want %v", st, tc.want)
			}
			if n := admissionCounter(t, h, admissionWaits); n != 0 {
				t.Fatalf("%d waits for a message that declares what its bytes cannot carry", n)
			}
			if n := len(sink.all()); n != 0 {
				t.Fatalf("%d requests stored", n)
			}
			waitBudgetBack(t, h, held)
		})
	}
}

// TestStreamGrowWaitManyStreams: many streams waiting at once, each for
// its decode's room (its window parked in the waiting budget) or, behind
// those, for its message's wire bytes, and a unary client that comes after
// them, are all served when the holder lets go: every stream's requests
// stored once and acknowledged in order on its one stream, and the unary
// request stored.
func TestStreamGrowWaitManyStreams(t *testing.T) {
	const streams, requests = 6, 2
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger(),
		Admission: AdmissionConfig{RequestLimit: 64 << 20, MaxWait: time.Minute},
		Stream:    StreamConfig{MaxInFlight: 1}})
	c := startHandler(t, h)
	var ss []*growStream
	free := 0
	for i := range streams {
		// Requests that compress 40 times: a stream's decode needs
		// more than every stream's wire bytes.
		s := openGrowStreamRepeating(t, c, i%2 == 1, requests, 2000, 40)
		ss = append(ss, s)
		free += len(s.msgs[0]) + 64
	}
	for _, s := range ss {
		if s.stages[0][0] <= free {
			t.Fatalf("a stream's decode of %d bytes fits the %d left", s.stages[0][0], free)
		}
	}
	hold, _ := holdAllBut(t, h, free)
	for _, s := range ss {
		s.sendRaw(s.msgs[0])
	}
	// No room comes back until the holder lets go: each stream waits
	// once, for its decode or its wire bytes, and the first of them for
	// its decode.
	waitFor(t, func() bool { return admissionCounter(t, h, admissionWaits) == streams })
	if parked := admissionCounter(t, h, "otlplite_admission_unread_window_bytes"); parked < ingest.DefaultStreamWindow || parked > streams*ingest.DefaultStreamWindow {
		t.Fatalf("%d bytes of windows parked, want between one and %d streams' windows", parked, streams)
	}
	unary := make(chan error, 1)
	go func() {
		_, err := c.Invoke(context.Background(), traceExport, traceRequest(goodID))
		unary <- err
	}()
	waitFor(t, func() bool { return admissionCounter(t, h, admissionWaits) == streams+1 })
	h.p.Done(hold)
	if err := <-unary; err != nil {
		t.Fatalf("unary export: %v", err)
	}
	sent := make(chan struct{})
	for _, s := range ss {
		go func() {
			defer func() { sent <- struct{}{} }()
			for _, m := range s.msgs[1:] {
				s.sendRaw(m)
			}
			s.pw.Close()
		}()
	}
	for range ss {
		<-sent
	}
	for _, s := range ss {
		acks, st := s.finish()
		if st.Code != grpcwire.OK || len(acks) != requests {
			t.Fatalf("stream ended with %v after %d of %d acknowledgements", st, len(acks), requests)
		}
		for i, a := range acks {
			if a.id != uint64(i+1) || a.code != resultSuccess {
				t.Fatalf("acknowledgement %d: %+v", i, a)
			}
		}
	}
	stored := sink.all()
	if len(stored) != streams*requests+1 {
		t.Fatalf("%d requests stored, want %d", len(stored), streams*requests+1)
	}
	for _, s := range ss {
		for _, req := range s.reqs {
			if n := countStored(stored, req); n != 1 {
				t.Fatalf("a stream's request stored %d times", n)
			}
		}
	}
	if n := admissionCounter(t, h, refusedGrow); n != 0 {
		t.Fatalf("%d decodes refused", n)
	}
	waitBudgetBack(t, h, 0)
}

func countStored(stored []memWrite, req []byte) int {
	n := 0
	for _, w := range stored {
		if slices.Equal(w.data, req) {
			n++
		}
	}
	return n
}

// TestStreamGrowWaitEnds: a wait that room never comes for ends the
// stream as the refusal at once did before: when the admission's MaxWait
// passes (UNAVAILABLE with a retry delay: its client resends on a new
// stream) or the server shuts down (the stream rotates: UNAVAILABLE, a
// zero delay); nothing of the waiting request is stored, nothing stays
// waiting or parked, and the budget is whole again.
func TestStreamGrowWaitEnds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxWait  time.Duration
		shutdown bool
	}{
		{"max wait", 20 * time.Millisecond, false},
		{"shutdown", time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			h := New(Config{Sink: sink, Logger: quietLogger(),
				Admission: AdmissionConfig{RequestLimit: 16 << 20, MaxWait: tc.maxWait}})
			c := startHandler(t, h)
			s := openGrowStream(t, c, false, 1, 3000)
			free := len(s.msgs[0]) + 64 + s.stages[0][0]/2
			hold, held := holdAllBut(t, h, free)
			defer h.p.Done(hold)
			s.sendRaw(s.msgs[0])
			if tc.shutdown {
				waitFor(t, func() bool { _, waiting := h.p.AdmissionState(); return waiting > 0 })
				h.Shutdown()
			}
			acks, st := s.finish()
			if len(acks) != 0 || st.Code != grpcwire.Unavailable {
				t.Fatalf("%d acknowledgements, status %v; want none and UNAVAILABLE", len(acks), st)
			}
			if rotated := st.RetryDelay < 0; rotated != tc.shutdown {
				t.Fatalf("status %+v: rotation %v, want %v", st, rotated, tc.shutdown)
			}
			if n := len(sink.all()); n != 0 {
				t.Fatalf("%d requests stored", n)
			}
			waitBudgetBack(t, h, held)
			if n := admissionCounter(t, h, "otlplite_admission_unread_window_bytes"); n != 0 {
				t.Fatalf("%d bytes of windows still parked", n)
			}
		})
	}
}
