package handler

import (
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// TestStreamStateTenantShare: a tenant whose max_budget_share is a
// quarter of the budget opens stream after stream offering stateful zstd:
// its streams hold at most half its share in decoders (two here), its
// further streams are declined stateful compression (served without it,
// otlplite_stream_compression_declined_total), and another tenant's
// stream still gets it. Every stream's requests are acknowledged and
// stored; the tenant's state, given back when its streams end, lets its
// next stream take a spare decoder (charged to it again).
func TestStreamStateTenantShare(t *testing.T) {
	cost := compression.StreamDecoderCost(DefaultStreamCompressionWindow)
	qf, err := NewQuotaFile(writeFile(t, "greedy max_budget_share=0.25\n"))
	if err != nil {
		t.Fatal(err)
	}
	sink := &tenantSink{}
	// The state half holds eight decoders; greedy's share four, half of
	// it in state: two.
	h := New(Config{Sink: sink, Logger: quietLogger(), Tenants: &TenantConfig{Quotas: qf},
		Admission: AdmissionConfig{RequestLimit: 16 * cost}})
	c := startHandler(t, h)
	req := traceRequest(goodID, goodID)
	open := func(tenant string) (*testStream, bool) {
		s := openStream(t, c, "ExportTraces", "X-Scope-OrgID", tenant, otlp.StreamCompressionHeader, "zstd")
		return s, s.resp.Header.Get(otlp.StreamCompressionHeader) != ""
	}
	var greedy []*testStream
	for i := range 3 {
		s, ok := open("greedy")
		if want := i < 2; ok != want {
			t.Fatalf("greedy's stream %d: stateful zstd accepted %v, want %v", i, ok, want)
		}
		greedy = append(greedy, s)
	}
	other, ok := open("other")
	if !ok {
		t.Fatal("another tenant's stream was declined stateful zstd: greedy's streams took its room")
	}
	if n := counterValue(h.Metrics(), "otlplite_stream_compression_declined_total"); n != 1 {
		t.Fatalf("%d streams declined, want greedy's third", n)
	}
	if got := h.p.StreamStateHeld(); got != 3*cost {
		t.Fatalf("stream state held %d, want three decoders' %d", got, 3*cost)
	}
	// Every stream serves its client: with its decoder, or without.
	for i, s := range append(greedy, other) {
		if i == 2 {
			s.send(1, req)
		} else {
			enc, err := compression.NewStreamEncoder(DefaultStreamCompressionWindow)
			if err != nil {
				t.Fatal(err)
			}
			defer enc.Close()
			s.sendZstd(enc, 1, req)
		}
		s.pw.Close()
		if acks, st := s.finish(); st.Code != grpcwire.OK || len(acks) != 1 || acks[0].code != resultSuccess {
			t.Fatalf("stream %d: %+v %v", i, acks, st)
		}
	}
	if g, o := sink.get("greedy"), sink.get("other"); g != 6 || o != 2 {
		t.Fatalf("stored greedy %d, other %d items; want 6 and 2", g, o)
	}
	// Their charges given back, the decoders wait as spares; greedy's
	// next streams take them, charged to greedy again: two, not three.
	waitSpares(t, h, 3)
	for i := range 3 {
		s, ok := open("greedy")
		if want := i < 2; ok != want {
			t.Fatalf("greedy's stream %d after the first ended: stateful zstd accepted %v, want %v", i, ok, want)
		}
		defer s.pw.Close()
	}
	if n := counterValue(h.Metrics(), `otlplite_stream_decoders_reused_total{kind="zstd"}`); n != 2 {
		t.Fatalf("%d spare decoders taken, want 2", n)
	}
}
