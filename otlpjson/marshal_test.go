package otlpjson

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// spanProto builds ResourceSpans{ScopeSpans{Span{fields...}}} inside TracesData.
func spanProto(fields ...[]byte) []byte {
	return pbLen(1, pbLen(2, pbLen(2, fields...)))
}

func spanJSON(fields string) string {
	return `{"resourceSpans":[{"scopeSpans":[{"spans":[{` + fields + `}]}]}]}`
}

// marshalCase is a protobuf input and its canonical OTLP/JSON form.
type marshalCase struct {
	name string
	t    MessageType
	src  []byte
	want string
}

// marshalCases returns canonical encodings shared by the Marshal, Unmarshal
// and round-trip tests.
func marshalCases() []marshalCase {
	traceID := []byte{0x5b, 0x8e, 0xfF, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c}
	spanID := []byte{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74}
	kv := func(key string, value ...[]byte) []byte {
		return pbLen(9, pbStr(1, key), pbLen(2, value...))
	}
	return []marshalCase{
		{"empty", TracesData, nil, `{}`},
		{"empty resource spans", TracesData, pbLen(1), `{"resourceSpans":[{}]}`},
		{
			"span all fields", TracesData,
			spanProto(
				pbLen(1, traceID), pbLen(2, spanID), pbStr(3, "k=v"), pbLen(4, spanID),
				pbStr(5, "op"), pbVarint(6, 2), pbFixed64(7, 1544712660000000000), pbFixed64(8, 1544712661000000000),
				kv("a", pbStr(1, "x")), pbVarint(10, 1),
				pbLen(11, pbFixed64(1, 7), pbStr(2, "ev"), pbLen(3, pbStr(1, "b")), pbVarint(4, 2)),
				pbVarint(12, 3),
				pbLen(13, pbLen(1, traceID), pbLen(2, spanID), pbStr(3, "s"), pbLen(4, pbStr(1, "c")), pbVarint(5, 4), pbFixed32(6, 0x100)),
				pbVarint(14, 5), pbLen(15, pbStr(2, "boom"), pbVarint(3, 2)), pbFixed32(16, 0x301),
			),
			spanJSON(`"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","traceState":"k=v",` +
				`"parentSpanId":"eee19b7ec3c1b174","name":"op","kind":2,"startTimeUnixNano":"1544712660000000000",` +
				`"endTimeUnixNano":"1544712661000000000","attributes":[{"key":"a","value":{"stringValue":"x"}}],` +
				`"droppedAttributesCount":1,"events":[{"timeUnixNano":"7","name":"ev","attributes":[{"key":"b"}],"droppedAttributesCount":2}],` +
				`"droppedEventsCount":3,"links":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",` +
				`"traceState":"s","attributes":[{"key":"c"}],"droppedAttributesCount":4,"flags":256}],"droppedLinksCount":5,` +
				`"status":{"message":"boom","code":2},"flags":769`),
		},
		{
			"proto3 defaults omitted", TracesData,
			spanProto(pbLen(1), pbStr(5, ""), pbVarint(6, 0), pbFixed64(7, 0), pbVarint(10, 0), pbFixed32(16, 0), pbLen(15)),
			spanJSON(`"status":{}`),
		},
		{
			"fields sorted by number", TracesData,
			spanProto(pbFixed32(16, 1), pbStr(5, "b"), pbVarint(6, 1), pbLen(9, pbStr(1, "x")), pbStr(5, "c"), pbLen(9, pbStr(1, "y"))),
			spanJSON(`"name":"c","kind":1,"attributes":[{"key":"x"},{"key":"y"}],"flags":1`),
		},
		{
			"message occurrences merge", TracesData,
			spanProto(pbLen(15, pbStr(2, "m")), pbStr(5, "n"), pbLen(15, pbVarint(3, 1))),
			spanJSON(`"name":"n","status":{"message":"m","code":1}`),
		},
		{
			"repeated message field occurrences merge at every level", TracesData,
			pbLen(1,
				pbLen(1, pbLen(1, pbStr(1, "a"), pbLen(2, pbLen(5, pbLen(1, pbStr(1, "x")))))),
				pbStr(3, "s"),
				pbLen(1, pbLen(1, pbStr(1, "b")), pbVarint(2, 3)),
				pbLen(1, pbLen(3, pbStr(2, "t"))),
			),
			`{"resourceSpans":[{"resource":{"attributes":[{"key":"a","value":{"arrayValue":{"values":[{"stringValue":"x"}]}}},{"key":"b"}],` +
				`"droppedAttributesCount":3,"entityRefs":[{"type":"t"}]},"schemaUrl":"s"}]}`,
		},
		{
			"unknown fields and wire types skipped", TracesData,
			spanProto(pbVarint(100, 1), pbVarint(5, 3), pbFixed64(6, 1), pbStr(5, "ok"), pbFixed32(99, 1), pbFixed64(98, 1), pbStr(97, "x")),
			spanJSON(`"name":"ok"`),
		},
		{
			"string escaping and invalid utf8", TracesData,
			spanProto(pbStr(5, "a\"b\\c\n\t\x01\x7f é€😀\xff/<>&")),
			spanJSON(`"name":"a\"b\\c\n\t\u0001` + "\x7f é€😀\ufffd/<>&" + `"`),
		},
		{
			"anyvalue oneof members", LogsData,
			pbLen(1, pbLen(2, pbLen(2,
				pbLen(6, pbStr(1, "s"), pbLen(2, pbStr(1, ""))),
				pbLen(6, pbStr(1, "b"), pbLen(2, pbVarint(2, 0))),
				pbLen(6, pbStr(1, "i"), pbLen(2, pbVarint(3, math.MaxUint64))),
				pbLen(6, pbStr(1, "d"), pbLen(2, pbDouble(4, 0))),
				pbLen(6, pbStr(1, "a"), pbLen(2, pbLen(5, pbLen(1, pbVarint(2, 1)), pbLen(1)))),
				pbLen(6, pbStr(1, "k"), pbLen(2, pbLen(6, pbLen(1, pbStr(1, "x"))))),
				pbLen(6, pbStr(1, "y"), pbLen(2, pbLen(7, []byte{0xfb, 0xff}))),
				pbLen(6, pbStr(1, "z"), pbLen(2, pbVarint(8, 7))),
				pbLen(6, pbVarint(3, 4), pbStr(1, "last"), pbLen(2, pbStr(1, "x"), pbVarint(3, 9))),
				pbLen(6, pbStr(1, "sw"), pbLen(2, pbLen(5, pbLen(1, pbStr(1, "p"))), pbLen(6), pbLen(5, pbLen(1, pbStr(1, "q"))))),
			))),
			`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[` +
				`{"key":"s","value":{"stringValue":""}},{"key":"b","value":{"boolValue":false}},` +
				`{"key":"i","value":{"intValue":"-1"}},{"key":"d","value":{"doubleValue":0}},` +
				`{"key":"a","value":{"arrayValue":{"values":[{"boolValue":true},{}]}}},` +
				`{"key":"k","value":{"kvlistValue":{"values":[{"key":"x"}]}}},` +
				`{"key":"y","value":{"bytesValue":"+/8="}},{"key":"z","value":{"stringValueStrindex":7}},` +
				`{"key":"last","value":{"intValue":"9"},"keyStrindex":4},` +
				`{"key":"sw","value":{"arrayValue":{"values":[{"stringValue":"q"}]}}}]}]}]}]}`,
		},
		{
			"log record", LogsData,
			pbLen(1,
				pbLen(1,
					pbLen(1, pbStr(1, "service.name"), pbLen(2, pbStr(1, "svc"))),
					pbVarint(2, 1),
					pbLen(3, pbStr(1, "https://s"), pbStr(2, "service"), pbStr(3, "service.name"), pbStr(3, ""), pbStr(4, "d"))),
				pbLen(2,
					pbLen(1, pbStr(1, "lib"), pbStr(2, "1.0"), pbLen(3, pbStr(1, "x")), pbVarint(4, 2)),
					pbLen(2, pbFixed64(1, 1), pbVarint(2, 9), pbStr(3, "INFO"), pbLen(5, pbStr(1, "hello")), pbLen(6, pbStr(1, "a")),
						pbVarint(7, 3), pbFixed32(8, 1), pbLen(9, traceID), pbLen(10, spanID), pbFixed64(11, 2), pbStr(12, "ev")),
					pbStr(3, "https://scope")),
				pbStr(3, "https://res")),
			`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}],"droppedAttributesCount":1,` +
				`"entityRefs":[{"schemaUrl":"https://s","type":"service","idKeys":["service.name",""],"descriptionKeys":["d"]}]},` +
				`"scopeLogs":[{"scope":{"name":"lib","version":"1.0","attributes":[{"key":"x"}],"droppedAttributesCount":2},` +
				`"logRecords":[{"timeUnixNano":"1","severityNumber":9,"severityText":"INFO","body":{"stringValue":"hello"},` +
				`"attributes":[{"key":"a"}],"droppedAttributesCount":3,"flags":1,"traceId":"5b8efff798038103d269b633813fc60c",` +
				`"spanId":"eee19b7ec3c1b174","observedTimeUnixNano":"2","eventName":"ev"}],"schemaUrl":"https://scope"}],"schemaUrl":"https://res"}]}`,
		},
		{
			"metrics", MetricsData,
			pbLen(1, pbLen(2, pbLen(2,
				pbStr(1, "g"), pbStr(2, "desc"), pbStr(3, "ms"),
				pbLen(5, pbLen(1, pbFixed64(2, 1), pbFixed64(3, 2), pbDouble(4, 1.5),
					pbLen(5, pbFixed64(2, 3), pbDouble(3, 0.25), pbLen(4, spanID), pbLen(5, traceID), pbLen(7, pbStr(1, "f"))),
					pbLen(7, pbStr(1, "a")), pbVarint(8, 1))),
				pbLen(12, pbStr(1, "m")),
			), pbLen(2,
				pbLen(7, pbLen(1, pbFixed64(6, math.MaxUint64), pbLen(5, pbFixed64(6, 1<<63))), pbVarint(2, 2), pbVarint(3, 1)),
			), pbLen(2,
				pbLen(9, pbLen(1, pbFixed64(4, 3), pbDouble(5, 0), pbLen(6, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 1), 2)),
					pbFixed64(6, 3), pbLen(7, binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.5))), pbDouble(7, math.Inf(1)),
					pbLen(9, pbStr(1, "h")), pbVarint(10, 1), pbDouble(11, math.Inf(-1)), pbDouble(12, math.NaN())),
					pbVarint(2, 1)),
			), pbLen(2,
				pbLen(10, pbLen(1, pbLen(1, pbStr(1, "e")), pbFixed64(4, 5), pbVarint(6, 3), pbFixed64(7, 1),
					pbLen(8, pbVarint(1, 3), pbLen(2, []byte{1, 0x80, 0x01})), pbLen(9, pbVarint(1, 0), pbVarint(2, 7)),
					pbDouble(12, math.Copysign(0, -1)), pbDouble(13, 1e-7), pbDouble(14, 1e21)),
				),
			), pbLen(2,
				pbLen(11, pbLen(1, pbFixed64(4, 2), pbDouble(5, 3.25), pbLen(6, pbDouble(1, 0.5), pbDouble(2, 1)), pbLen(6), pbLen(7, pbStr(1, "s")), pbVarint(8, 1))),
			))),
			`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[` +
				`{"name":"g","description":"desc","unit":"ms","gauge":{"dataPoints":[{"startTimeUnixNano":"1","timeUnixNano":"2","asDouble":1.5,` +
				`"exemplars":[{"timeUnixNano":"3","asDouble":0.25,"spanId":"eee19b7ec3c1b174","traceId":"5b8efff798038103d269b633813fc60c",` +
				`"filteredAttributes":[{"key":"f"}]}],"attributes":[{"key":"a"}],"flags":1}]},"metadata":[{"key":"m"}]},` +
				`{"sum":{"dataPoints":[{"exemplars":[{"asInt":"-9223372036854775808"}],"asInt":"-1"}],"aggregationTemporality":2,"isMonotonic":true}},` +
				`{"histogram":{"dataPoints":[{"count":"3","sum":0,"bucketCounts":["1","2","3"],"explicitBounds":[0.5,"Infinity"],` +
				`"attributes":[{"key":"h"}],"flags":1,"min":"-Infinity","max":"NaN"}],"aggregationTemporality":1}},` +
				`{"exponentialHistogram":{"dataPoints":[{"attributes":[{"key":"e"}],"count":"5","scale":-2,"zeroCount":"1",` +
				`"positive":{"offset":-2,"bucketCounts":["1","128"]},"negative":{"bucketCounts":["7"]},"min":-0,"max":1e-7,"zeroThreshold":1e+21}]}},` +
				`{"summary":{"dataPoints":[{"count":"2","sum":3.25,"quantileValues":[{"quantile":0.5,"value":1},{}],"attributes":[{"key":"s"}],"flags":1}]}}` +
				`]}]}]}`,
		},
		{
			"metric data oneof last wins", MetricsData,
			pbLen(1, pbLen(2, pbLen(2, pbLen(5, pbLen(1)), pbStr(1, "x"), pbLen(11)))),
			`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","summary":{}}]}]}]}`,
		},
		{
			"trace response", ExportTraceServiceResponse,
			pbLen(1, pbVarint(1, 3), pbStr(2, "dropped")),
			`{"partialSuccess":{"rejectedSpans":"3","errorMessage":"dropped"}}`,
		},
		{"trace response empty partial success", ExportTraceServiceResponse, pbLen(1), `{"partialSuccess":{}}`},
		{
			"metrics response", ExportMetricsServiceResponse,
			pbLen(1, pbVarint(1, math.MaxUint64), pbStr(2, "e")),
			`{"partialSuccess":{"rejectedDataPoints":"-1","errorMessage":"e"}}`,
		},
		{
			"logs response", ExportLogsServiceResponse,
			pbLen(1, pbVarint(1, 1)),
			`{"partialSuccess":{"rejectedLogRecords":"1"}}`,
		},
		{
			"status with retry info", Status,
			pbCat(pbVarint(1, 14), pbStr(2, "try later"),
				pbLen(3, pbStr(1, "type.googleapis.com/google.rpc.DebugInfo"), pbLen(2, pbStr(2, "x"))),
				pbLen(3, pbStr(1, "type.googleapis.com/google.rpc.RetryInfo"), pbLen(2, pbLen(1, pbVarint(1, 1), pbVarint(2, 500000000))))),
			`{"code":14,"message":"try later","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.500s"}]}`,
		},
		{
			"status durations", Status,
			pbCat(
				pbLen(3, pbStr(1, "type.googleapis.com/google.rpc.RetryInfo")),
				pbLen(3, pbStr(1, "type.googleapis.com/google.rpc.RetryInfo"), pbLen(2, pbLen(1))),
				pbLen(3, pbStr(1, "type.googleapis.com/google.rpc.RetryInfo"), pbLen(2, pbLen(1, pbVarint(2, 1000)))),
				pbLen(3, pbStr(1, "type.googleapis.com/google.rpc.RetryInfo"), pbLen(2, pbLen(1, pbVarint(1, math.MaxUint64), pbVarint(2, uint64(math.MaxUint64-100000000+1))))),
			),
			`{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0s"},` +
				`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.000001s"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"-1.100s"}]}`,
		},
		{
			"status without supported details", Status,
			pbCat(pbVarint(1, 3), pbLen(3, pbStr(1, "type.googleapis.com/google.rpc.DebugInfo"))),
			`{"code":3}`,
		},
		{
			"status with bad request", Status,
			pbCat(pbVarint(1, 3), pbStr(2, "cannot decode"),
				pbLen(3, pbStr(1, "type.googleapis.com/google.rpc.BadRequest"), pbLen(2,
					pbLen(1, pbStr(1, "resource_spans[1]"), pbStr(2, "cannot read \"x\"")),
					pbLen(1, pbStr(2, "no field")),
					pbLen(1)))),
			`{"code":3,"message":"cannot decode","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[` +
				`{"field":"resource_spans[1]","description":"cannot read \"x\""},{"description":"no field"},{}]}]}`,
		},
		{
			"status with empty bad request", Status,
			pbLen(3, pbStr(1, "type.googleapis.com/google.rpc.BadRequest"), pbLen(2)),
			`{"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest"}]}`,
		},
	}
}

func TestMarshal(t *testing.T) {
	for _, tc := range marshalCases() {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("prefix")
			got, err := Marshal(prefix, tc.t, tc.src)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got[:len(prefix)]) != "prefix" {
				t.Fatalf("Marshal overwrote dst: %q", got)
			}
			if g := string(got[len(prefix):]); g != tc.want {
				t.Fatalf("Marshal mismatch\ngot:  %s\nwant: %s", g, tc.want)
			}
		})
	}
}

func TestMarshalErrors(t *testing.T) {
	deep := pbLen(1, pbLen(2, pbLen(2, pbLen(5, pbStr(1, "x")))))
	for range MaxDepth {
		deep = pbLen(5, pbLen(1, deep))
	}
	tests := []struct {
		name     string
		t        MessageType
		src      []byte
		wantPath string
		wantErr  string
	}{
		{"truncated length", TracesData, []byte{0x0a, 0x05, 0x00}, "TracesData", "cannot read TracesData field"},
		{"field number zero", TracesData, []byte{0x00, 0x00}, "TracesData", "invalid field number"},
		{"unterminated group", TracesData, spanProto(pbStr(5, "x"), []byte{0x0b}), "resourceSpans[0].scopeSpans[0].spans[0]", "end of group"},
		{"bad wire type", TracesData, spanProto(pbStr(5, "x"), []byte{0x0e}), "resourceSpans[0].scopeSpans[0].spans[0]", "unknown wireType"},
		{
			"truncated packed", MetricsData,
			pbLen(1, pbLen(2, pbLen(2, pbLen(9, pbLen(1, pbLen(6, []byte{1, 2, 3})))))),
			"resourceMetrics[0].scopeMetrics[0].metrics[0].histogram.dataPoints[0].bucketCounts[0]", "malformed packed fixed64",
		},
		{
			"bad packed varint", MetricsData,
			pbLen(1, pbLen(2, pbLen(2, pbLen(10, pbLen(1, pbLen(8, pbLen(2, []byte{1, 0x80}))))))),
			"resourceMetrics[0].scopeMetrics[0].metrics[0].exponentialHistogram.dataPoints[0].positive.bucketCounts[1]", "malformed packed varint",
		},
		{"too deep", LogsData, pbLen(1, pbLen(2, pbLen(2, pbLen(5, deep)))), "", "message nesting exceeds 512 levels"},
		{
			"bad duration", Status,
			pbLen(3, pbStr(1, "type.googleapis.com/google.rpc.RetryInfo"), pbLen(2, pbLen(1, pbVarint(1, 1), pbVarint(2, uint64(math.MaxUint64))))),
			"details[0]", "invalid google.protobuf.Duration 1s -1ns",
		},
		{"unknown message type", MessageType(0), nil, "", "otlpjson: unknown MessageType(0)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := Marshal(dst, tc.t, tc.src)
			if err == nil {
				t.Fatalf("Marshal succeeded: %s", got)
			}
			if string(got) != "keep" {
				t.Fatalf("Marshal returned %q on error; want dst unchanged", got)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %q does not contain %q", err, tc.wantErr)
			}
			var e *Error
			if tc.wantPath != "" {
				if !errors.As(err, &e) {
					t.Fatalf("error %T is not *Error", err)
				}
				if e.Path != tc.wantPath {
					t.Fatalf("error path %q; want %q (error %q)", e.Path, tc.wantPath, err)
				}
				if e.Offset < 0 || e.Offset > len(tc.src) {
					t.Fatalf("error offset %d out of input range %d", e.Offset, len(tc.src))
				}
			}
		})
	}
}

// TestDepthCoversOtlpdecode checks that as many levels of AnyValue as
// otlpdecode accepts by default transcode in the deepest OTLP position (an
// exemplar's filtered attribute), both ways, so everything the receiver
// stores can be exported.
func TestDepthCoversOtlpdecode(t *testing.T) {
	levels := otlpdecode.DefaultMaxAnyValueDepth
	value := pbStr(1, "leaf")
	for range levels - 1 {
		value = pbLen(6, pbLen(1, pbStr(1, "k"), pbLen(2, value)))
	}
	src := pbLen(1, pbLen(2, pbLen(2, pbLen(9, pbLen(1, pbLen(8, pbLen(7, pbStr(1, "k"), pbLen(2, value))))))))
	js, err := Marshal(nil, MetricsData, src)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if got := strings.Count(string(js), "kvlistValue"); got != levels-1 {
		t.Fatalf("Marshal wrote %d kvlist levels; want %d", got, levels-1)
	}
	pb, err := Unmarshal(nil, MetricsData, js)
	if err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if !bytes.Equal(pb, src) {
		t.Fatalf("Unmarshal did not reproduce the protobuf input")
	}
}

// TestMarshalSkipsGroups: a group (deprecated wire types 3/4, valid
// protobuf that the receiver accepts and stores as an unknown field) is left
// out of the JSON, as protojson leaves out unknown fields, instead of failing
// the export.
func TestMarshalSkipsGroups(t *testing.T) {
	span := append(pbStr(5, "with a group"), 0x93, 0x03, 0x08, 0x01, 0x94, 0x03) // field 50: start group, a varint, end group
	span = append(span, pbStr(3, "after")...)
	src := pbLen(1, pbLen(2, pbLen(2, span)))
	js, err := Marshal(nil, TracesData, src)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if want := `"name":"with a group"`; !strings.Contains(string(js), want) || !strings.Contains(string(js), `"traceState":"after"`) {
		t.Fatalf("Marshal = %s; want the fields around the group", js)
	}
}
