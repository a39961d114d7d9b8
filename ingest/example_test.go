package ingest_test

import (
	"context"
	"fmt"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage/discard"
)

// A way in that is not HTTP (a file being replayed, a message queue, a
// STEF or OTel-Arrow receiver) hands each request to the pipeline: it is
// charged to the admission budget, validated, its invalid items removed
// (partial success), stored, and counted, exactly as a gRPC or OTLP/HTTP
// request is. No http.Handler is needed.
func ExamplePipeline_Export() {
	var sink discard.Sink // the engine's storage.Sink
	p := ingest.New(ingest.Config{Sink: &sink})
	// An ExportTraceServiceRequest in OTLP/JSON with one span.
	body := []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{
		"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",
		"name":"checkout","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}`)
	res, err := p.Export(context.Background(), ingest.Request{
		Transport: ingest.Embedded, Signal: otlp.Traces, Body: body, Format: ingest.JSON,
	})
	if err != nil {
		// A *grpcwire.Status: otlp.Retryable says whether to retry.
		fmt.Println("refused:", err)
		return
	}
	fmt.Printf("%d spans, %d rejected\n", res.Items, res.Rejected)
	// Output: 1 spans, 0 rejected
}
