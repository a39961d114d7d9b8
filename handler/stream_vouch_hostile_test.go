package handler

import (
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// hostileColumns reads the columns messages of a stream of otlpcolumns'
// FuzzVouchStream corpus: its first value, each message a uvarint length
// and its bytes.
func hostileColumns(t *testing.T, name string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile("../otlpcolumns/testdata/fuzz/FuzzVouchStream/" + name)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "[]byte(") {
		t.Fatalf("%s: not a corpus file", name)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	var msgs [][]byte
	for b := []byte(s); len(b) > 0; {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			t.Fatalf("%s: bad stream", name)
		}
		msgs = append(msgs, b[k:k+int(l)])
		b = b[k+int(l):]
	}
	return msgs
}

// openColumnsStream opens a stream of method, its client offering zstd
// and columns, on a new handler storing into a memSink (both returned),
// and fails the test unless the handler accepts both.
func openColumnsStream(t *testing.T, method string) (*Handler, *memSink, *testStream) {
	t.Helper()
	sink := &memSink{}
	h := New(Config{Sink: sink, Logger: quietLogger()})
	s := openStream(t, startHandler(t, h), method, otlp.StreamCompressionHeader, "zstd; columns")
	if got := s.resp.Header.Get(otlp.StreamCompressionHeader); !otlp.AcceptedStreamColumns(got) {
		t.Fatalf("answer %q, want columns", got)
	}
	return h, sink, s
}

// TestStreamColumnsCrossFieldSeries: a hostile client's columns stream
// whose second request refers, from a histogram point, to the run of a
// number point's attributes its first left (otlpcolumns'
// TestVouchSeriesOfAnotherField: five bytes of explicit_bounds, a
// malformed request) has that request validated, not vouched for: it is
// refused as malformed (FailedNoneRetryable, "cannot decode"), nothing of
// it stored, the first request, honest, stored.
func TestStreamColumnsCrossFieldSeries(t *testing.T) {
	msgs := hostileColumns(t, "cross-field")
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want 2", len(msgs))
	}
	h, sink, s := openColumnsStream(t, "ExportMetrics")
	enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
	var acks []ack
	for _, m := range msgs {
		z, err := enc.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		s.sendRaw(z)
		// One at a time: the second is decoded after the first is
		// acknowledged.
		a, ok := s.recv()
		if !ok {
			t.Fatal("the stream ended")
		}
		acks = append(acks, a)
	}
	s.pw.Close()
	if _, st := s.finish(); st.Code != grpcwire.OK {
		t.Fatalf("status %v", st)
	}
	if acks[0].code != resultSuccess || acks[1].code != resultNonRetryable || !strings.Contains(acks[1].message, "cannot decode") {
		t.Fatalf("acks %+v, want the first stored, the second refused as malformed", acks)
	}
	stored := sink.all()
	if len(stored) != 1 || bytes.Contains(stored[0].data, []byte{0x3a, 5, 0x0a, 1, 'k', 0x12, 0}) == false {
		t.Fatalf("stored %d requests, want the first", len(stored))
	}
	if v, c := counterValue(h.Metrics(), "otlplite_stream_columns_vouched_total"), counterValue(h.Metrics(), "otlplite_stream_columns_checked_total"); v != 1 || c != 1 {
		t.Fatalf("%d vouched for, %d checked, want 1 and 1", v, c)
	}
}

// TestStreamColumnsBackToPlaceholder: a hostile client's columns message
// whose span's trace_id refers back to a value too long to be referenced
// (otlpcolumns' TestVouchBackToPlaceholder: the tag written without a
// value, the span's later fields misread) ends the stream as corrupt;
// nothing is stored.
func TestStreamColumnsBackToPlaceholder(t *testing.T) {
	msgs := hostileColumns(t, "back-to-placeholder")
	_, sink, s := openColumnsStream(t, "ExportTraces")
	enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
	for _, m := range msgs {
		z, err := enc.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		s.sendRaw(z)
	}
	s.pw.Close()
	acks, st := s.finish()
	if st.Code != grpcwire.InvalidArgument || !strings.Contains(st.Message, "corrupt columnar message") || len(acks) != 0 {
		t.Fatalf("status %v, %d acks, want the stream ended as corrupt", st, len(acks))
	}
	if n := len(sink.all()); n != 0 {
		t.Fatalf("%d stored", n)
	}
}
