package ingest

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/compression"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/otlp"
)

// oneSpan is an ExportTraceServiceRequest with one valid span, in OTLP/JSON.
const oneSpan = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"x"}]}]}]}`

// TestExportContract: what Request promises a transport. A ticket the
// transport holds has its whole charge returned when Export returns,
// refused or not; a compressed body is decompressed, transcoded and
// counted as it arrived and as decompressed; a signal that is none is
// refused as not retryable.
func TestExportContract(t *testing.T) {
	p := New(Config{Sink: discardSink{}})
	ctx := context.Background()
	gz, err := compression.Compress(nil, compression.Gzip, []byte(oneSpan))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		body  []byte
		codec compression.Codec
		items int
		err   string
	}{
		{"gzip JSON", gz, compression.Gzip, 1, ""},
		{"bad gzip", []byte("not gzip"), compression.Gzip, 0, "cannot decompress"},
		{"bad JSON", []byte(`{"resourceSpans":7}`), compression.Identity, 0, "cannot decode"},
	} {
		tk := p.Take(ctx)
		tk.Scratch = append(tk.Scratch[:0], tc.body...)
		if err := tk.Charge(ctx, len(tk.Scratch)); err != nil {
			t.Fatal(err)
		}
		res, err := p.Export(ctx, Request{Transport: HTTP, Signal: otlp.Traces, Body: tk.Scratch, Format: JSON, Codec: tc.codec, Ticket: tk})
		if in, _ := p.AdmissionState(); in != 0 {
			t.Errorf("%s: %d bytes still charged after Export returned", tc.name, in)
		}
		p.Done(tk)
		if tc.err == "" && (err != nil || res.Items != tc.items) {
			t.Errorf("%s: %+v %v", tc.name, res, err)
		}
		if tc.err != "" {
			st, ok := err.(*grpcwire.Status)
			if !ok || st.Code != grpcwire.InvalidArgument || !strings.Contains(st.Message, tc.err) {
				t.Errorf("%s: %v, want INVALID_ARGUMENT %q", tc.name, err, tc.err)
			}
		}
	}
	var buf bytes.Buffer
	p.Metrics().WritePrometheus(&buf)
	for _, want := range []string{
		// A body that cannot be decompressed is not counted (as before
		// the pipeline: it never became a request).
		`otlplite_received_wire_bytes_total{transport="http"} ` + strconv.Itoa(len(gz)+len(`{"resourceSpans":7}`)),
		`otlplite_received_bytes_total{transport="http"} ` + strconv.Itoa(len(oneSpan)+len(`{"resourceSpans":7}`)),
		`otlplite_requests_total{transport="http",signal="traces",code="OK"} 1`,
		`otlplite_requests_total{transport="http",signal="traces",code="INVALID_ARGUMENT"} 2`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if _, err := p.Export(ctx, Request{Transport: Kafka, Body: []byte(oneSpan), Format: JSON}); err == nil || otlp.Retryable(err.(*grpcwire.Status)) {
		t.Errorf("no signal: %v, want a refusal not worth retrying", err)
	}
}
