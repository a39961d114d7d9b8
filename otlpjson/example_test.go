package otlpjson_test

import (
	"fmt"

	"github.com/otlp-lite/otlp-lite/otlpjson"
)

func ExampleUnmarshal() {
	js := []byte(`{"resource_spans":[{"scopeSpans":[{"spans":[{"traceId":"5B8EFFF798038103D269B633813FC60C",` +
		`"spanId":"EEE19B7EC3C1B174","name":"GET /","kind":"SPAN_KIND_SERVER","startTimeUnixNano":1544712660000000000}]}]}]}`)
	pb, err := otlpjson.Unmarshal(nil, otlpjson.TracesData, js)
	if err != nil {
		panic(err)
	}
	canonical, err := otlpjson.Marshal(nil, otlpjson.TracesData, pb)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", canonical)

	_, err = otlpjson.Unmarshal(nil, otlpjson.TracesData, []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"xyz"}]}]}]}`))
	fmt.Println(err)
	// Output:
	// {"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"GET /","kind":2,"startTimeUnixNano":"1544712660000000000"}]}]}]}
	// cannot decode resourceSpans[0].scopeSpans[0].spans[0].spanId: invalid hex at offset 53
}

func ExampleMarshal_status() {
	// google.rpc.Status{code: 14, message: "busy", details: [RetryInfo{retry_delay: 1.5s}]}
	status := []byte("\x08\x0e\x12\x04busy\x1a\x36\x0a\x28type.googleapis.com/google.rpc.RetryInfo\x12\x0a\x0a\x08\x08\x01\x10\x80\xca\xb5\xee\x01")
	js, err := otlpjson.Marshal(nil, otlpjson.Status, status)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", js)
	// Output:
	// {"code":14,"message":"busy","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.500s"}]}
}
