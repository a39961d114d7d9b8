package handler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// TestStreamColumnsVouched: otlpclient's stream with columns and without,
// against the handler, sends valid requests and requests with an invalid
// span among valid ones: each gets the same answer either way (the invalid
// span's partial success, its message), and the same bytes are stored.
// With columns, the valid ones are vouched for by the columns' decoder
// (stored without the validation pass), the others validated as any
// request (otlplite_stream_columns_vouched_total, _checked_total).
func TestStreamColumnsVouched(t *testing.T) {
	good := traceRequest(goodID, goodID)
	bad := traceRequest(goodID, goodID[:3], goodID)
	zero := traceRequest(goodID, make([]byte, 16))
	plain, cols := streamColumnsResults(t, Config{}, [][]byte{good, bad, good, zero, good}, 2, 3, 2)
	if plain.answers[1] == "stored" || plain.answers[3] == "stored" || plain.answers[0] != "stored" {
		t.Fatalf("answers %q: want the invalid spans' partial successes", plain.answers)
	}
	sameResults(t, plain, cols)
}

// TestStreamColumnsValidateUTF8: with -validate-utf8 (which the columns'
// decoder does not look at), a span whose name is not UTF-8 gets the same
// partial success with columns as without, though the decoder vouched
// for the rest.
func TestStreamColumnsValidateUTF8(t *testing.T) {
	bad := bytes.Replace(traceRequest(goodID, goodID), []byte("span"), []byte("sp\xffn"), 1)
	plain, cols := streamColumnsResults(t, Config{Decode: otlpdecode.Options{ValidateUTF8: true}}, [][]byte{traceRequest(goodID), bad, bad}, 1, 2, 0)
	if plain.answers[1] == "stored" || !strings.Contains(plain.answers[1], "UTF-8") {
		t.Fatalf("answers %q: want the span's partial success", plain.answers)
	}
	sameResults(t, plain, cols)
}

type streamResult struct {
	answers []string
	stored  [][]byte
}

func sameResults(t *testing.T, plain, cols streamResult) {
	t.Helper()
	if fmt.Sprint(plain.answers) != fmt.Sprint(cols.answers) {
		t.Fatalf("answers without columns %q, with %q", plain.answers, cols.answers)
	}
	if len(plain.stored) != len(cols.stored) {
		t.Fatalf("stored %d and %d requests", len(plain.stored), len(cols.stored))
	}
	for i := range plain.stored {
		if !bytes.Equal(plain.stored[i], cols.stored[i]) {
			t.Fatalf("request %d stored differently with columns", i)
		}
	}
}

// streamColumnsResults sends reqs, one at a time, through otlpclient's
// stream without columns, then with, to a handler of cfg (a memSink), and
// returns what each answered and stored; with columns, the decoder must
// have vouched for between minV and maxV of them (the first may go
// before the server's answer, plain) and not for checked.
func streamColumnsResults(t *testing.T, cfg Config, reqs [][]byte, minV, maxV, checked uint64) (plain, cols streamResult) {
	t.Helper()
	run := func(columns bool) streamResult {
		sink := &memSink{}
		c := cfg
		c.Sink, c.Logger = sink, quietLogger()
		h := New(c)
		e := otlpclient.NewStreamExporter(otlpclient.StreamConfig{
			Config:               otlpclient.Config{Endpoint: listenHandler(t, h), Signal: otlpclient.Traces},
			DisableStreamColumns: !columns, ReportPartial: true,
		})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// One at a time: the stored order is the sent order.
		var res streamResult
		for _, req := range reqs {
			done := make(chan error, 1)
			if err := e.Send(ctx, req, func(err error) { done <- err }); err != nil {
				t.Fatal(err)
			}
			err := <-done
			var pe *otlpclient.PartialError
			switch {
			case err == nil:
				res.answers = append(res.answers, "stored")
			case errors.As(err, &pe):
				res.answers = append(res.answers, fmt.Sprintf("partial: %d rejected: %s", pe.Rejected, pe.Message))
			default:
				t.Fatalf("columns %v: %v", columns, err)
			}
		}
		if err := e.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for _, w := range sink.all() {
			res.stored = append(res.stored, w.data)
		}
		vouched := counterValue(h.Metrics(), "otlplite_stream_columns_vouched_total")
		nchecked := counterValue(h.Metrics(), "otlplite_stream_columns_checked_total")
		if columns && counterValue(h.Metrics(), "otlplite_stream_columns_accepted_total") != 1 {
			t.Fatal("the stream did not take columns")
		}
		if !columns && (vouched != 0 || nchecked != 0) || columns && (vouched < minV || vouched > maxV || nchecked != checked) {
			t.Fatalf("columns %v: %d vouched for, %d checked", columns, vouched, nchecked)
		}
		if len(res.stored) != len(reqs) {
			t.Fatalf("columns %v: stored %d requests, want %d", columns, len(res.stored), len(reqs))
		}
		return res
	}
	return run(false), run(true)
}
