package handler

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpjson"
	"github.com/otlp-lite/otlp-lite/storage"
)

// TestIngest: a body stored through Ingest is validated, filtered and
// stored as a unary request is, in protobuf or OTLP/JSON; invalid bodies
// and storage refusals that no retry can fix wrap ErrNotRetryable, the
// others do not.
func TestIngest(t *testing.T) {
	good := traceRequest(goodID, goodID)
	js, err := otlpjson.Marshal(nil, otlpjson.TracesData, good)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		sinkErr       error
		sig           otlp.Signal
		body          []byte
		format        IngestFormat
		wantItems     int
		wantRejected  int
		wantStored    int
		wantErr       string
		wantPermanent bool
	}{
		{name: "protobuf", sig: otlp.Traces, body: good, wantItems: 2, wantStored: 1},
		{name: "json", sig: otlp.Traces, body: js, format: IngestJSON, wantItems: 2, wantStored: 1},
		{name: "partly invalid", sig: otlp.Traces, body: traceRequest(goodID, []byte{1}), wantItems: 2, wantRejected: 1, wantStored: 1},
		{name: "empty", sig: otlp.Traces, body: nil},
		{name: "garbage", sig: otlp.Traces, body: []byte{0xff, 0xff}, wantErr: "cannot decode ExportTraceServiceRequest", wantPermanent: true},
		{name: "bad json", sig: otlp.Traces, body: []byte(`{"resourceSpans":`), format: IngestJSON, wantErr: "JSON", wantPermanent: true},
		{name: "not a signal", sig: 0, body: good, wantErr: "cannot ingest", wantPermanent: true},
		{name: "storage down", sinkErr: storage.ErrUnavailable, sig: otlp.Traces, body: good, wantItems: 2, wantErr: "retry later"},
		{name: "storage refuses", sinkErr: storage.ErrRejected, sig: otlp.Traces, body: good, wantItems: 2, wantErr: "cannot accept", wantPermanent: true},
		{name: "larger than the message limit", sig: otlp.Traces, body: bytes.Repeat(good, 1000), wantErr: "larger than", wantPermanent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &memSink{failWith: tt.sinkErr}
			set := metrics.NewSet()
			h := New(Config{Sink: sink, Logger: quietLogger(), Metrics: set, MaxRecvMsgSize: 64 << 10})
			res, err := h.Ingest(context.Background(), tt.sig, tt.body, tt.format)
			if res.Items != tt.wantItems || res.Rejected != tt.wantRejected {
				t.Errorf("result %+v, want %d items, %d rejected", res, tt.wantItems, tt.wantRejected)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want one with %q", err, tt.wantErr)
			}
			if got := errors.Is(err, ErrNotRetryable); got != tt.wantPermanent {
				t.Errorf("errors.Is(err, ErrNotRetryable) = %v, want %v (err %v)", got, tt.wantPermanent, err)
			}
			if got := len(sink.all()); got != tt.wantStored {
				t.Errorf("%d writes stored, want %d", got, tt.wantStored)
			}
			if ws := sink.all(); len(ws) == 1 && (ws[0].items != tt.wantItems-tt.wantRejected || ws[0].signal != otlp.Traces) {
				t.Errorf("stored %d %v items, want %d traces", ws[0].items, ws[0].signal, tt.wantItems-tt.wantRejected)
			}
			if tt.sig != 0 {
				var buf bytes.Buffer
				set.WritePrometheus(&buf)
				if !strings.Contains(buf.String(), `transport="kafka"`) {
					t.Errorf("the request is not counted under transport kafka:\n%s", buf.String())
				}
			}
			// Nothing stays charged to the admission budget.
			if in, waiting := h.p.AdmissionState(); in != 0 || waiting != 0 {
				t.Errorf("admission holds %d bytes, %d waiting", in, waiting)
			}
		})
	}
}

// TestIngestAdmission: a body larger than the whole admission budget can
// never be admitted (not retryable); one that waits for room in vain is
// refused as busy (retryable).
func TestIngestAdmission(t *testing.T) {
	good := traceRequest(goodID)
	h := New(Config{Sink: &memSink{}, Logger: quietLogger(), Admission: AdmissionConfig{RequestLimit: int64(len(good)) - 1}})
	_, err := h.Ingest(context.Background(), otlp.Traces, good, IngestProto)
	if !errors.Is(err, ErrNotRetryable) || !strings.Contains(err.Error(), "admission budget") {
		t.Fatalf("err = %v, want a permanent refusal naming the admission budget", err)
	}

	h = New(Config{Sink: &memSink{}, Logger: quietLogger(), Admission: AdmissionConfig{RequestLimit: int64(len(good)), WaitingLimit: -1}})
	hold := h.p.Take(context.Background())
	defer h.p.Done(hold)
	if err := hold.Charge(context.Background(), len(good)); err != nil {
		t.Fatal(err)
	}
	_, err = h.Ingest(context.Background(), otlp.Traces, good, IngestProto)
	hold.Release()
	if err == nil || errors.Is(err, ErrNotRetryable) || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("err = %v, want a retryable overload", err)
	}
	if _, err := h.Ingest(context.Background(), otlp.Traces, good, IngestProto); err != nil {
		t.Fatalf("after the budget is free: %v", err)
	}
}
