package handler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/otlp-lite/otlp-lite/otlpclient"
)

// listenHandler serves h on a free port and returns its address.
func listenHandler(t *testing.T, h *Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

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
	reqs := [][]byte{good, bad, good, zero, good}
	type result struct {
		answers []string
		stored  [][]byte
	}
	run := func(columns bool) result {
		sink := &memSink{}
		h := New(Config{Sink: sink, Logger: quietLogger()})
		e := otlpclient.NewStreamExporter(otlpclient.StreamConfig{
			Config:        otlpclient.Config{Endpoint: listenHandler(t, h), Signal: otlpclient.Traces},
			StreamColumns: columns, ReportPartial: true,
		})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// One at a time: the stored order is the sent order.
		var res result
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
		checked := counterValue(h.Metrics(), "otlplite_stream_columns_checked_total")
		if columns && counterValue(h.Metrics(), "otlplite_stream_columns_accepted_total") != 1 {
			t.Fatal("the stream did not take columns")
		}
		// The first request may go before the server's answer, plain.
		if want := uint64(0); !columns && (vouched != want || checked != want) || columns && (vouched < 2 || vouched > 3 || checked != 2) {
			t.Fatalf("columns %v: %d vouched for, %d checked", columns, vouched, checked)
		}
		return res
	}
	plain, cols := run(false), run(true)
	if fmt.Sprint(plain.answers) != fmt.Sprint(cols.answers) {
		t.Fatalf("answers without columns %q, with %q", plain.answers, cols.answers)
	}
	if plain.answers[1] == "stored" || plain.answers[3] == "stored" || plain.answers[0] != "stored" {
		t.Fatalf("answers %q: want the invalid spans' partial successes", plain.answers)
	}
	if len(plain.stored) != len(reqs) || len(cols.stored) != len(reqs) {
		t.Fatalf("stored %d and %d requests, want %d", len(plain.stored), len(cols.stored), len(reqs))
	}
	for i := range plain.stored {
		if !bytes.Equal(plain.stored[i], cols.stored[i]) {
			t.Fatalf("request %d stored differently with columns", i)
		}
	}
}
