package handler

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// sendRaw sends msg as one gRPC message, compressed flag 0.
func (s *testStream) sendRaw(msg []byte) {
	if _, err := s.pw.Write(frame(msg)); err != nil {
		s.t.Fatalf("send: %v", err)
	}
}

// sendZstd sends request id through the stream's stateful encoder.
func (s *testStream) sendZstd(enc *compression.StreamEncoder, id uint64, exportReq []byte) {
	msg, err := enc.AppendMessage(nil, envelope(id, exportReq))
	if err != nil {
		s.t.Fatal(err)
	}
	s.sendRaw(msg)
}

func counterValue(set *metrics.Set, name string) uint64 {
	return set.GetOrCreateCounter(name).Get()
}

// TestStreamZstd: a client that offers stateful compression is answered
// with the window it may use; plain messages (sent before the answer
// arrived) and stream messages mix on one stream; every request is
// acknowledged and stored as its plain ExportTraceServiceRequest; the
// decoder's charge is returned when the stream ends.
func TestStreamZstd(t *testing.T) {
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	c := startHandler(t, h)
	s := openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, "zstd")
	got := s.resp.Header.Get(otlp.StreamCompressionHeader)
	if otlp.AcceptedStreamZstd(got) != DefaultStreamCompressionWindow {
		t.Fatalf("answer %q, want zstd with a window of %d", got, DefaultStreamCompressionWindow)
	}
	if held := h.p.StreamStateHeld(); held != compression.StreamDecoderCost(DefaultStreamCompressionWindow) {
		t.Fatalf("decoder charged %d bytes", held)
	}
	enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
	req := traceRequest(goodID)
	s.send(1, req)
	s.send(2, req)
	for id := uint64(3); id <= 20; id++ {
		s.sendZstd(enc, id, req)
	}
	s.pw.Close()
	acks, st := s.finish()
	if st.Code != grpcwire.OK || len(acks) != 20 {
		t.Fatalf("status %v, %d acks", st, len(acks))
	}
	for _, a := range acks {
		if a.code != resultSuccess {
			t.Fatalf("ack %+v", a)
		}
	}
	stored := sink.all()
	if len(stored) != 20 {
		t.Fatalf("%d stored", len(stored))
	}
	for _, r := range stored {
		if !bytes.Equal(r.data, req) {
			t.Fatalf("stored %x, want the plain request", r.data)
		}
	}
	waitFor(t, func() bool { return h.streamStateNotSpare() == 0 })
	if n := counterValue(h.Metrics(), "otlplite_stream_compression_accepted_total"); n != 1 {
		t.Fatalf("accepted_total %d", n)
	}
}

// TestStreamZstdMixedVersions: an old client (no offer) gets no answer and
// is served as before; a server with stateful compression off (as one that
// does not know the header) answers nothing to an offer; a server whose
// budget has no room for a decoder declines, counted, and serves the
// stream as before.
func TestStreamZstdMixedVersions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		offer bool
	}{
		{"old client", Config{}, false},
		{"server off", Config{Stream: StreamConfig{CompressionWindow: -1}}, true},
		{"no room", Config{Admission: AdmissionConfig{RequestLimit: 2 << 20}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			tc.cfg.Sink, tc.cfg.Logger = sink, quietLogger()
			h := New(tc.cfg)
			c := startHandler(t, h)
			var kv []string
			if tc.offer {
				kv = []string{otlp.StreamCompressionHeader, "zstd"}
			}
			s := openStream(t, c, "ExportTraces", kv...)
			if got := s.resp.Header.Get(otlp.StreamCompressionHeader); got != "" {
				t.Fatalf("answered %q", got)
			}
			for id := uint64(1); id <= 5; id++ {
				s.send(id, traceRequest(goodID))
			}
			s.pw.Close()
			acks, st := s.finish()
			if st.Code != grpcwire.OK || len(acks) != 5 || len(sink.all()) != 5 {
				t.Fatalf("status %v, %d acks, %d stored", st, len(acks), len(sink.all()))
			}
			if h.p.StreamStateHeld() != 0 {
				t.Fatal("a declined stream holds decoder memory")
			}
			declined := counterValue(h.Metrics(), "otlplite_stream_compression_declined_total")
			if want := uint64(0); tc.name == "no room" && declined != 1 || tc.name != "no room" && declined != want {
				t.Fatalf("declined_total %d", declined)
			}
		})
	}
}

// TestStreamZstdHostile: stream messages that declare a window larger than
// negotiated, a length larger than the message limit, a length smaller
// than what they decode to, garbage after good messages, or that need the
// next message's bytes, end their stream with the right status, after the
// requests before them are acknowledged; the decoder's charge is returned;
// an honest stream beside them is served.
func TestStreamZstdHostile(t *testing.T) {
	req := traceRequest(goodID)
	bigWindow, _ := compression.NewStreamEncoder(8 << 20)
	tooWide, _ := bigWindow.AppendMessage(nil, envelope(3, req))
	hugeWindow := binary.AppendUvarint([]byte{0}, 100)
	hugeWindow = append(hugeWindow, 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8) // a 2^41-byte window
	for _, tc := range []struct {
		name string
		bad  func(enc *compression.StreamEncoder) []byte
		code grpcwire.Code
		want string
	}{
		{"window larger than negotiated", func(*compression.StreamEncoder) []byte { return tooWide }, grpcwire.InvalidArgument, "window"},
		{"huge window declared", func(*compression.StreamEncoder) []byte { return hugeWindow }, grpcwire.InvalidArgument, "cannot decompress stream request"},
		{"longer than the limit", func(enc *compression.StreamEncoder) []byte {
			// 8 MiB of zeros from history: a few hundred bytes.
			m, _ := enc.AppendMessage(nil, make([]byte, 8<<20))
			return m
		}, grpcwire.ResourceExhausted, "larger than max"},
		{"lying length", func(enc *compression.StreamEncoder) []byte {
			m, _ := enc.AppendMessage(nil, make([]byte, 1<<20))
			m[1], m[2] = 100, 0 // one-byte length 100, then a byte of garbage before the zstd bytes
			return m
		}, grpcwire.InvalidArgument, "cannot decompress stream request"},
		{"garbage mid-stream", func(*compression.StreamEncoder) []byte {
			return append([]byte{0, 20}, "twenty bytes garbage"...)
		}, grpcwire.InvalidArgument, "cannot decompress stream request"},
		{"cut short", func(enc *compression.StreamEncoder) []byte {
			m, _ := enc.AppendMessage(nil, envelope(3, req))
			return m[:len(m)-2]
		}, grpcwire.InvalidArgument, "cannot decompress stream request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			h := New(Config{Sink: sink, Logger: quietLogger(), MaxRecvMsgSize: 4 << 20})
			c := startHandler(t, h)
			bad := openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, "zstd")
			honest := openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, "zstd")
			enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
			henc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
			bad.sendZstd(enc, 1, req)
			bad.sendZstd(enc, 2, req)
			honest.sendZstd(henc, 1, req)
			bad.sendRaw(tc.bad(enc))
			acks, st := bad.finish()
			if st.Code != tc.code || !strings.Contains(st.Message, tc.want) {
				t.Fatalf("status %v, want %v with %q", st, tc.code, tc.want)
			}
			if len(acks) != 2 {
				t.Fatalf("%d acks before the bad message, want 2", len(acks))
			}
			honest.sendZstd(henc, 2, req)
			honest.pw.Close()
			hacks, hst := honest.finish()
			if hst.Code != grpcwire.OK || len(hacks) != 2 {
				t.Fatalf("the honest stream: %v, %d acks", hst, len(hacks))
			}
			if n := len(sink.all()); n != 4 {
				t.Fatalf("%d stored, want 4", n)
			}
			waitFor(t, func() bool { return h.streamStateNotSpare() == 0 })
			inFlight, _ := h.p.AdmissionState()
			if _, spared := h.spares.held(); inFlight != spared {
				t.Fatalf("%d bytes still charged", inFlight)
			}
		})
	}
}

// waitFor polls cond: the read loop returns the decoder's charge as it
// exits, which may be just after the trailers were written.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
		runtime.Gosched()
	}
}
