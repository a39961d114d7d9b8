package handler

import (
	"bytes"
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
)

// TestStreamColumnsEarlierIDOfAnotherLength: a hostile client's columns
// message (otlpcolumns' FuzzVouchStream seed, found by interop's
// FuzzVouchedReadByPdata) of two spans, the second with a parent_span_id
// of 5 bytes and then one of 8. The checker judged the span by the last
// occurrence and the decoder vouched for it: stored whole, the request was
// one the Collector's pdata cannot read ("invalid SpanID length"). The
// span is now rejected (otlpdecode.ValidIDLen): the request is validated,
// not vouched for, and stored without it.
func TestStreamColumnsEarlierIDOfAnotherLength(t *testing.T) {
	msgs := hostileColumns(t, "earlier-parent-span-id-5-bytes")
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	h, sink, s := openColumnsStream(t, "ExportTraces")
	enc, _ := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
	z, err := enc.AppendMessage(nil, msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	s.sendRaw(z)
	a, ok := s.recv()
	if !ok {
		t.Fatal("the stream ended")
	}
	s.pw.Close()
	if _, st := s.finish(); st.Code != grpcwire.OK {
		t.Fatalf("status %v", st)
	}
	if a.code != resultSuccess || a.rejected != 1 {
		t.Fatalf("ack %+v, want Success with the span rejected", a)
	}
	stored := sink.all()
	badParent := []byte{0x22, 5, '0', '0', '0', '0', '0'}
	if len(stored) != 1 || bytes.Contains(stored[0].data, badParent) {
		t.Fatalf("stored %d requests, want one without the rejected span", len(stored))
	}
	if v, c := counterValue(h.Metrics(), "otlplite_stream_columns_vouched_total"), counterValue(h.Metrics(), "otlplite_stream_columns_checked_total"); v != 0 || c != 1 {
		t.Fatalf("%d vouched for, %d checked, want 0 and 1", v, c)
	}
}
