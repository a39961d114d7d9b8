package ingest

import (
	"context"
	"testing"

	"github.com/otlp-lite/otlp-lite/internal/pbtest"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// TestExportValidatedItemSink: with an item sink (Config.Items: an
// embedding engine), a request a transport vouches for is still walked by
// the validation pass, which hands the engine its items: the valid span
// reaches it, the invalid one (a 3-byte trace_id) is rejected, exactly as
// Export does with the same request.
func TestExportValidatedItemSink(t *testing.T) {
	body := pbtest.Request(nil, nil, []pbtest.PB{pbtest.Span(16, 8, nil), pbtest.Span(3, 8, nil)})
	ctx := context.Background()
	for _, vouched := range []bool{false, true} {
		eng := &spanEngine{}
		p := New(Config{Items: eng, Logger: quietLog()})
		tk := p.Take(ctx)
		tk.Msg = append(tk.Msg[:0], body...)
		if err := tk.Charge(ctx, len(tk.Msg)); err != nil {
			t.Fatal(err)
		}
		req := Request{Transport: GRPCStream, Signal: otlp.Traces, Body: tk.Msg, Ticket: tk}
		var res Result
		var err error
		if vouched {
			res, err = p.ExportValidated(ctx, req, Validated{Items: 2, MaxAnyValueDepth: 1})
		} else {
			res, err = p.Export(ctx, req)
		}
		p.Done(tk)
		if err != nil || res.Items != 2 || res.Rejected != 1 {
			t.Errorf("vouched %v: %+v, %v, want 2 items, 1 rejected", vouched, res, err)
		}
		if _, _, commits, _, stored := eng.counts(); commits != 1 || len(stored) != 1 {
			t.Errorf("vouched %v: the engine committed %d batches of %v, want 1 of the valid span", vouched, commits, stored)
		}
	}
}
