package ingest

import (
	"context"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// TestExportValidated: a request a transport vouches for is stored without
// the validation pass when the vouching covers what the pipeline
// validates, and validated as by Export otherwise (the pipeline checks
// UTF-8 and the transport does not promise it, its nesting bound is above
// the pipeline's, there is no ticket, or an item sink needs the pass). The
// request here has a span validation rejects (a 3-byte trace_id), which
// shows which way it went: a transport's word is taken for every item.
func TestExportValidated(t *testing.T) {
	body := pbtest.Request(nil, nil, []pbtest.PB{pbtest.Span(16, 8, nil), pbtest.Span(3, 8, nil)})
	vouch := Validated{Items: 2, MaxAnyValueDepth: 64}
	ctx := context.Background()
	run := func(p *Pipeline, v Validated, ticket bool) Result {
		t.Helper()
		var tk *Ticket
		if ticket {
			tk = p.Take(ctx)
			defer p.Done(tk)
			tk.Msg = append(tk.Msg[:0], body...)
			if err := tk.Charge(ctx, len(tk.Msg)); err != nil {
				t.Fatal(err)
			}
		}
		res, err := p.ExportValidated(ctx, Request{Transport: STEF, Signal: otlp.Traces, Body: body, Ticket: tk}, v)
		if err != nil {
			t.Fatal(err)
		}
		if in, _ := p.AdmissionState(); in != 0 {
			t.Errorf("%d bytes still charged after ExportValidated returned", in)
		}
		if tk != nil && tk.pre.on {
			t.Error("the ticket still carries the vouching after ExportValidated returned")
		}
		return res
	}
	sink := &countingSink{}
	p := New(Config{Sink: sink})
	if res := run(p, vouch, true); res.Items != 2 || res.Rejected != 0 {
		t.Errorf("vouched for: %+v, want 2 items stored unvalidated", res)
	}
	if sink.writes != 1 || sink.items != 2 {
		t.Errorf("sink got %d writes of %d items, want 1 of 2", sink.writes, sink.items)
	}
	for _, tc := range []struct {
		name   string
		cfg    Config
		v      Validated
		ticket bool
	}{
		{"no ticket", Config{Sink: &countingSink{}}, vouch, false},
		{"UTF-8 not vouched for", Config{Sink: &countingSink{}, Decode: otlpdecode.Options{ValidateUTF8: true}}, vouch, true},
		{"deeper nesting than the pipeline's", Config{Sink: &countingSink{}, Decode: otlpdecode.Options{MaxAnyValueDepth: 16}}, vouch, true},
		{"no nesting bound", Config{Sink: &countingSink{}}, Validated{Items: 2}, true},
		{"item sink", Config{Items: &spanEngine{}, Logger: quietLog()}, vouch, true},
	} {
		if res := run(New(tc.cfg), tc.v, tc.ticket); res.Items != 2 || res.Rejected != 1 {
			t.Errorf("%s: %+v, want 2 items validated, 1 rejected", tc.name, res)
		}
	}
	// UTF-8 vouched for and a bound within the pipeline's: not validated.
	v := vouch
	v.UTF8 = true
	if res := run(New(Config{Sink: &countingSink{}, Decode: otlpdecode.Options{ValidateUTF8: true, MaxAnyValueDepth: 64}}), v, true); res.Rejected != 0 {
		t.Errorf("UTF-8 vouched for: %+v, want nothing rejected", res)
	}
	// The ticket's next request (pooled) is validated again.
	tk := p.Take(ctx)
	defer p.Done(tk)
	if res, err := p.Export(ctx, Request{Transport: STEF, Signal: otlp.Traces, Body: body, Ticket: tk}); err != nil || res.Rejected != 1 {
		t.Errorf("Export after ExportValidated: %+v %v, want 1 rejected", res, err)
	}
}
