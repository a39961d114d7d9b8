package handler

import (
	"bytes"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpcolumns"
)

// sendColumns sends request id through the stream's columnar transform and
// stateful encoder.
func (s *testStream) sendColumns(cols *otlpcolumns.Encoder, enc *compression.StreamEncoder, id uint64, exportReq []byte) {
	msg, err := enc.AppendMessage(nil, cols.Append(nil, envelope(id, exportReq)))
	if err != nil {
		s.t.Fatal(err)
	}
	s.sendRaw(msg)
}

// TestStreamColumns: a client that offers zstd with columns is answered
// with both for traces and metrics (zstd alone for profiles, which have no
// schema); plain, zstd and columns messages are stored as the plain
// request; both decoders' charges are held for the stream and returned.
func TestStreamColumns(t *testing.T) {
	for _, tc := range []struct {
		method string
		sig    otlpcolumns.Signal
		req    []byte
	}{
		{"ExportTraces", otlpcolumns.Traces, traceRequest(goodID)},
		{"ExportMetrics", otlpcolumns.Metrics, metrics500x10()},
	} {
		t.Run(tc.method, func(t *testing.T) {
			sink := &memSink{}
			h := New(Config{Sink: sink, Logger: quietLogger()})
			c := startHandler(t, h)
			s := openStream(t, c, tc.method, otlp.StreamCompressionHeader, "zstd; columns")
			got := s.resp.Header.Get(otlp.StreamCompressionHeader)
			if otlp.AcceptedStreamZstd(got) != DefaultStreamCompressionWindow || !otlp.AcceptedStreamColumns(got) {
				t.Fatalf("answer %q, want zstd with a window and columns", got)
			}
			if held, want := h.p.StreamStateHeld(), compression.StreamDecoderCost(DefaultStreamCompressionWindow)+otlpcolumns.DecoderCost; held != want {
				t.Fatalf("decoders charged %d bytes, want %d", held, want)
			}
			enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
			cols := otlpcolumns.NewEncoder(tc.sig)
			s.send(1, tc.req)
			for id := uint64(2); id <= 10; id++ {
				s.sendColumns(cols, enc, id, tc.req)
			}
			s.pw.Close()
			acks, st := s.finish()
			if st.Code != grpcwire.OK || len(acks) != 10 {
				t.Fatalf("status %v, %d acks", st, len(acks))
			}
			for _, r := range sink.all() {
				if !bytes.Equal(r.data, tc.req) {
					t.Fatal("stored other bytes than the plain request")
				}
			}
			if n := len(sink.all()); n != 10 {
				t.Fatalf("%d stored", n)
			}
			waitFor(t, func() bool { return h.streamStateNotSpare() == 0 })
			if n := counterValue(h.Metrics(), "otlplite_stream_columns_accepted_total"); n != 1 {
				t.Fatalf("columns_accepted_total %d", n)
			}
		})
	}
	t.Run("profiles", func(t *testing.T) {
		h := New(Config{Sink: &memSink{}, Logger: quietLogger()})
		s := openStream(t, startHandler(t, h), "ExportProfiles", otlp.StreamCompressionHeader, "zstd; columns")
		if got := s.resp.Header.Get(otlp.StreamCompressionHeader); otlp.AcceptedStreamZstd(got) == 0 || otlp.AcceptedStreamColumns(got) {
			t.Fatalf("answer %q, want zstd alone", got)
		}
		s.pw.Close()
		s.finish()
	})
	t.Run("no room for columns", func(t *testing.T) {
		// Room for the zstd decoder (half the limit is 2 MiB), not for
		// both: zstd alone, the refusal counted.
		h := New(Config{Sink: &memSink{}, Logger: quietLogger(), Admission: AdmissionConfig{RequestLimit: 4 << 20}})
		s := openStream(t, startHandler(t, h), "ExportTraces", otlp.StreamCompressionHeader, "zstd; columns")
		if got := s.resp.Header.Get(otlp.StreamCompressionHeader); otlp.AcceptedStreamZstd(got) == 0 || otlp.AcceptedStreamColumns(got) {
			t.Fatalf("answer %q, want zstd alone", got)
		}
		if n := counterValue(h.Metrics(), "otlplite_stream_compression_declined_total"); n != 1 {
			t.Fatalf("declined_total %d", n)
		}
		s.pw.Close()
		s.finish()
		waitFor(t, func() bool { return h.streamStateNotSpare() == 0 })
	})
}

// TestStreamColumnsHostile: a columns message that is not what the encoder
// writes, or that declares more than the message limit, ends its stream
// (INVALID_ARGUMENT, counted; RESOURCE_EXHAUSTED) after the requests before
// it are acknowledged, with its charges returned; an honest stream beside
// it is served.
func TestStreamColumnsHostile(t *testing.T) {
	req := traceRequest(goodID)
	for _, tc := range []struct {
		name string
		bad  []byte // the columns message, before zstd
		code grpcwire.Code
		want string
	}{
		{"garbage", []byte{1, 10, 1, 0, 3, 1, 2, 3}, grpcwire.InvalidArgument, "corrupt columnar message"},
		{"unknown flag", []byte{9, 1, 2, 3}, grpcwire.InvalidArgument, "corrupt columnar message"},
		{"declares more than the limit", []byte{1, 0x80, 0x80, 0x80, 0x04, 0}, grpcwire.ResourceExhausted, "larger than max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &memSink{}
			h := New(Config{Sink: sink, Logger: quietLogger(), MaxRecvMsgSize: 4 << 20})
			c := startHandler(t, h)
			bad := openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, "zstd; columns")
			honest := openStream(t, c, "ExportTraces", otlp.StreamCompressionHeader, "zstd; columns")
			enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
			henc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
			cols, hcols := otlpcolumns.NewEncoder(otlpcolumns.Traces), otlpcolumns.NewEncoder(otlpcolumns.Traces)
			bad.sendColumns(cols, enc, 1, req)
			honest.sendColumns(hcols, henc, 1, req)
			m, err := enc.AppendMessage(nil, tc.bad)
			if err != nil {
				t.Fatal(err)
			}
			bad.sendRaw(m)
			acks, st := bad.finish()
			if st.Code != tc.code || !strings.Contains(st.Message, tc.want) {
				t.Fatalf("status %v, want %v with %q", st, tc.code, tc.want)
			}
			if len(acks) != 1 {
				t.Fatalf("%d acks before the bad message, want 1", len(acks))
			}
			honest.sendColumns(hcols, henc, 2, req)
			honest.pw.Close()
			if hacks, hst := honest.finish(); hst.Code != grpcwire.OK || len(hacks) != 2 {
				t.Fatalf("the honest stream: %v, %d acks", hst, len(hacks))
			}
			if n := len(sink.all()); n != 3 {
				t.Fatalf("%d stored, want 3", n)
			}
			waitFor(t, func() bool { return h.streamStateNotSpare() == 0 })
			if inFlight, _ := h.p.AdmissionState(); inFlight != h.p.StreamStateHeld() {
				t.Fatalf("%d bytes still charged", inFlight)
			}
		})
	}
}
