package otlpjson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestUnmarshalRoundTrip checks that every canonical Marshal output decodes
// to protobuf that Marshal turns back into the same bytes.
func TestUnmarshalRoundTrip(t *testing.T) {
	for _, tc := range marshalCases() {
		t.Run(tc.name, func(t *testing.T) {
			pb, err := Unmarshal([]byte("prefix"), tc.t, []byte(tc.want))
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !bytes.HasPrefix(pb, []byte("prefix")) {
				t.Fatalf("Unmarshal overwrote dst")
			}
			got, err := Marshal(nil, tc.t, pb[len("prefix"):])
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tc.want {
				t.Fatalf("round trip mismatch\ngot:  %s\nwant: %s", got, tc.want)
			}
		})
	}
}

// TestUnmarshal checks the accepted input variants by their canonical form.
func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name string
		t    MessageType
		in   string
		want string
	}{
		{"empty object", TracesData, ` { } `, `{}`},
		{
			"snake_case keys, enum names, uppercase hex, whitespace", TracesData,
			"{\"resource_spans\" :\n [ {\"scope_spans\":[{\"spans\":[{\"trace_id\":\"5B8EFFF798038103D269B633813FC60C\",\t" +
				`"span_id":"EEE19B7EC3C1B174","parent_span_id":"","kind":"SPAN_KIND_SERVER","start_time_unix_nano":1544712660000000000,` +
				`"status":{"code":"STATUS_CODE_ERROR"},"dropped_attributes_count":"3"}]}]}]}`,
			spanJSON(`"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","kind":2,` +
				`"startTimeUnixNano":"1544712660000000000","droppedAttributesCount":3,"status":{"code":2}`),
		},
		{
			"null means absent, unknown keys ignored", TracesData,
			`{"resourceSpans":[{"resource":null,"unknown":{"a":[1,2.5e3,"x",true,false,null,{"b":{}}]},"scopeSpans":[{"spans":[` +
				`{"name":null,"traceId":null,"attributes":null,"kind":null,"x":-0.5e-3}]}],"schemaUrl":"u"}]}`,
			`{"resourceSpans":[{"scopeSpans":[{"spans":[{}]}],"schemaUrl":"u"}]}`,
		},
		{
			"default values not written", TracesData,
			spanJSON(`"name":"","kind":0,"startTimeUnixNano":"0","droppedAttributesCount":0,"flags":0,"traceId":""`),
			spanJSON(``),
		},
		{
			"integer forms", LogsData,
			`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1e3","observedTimeUnixNano":2.0e1,` +
				`"severityNumber":"SEVERITY_NUMBER_WARN","droppedAttributesCount":1.5e1,"flags":"4294967295",` +
				`"body":{"intValue":-9223372036854775808}}]}]}]}`,
			`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1000","severityNumber":13,` +
				`"body":{"intValue":"-9223372036854775808"},"droppedAttributesCount":15,"flags":4294967295,"observedTimeUnixNano":"20"}]}]}]}`,
		},
		{
			"double forms", MetricsData,
			`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"sum":"1.5","min":"-Infinity","max":-0,` +
				`"explicitBounds":["NaN","Infinity",-1e-400,2.5e-7,"0"],"bucketCounts":[0,"1",2]}],"aggregationTemporality":"AGGREGATION_TEMPORALITY_DELTA"}}]}]}]}`,
			``,
		},
		{
			"bytes base64 variants", LogsData,
			`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"arrayValue":{"values":[` +
				`{"bytesValue":"+/8="},{"bytesValue":"-_8"},{"bytesValue":"+/8"},{"bytesValue":""},{"bytesValue":"AAEC\/w=="}]}}}]}]}]}`,
			`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"arrayValue":{"values":[` +
				`{"bytesValue":"+/8="},{"bytesValue":"+/8="},{"bytesValue":"+/8="},{"bytesValue":""},{"bytesValue":"AAEC/w=="}]}}}]}]}]}`,
		},
		{
			"string escapes", TracesData,
			spanJSON(`"name":"\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC\ud83d\ude00\ud800x\udc00\u0000"`),
			spanJSON(`"name":"\"\\/\b\f\n\r\tAé€😀` + "\ufffdx\ufffd" + `\u0000"`),
		},
		{
			"status retry info", Status,
			`{"details":[{"retryDelay":"2.5s","@type":"type.googleapis.com/google.rpc.RetryInfo"},` +
				`{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"x"}]},` +
				`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retry_delay":"-0.000000001s"},` +
				`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":null}],"code":14}`,
			`{"code":14,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2.500s"},` +
				`{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"x"}]},` +
				`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"-0.000000001s"},` +
				`{"@type":"type.googleapis.com/google.rpc.RetryInfo"}]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pb, err := Unmarshal(nil, tc.t, []byte(tc.in))
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			got, err := Marshal(nil, tc.t, pb)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			want := tc.want
			if want == "" {
				want = `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"sum":1.5,` +
					`"bucketCounts":["0","1","2"],"explicitBounds":["NaN","Infinity",-0,2.5e-7,0],"min":"-Infinity","max":-0}],` +
					`"aggregationTemporality":1}}]}]}]}`
			}
			if string(got) != want {
				t.Fatalf("mismatch\ngot:  %s\nwant: %s", got, want)
			}
		})
	}
}

// TestUnmarshalWire checks exact protobuf output where encoding choices matter.
func TestUnmarshalWire(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		name string
		t    MessageType
		in   string
		want []byte
	}{
		{"empty", TracesData, `{}`, []byte{}},
		{"empty message kept", TracesData, `{"resourceSpans":[{"resource":{}}]}`, pbLen(1, pbLen(1))},
		{"empty array omitted", TracesData, `{"resourceSpans":[]}`, []byte{}},
		{
			"packed repeated scalars", MetricsData,
			`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"exponentialHistogram":{"dataPoints":[{"positive":{"bucketCounts":["1",300]},"negative":{"bucketCounts":[]}}]}}]}]}]}`,
			pbLen(1, pbLen(2, pbLen(2, pbLen(10, pbLen(1, pbLen(8, pbLen(2, []byte{1, 0xac, 0x02})), pbLen(9)))))),
		},
		{
			"sint32 zigzag and negative int32", MetricsData,
			`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"exponentialHistogram":{"dataPoints":[{"scale":-1,"positive":{"offset":2}}]}}]}]}]}`,
			pbLen(1, pbLen(2, pbLen(2, pbLen(10, pbLen(1, pbVarint(6, 1), pbLen(8, pbVarint(1, 4))))))),
		},
		{
			"long payload length moved", TracesData,
			`{"resourceSpans":[{"schemaUrl":"` + long + `"}]}`,
			pbLen(1, pbStr(3, long)),
		},
		{
			"oneof default written", LogsData,
			`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"intValue":"0"}}]}]}]}`,
			pbLen(1, pbLen(2, pbLen(2, pbLen(5, pbVarint(3, 0))))),
		},
		{
			"optional double written, negative zero kept", MetricsData,
			`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"sum":0,"min":-0.0,"count":0}]}}]}]}]}`,
			pbLen(1, pbLen(2, pbLen(2, pbLen(9, pbLen(1, pbDouble(5, 0), pbDouble(11, math.Copysign(0, -1))))))),
		},
		{
			"status", Status,
			`{"code":-1,"message":"m"}`,
			pbCat(pbVarint(1, math.MaxUint64), pbStr(2, "m")),
		},
		{
			"response int64", ExportTraceServiceResponse,
			`{"partial_success":{"rejected_spans":"-2"}}`,
			pbLen(1, pbVarint(1, math.MaxUint64-1)),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Unmarshal(nil, tc.t, []byte(tc.in))
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("mismatch\ngot:  %x\nwant: %x", got, tc.want)
			}
		})
	}
}

func TestUnmarshalErrors(t *testing.T) {
	deep := `{"stringValue":"x"}`
	for range MaxDepth {
		deep = `{"arrayValue":{"values":[` + deep + `]}}`
	}
	deepUnknown := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	tests := []struct {
		name    string
		t       MessageType
		in      string
		wantErr string
	}{
		{"empty input", TracesData, ``, `cannot decode TracesData: empty input at offset 0`},
		{"not an object", TracesData, ` []`, `cannot decode TracesData: expected object at offset 1`},
		{"trailing data", TracesData, `{} {}`, `cannot decode TracesData: unexpected data after top-level object at offset 3`},
		{"truncated", TracesData, `{"resourceSpans":[{`, `cannot decode resourceSpans[0]: expected string at offset 19`},
		{"missing colon", TracesData, `{"resourceSpans" []}`, `cannot decode TracesData: expected ':' after object key at offset 17`},
		{"missing comma", TracesData, `{"resourceSpans":[{} {}]}`, `cannot decode resourceSpans[0]: expected ',' or ']' at offset 21`},
		{
			"bad trace id", TracesData,
			`{"resourceSpans":[{"scopeSpans":[{},{"spans":[{},{},{},{"traceId":"zz"}]}]}]}`,
			`cannot decode resourceSpans[0].scopeSpans[1].spans[3].traceId: invalid hex at offset 66`,
		},
		{"odd hex", TracesData, spanJSON(`"spanId":"abc"`), `cannot decode resourceSpans[0].scopeSpans[0].spans[0].spanId: invalid hex at offset 53`},
		{"bad base64", LogsData, `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"bytesValue":"a"}}]}]}]}`, `logRecords[0].body.bytesValue: invalid base64`},
		{"bad padding", LogsData, `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"bytesValue":"ab="}}]}]}]}`, `logRecords[0].body.bytesValue: invalid base64`},
		{"duplicate key", TracesData, `{"resourceSpans":[],"resource_spans":[]}`, `cannot decode resourceSpans: duplicate field at offset 20`},
		{"two oneof members", LogsData, `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"a","intValue":1}}]}]}]}`, `logRecords[0].body.intValue: oneof field stringValue is already set`},
		{"string for number", TracesData, spanJSON(`"droppedAttributesCount":"x"`), `droppedAttributesCount: invalid integer at offset`},
		{"fraction for integer", TracesData, spanJSON(`"droppedAttributesCount":1.5`), `droppedAttributesCount: invalid integer`},
		{"negative unsigned", TracesData, spanJSON(`"droppedAttributesCount":-1`), `droppedAttributesCount: integer out of range`},
		{"uint32 overflow", TracesData, spanJSON(`"flags":4294967296`), `flags: integer out of range`},
		{"int64 overflow", LogsData, `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"intValue":"9223372036854775808"}}]}]}]}`, `body.intValue: integer out of range`},
		{"uint64 overflow", TracesData, spanJSON(`"startTimeUnixNano":"18446744073709551616"`), `startTimeUnixNano: invalid integer`},
		{"unknown enum", TracesData, spanJSON(`"kind":"SERVER"`), `kind: unknown enum value "SERVER"`},
		{"quoted enum number", TracesData, spanJSON(`"kind":"2"`), `kind: unknown enum value "2"`},
		{"quoted leading zero", TracesData, spanJSON(`"startTimeUnixNano":"01"`), `startTimeUnixNano: invalid integer`},
		{"quoted int32 overflow", TracesData, spanJSON(`"droppedAttributesCount":"4294967296"`), `droppedAttributesCount: integer out of range`},
		{"quoted digits unterminated", TracesData, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"12`, `startTimeUnixNano: unterminated string`},
		{"bool as string", TracesData, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"value":{"boolValue":"true"}}]}]}]}]}`, `value.boolValue: expected true or false`},
		{"bad number", TracesData, spanJSON(`"kind":01`), `expected ',' or '}'`},
		{"bad double string", MetricsData, `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"asDouble":"inf"}]}}]}]}]}`, `asDouble: invalid number`},
		{"double overflow", MetricsData, `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"asDouble":1e400}]}}]}]}]}`, `asDouble: number out of range`},
		{"null in array", TracesData, `{"resourceSpans":[null]}`, `cannot decode resourceSpans[0]: null is not allowed in arrays at offset 18`},
		{"object for array", TracesData, `{"resourceSpans":{}}`, `cannot decode resourceSpans: expected array at offset 17`},
		{"string for object", TracesData, `{"resourceSpans":[{"resource":"x"}]}`, `cannot decode resourceSpans[0].resource: expected object at offset 30`},
		{"invalid utf8", TracesData, spanJSON("\"name\":\"\xff\""), `name: invalid UTF-8 in string`},
		{"control character", TracesData, spanJSON("\"name\":\"a\nb\""), `name: control character in string`},
		{"bad escape", TracesData, spanJSON(`"name":"\x"`), `name: invalid escape in string`},
		{"bad unicode escape", TracesData, spanJSON(`"name":"\u12"`), `name: invalid \u escape in string`},
		{"unterminated string", TracesData, `{"resourceSpans`, `cannot decode TracesData: unterminated string at offset 1`},
		{"bad literal", TracesData, `{"x":nul}`, `cannot decode TracesData: invalid value at offset 5`},
		{"too deep", LogsData, `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":` + deep + `}]}]}]}`, `message nesting exceeds 512 levels`},
		{"too deep unknown", TracesData, `{"x":` + deepUnknown + `}`, `nesting exceeds 512 levels`},
		{"missing @type", Status, `{"details":[{"retryDelay":"1s"}]}`, `cannot decode details[0]: missing @type at offset 12`},
		{"bad duration", Status, `{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5"}]}`, `details[0]: invalid duration`},
		{"unknown message type", MessageType(99), `{}`, `otlpjson: unknown MessageType(99)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Unmarshal([]byte("keep"), tc.t, []byte(tc.in))
			if err == nil {
				t.Fatalf("Unmarshal succeeded: %x", got)
			}
			if string(got) != "keep" {
				t.Fatalf("Unmarshal returned %q on error; want dst unchanged", got)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %q does not contain %q", err, tc.wantErr)
			}
			var e *Error
			if tc.t.msg() != nil && !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error", err)
			}
		})
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in  string
		neg bool
		mag uint64
		ok  bool
	}{
		{"0", false, 0, true},
		{"-0", true, 0, true},
		{"123", false, 123, true},
		{"-123", true, 123, true},
		{"1e3", false, 1000, true},
		{"1E+3", false, 1000, true},
		{"1.5e1", false, 15, true},
		{"1.50", false, 1, false},
		{"1.0", false, 1, true},
		{"100e-2", false, 1, true},
		{"150e-2", false, 0, false},
		{"0e999999999", false, 0, true},
		{"0.0001e2", false, 0, false},
		{"18446744073709551615", false, math.MaxUint64, true},
		{"18446744073709551616", false, 0, false},
		{"1844674407370955161.5e1", false, math.MaxUint64, true},
		{"2e19", false, 0, false},
		{"1e-999999999", false, 0, false},
	}
	for _, tc := range tests {
		neg, mag, ok := parseInt([]byte(tc.in))
		if ok != tc.ok || (ok && (neg != tc.neg || mag != tc.mag)) {
			t.Errorf("parseInt(%q) = %v, %d, %v; want %v, %d, %v", tc.in, neg, mag, ok, tc.neg, tc.mag, tc.ok)
		}
	}
}

// TestParseDigits checks the plain-digits fast path of readScalar against
// parseInt: it must accept only numbers parseInt reads the same way, and
// leave leading zeros (invalid JSON) and 20 digits to it.
func TestParseDigits(t *testing.T) {
	tests := []struct {
		in string
		v  uint64
		ok bool
	}{
		{"0", 0, true},
		{"7", 7, true},
		{"1704067200000547628", 1704067200000547628, true},
		{"9999999999999999999", 9999999999999999999, true},
		{"12345678", 12345678, true},
		{"123456789", 123456789, true},
		{"1234567890123456", 1234567890123456, true},
		{"10000000000000000000", 0, false},
		{"1234567:", 0, false},
		{"12345678:", 0, false},
		{"1234567/", 0, false},
		{"99999999999999999999999", 0, false},
		{"18446744073709551615", 0, false},
		{"00", 0, false},
		{"01", 0, false},
		{"", 0, false},
		{"-1", 0, false},
		{"1e3", 0, false},
		{"1.0", 0, false},
		{"12a", 0, false},
		{"1/", 0, false},
		{"1:", 0, false},
	}
	for _, tc := range tests {
		v, ok := parseDigits([]byte(tc.in))
		if qv, end, qok := quotedDigits([]byte(`"`+tc.in+`"`), 0); qok != ok || (ok && (qv != v || end != len(tc.in)+2)) {
			t.Errorf("quotedDigits(%q) = %d, %d, %v; want %d, %d, %v", `"`+tc.in+`"`, qv, end, qok, v, len(tc.in)+2, ok)
		}
		if ok != tc.ok || v != tc.v {
			t.Errorf("parseDigits(%q) = %d, %v; want %d, %v", tc.in, v, ok, tc.v, tc.ok)
		}
		if neg, mag, pok := parseInt([]byte(tc.in)); ok && (!pok || neg || mag != v) {
			t.Errorf("parseDigits(%q) = %d; parseInt says %v, %d, %v", tc.in, v, neg, mag, pok)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		seconds int64
		nanos   int32
		ok      bool
	}{
		{"1s", 1, 0, true},
		{"1.5s", 1, 500000000, true},
		{"-0.000000001s", 0, -1, true},
		{"315576000000s", 315576000000, 0, true},
		{"315576000001s", 0, 0, false},
		{"1.0000000001s", 0, 0, false},
		{"1.s", 0, 0, false},
		{".5s", 0, 0, false},
		{"1", 0, 0, false},
		{"s", 0, 0, false},
		{"-s", 0, 0, false},
		{"1.5xs", 0, 0, false},
	}
	for _, tc := range tests {
		seconds, nanos, ok := parseDuration([]byte(tc.in))
		if ok != tc.ok || (ok && (seconds != tc.seconds || nanos != tc.nanos)) {
			t.Errorf("parseDuration(%q) = %d, %d, %v; want %d, %d, %v", tc.in, seconds, nanos, ok, tc.seconds, tc.nanos, tc.ok)
		}
	}
}

// TestReadStringBoundaries places special bytes at every position around the
// 8-byte blocks the string scanner skips at once, and compares the decoded
// value with encoding/json.
func TestReadStringBoundaries(t *testing.T) {
	specials := []string{`\"`, `\\`, `\n`, `\u00e9`, "é", "😀", "\x01", "\xff", `"`}
	for n := 0; n < 20; n++ {
		for pos := 0; pos <= n; pos++ {
			for _, sp := range specials {
				raw := strings.Repeat("a", pos) + sp + strings.Repeat("b", n-pos)
				in := `{"resourceSpans":[{"schemaUrl":"` + raw + `"}]}`
				var want struct {
					ResourceSpans []struct{ SchemaURL string }
				}
				wantErr := json.Unmarshal([]byte(in), &want) != nil || !utf8.ValidString(raw)
				pb, err := Unmarshal(nil, TracesData, []byte(in))
				if (err != nil) != wantErr {
					t.Fatalf("%q: error %v; want error %v", in, err, wantErr)
				}
				if err != nil {
					continue
				}
				if wantPB := pbLen(1, pbStr(3, want.ResourceSpans[0].SchemaURL)); !bytes.Equal(pb, wantPB) {
					t.Fatalf("%q: got %q; want %q", in, pb, wantPB)
				}
			}
		}
	}
}

// TestParseFloatExact compares the fast path for doubles with
// strconv.ParseFloat on numbers of every length and point position, and
// checks it takes the common forms.
func TestParseFloatExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for range 200000 {
		digits := make([]byte, 1+rng.IntN(21))
		for i := range digits {
			digits[i] = byte('0' + rng.IntN(10))
		}
		if rng.IntN(4) == 0 {
			digits[0] = '9'
		}
		s := string(digits)
		if p := rng.IntN(len(digits) + 1); p > 0 && p < len(digits) {
			s = s[:p] + "." + s[p:]
		}
		if rng.IntN(2) == 0 {
			s = "-" + s
		}
		checkParseFloatExact(t, s)
		if _, ok := parseFloatExact([]byte(s)); ok {
			fast++
		}
	}
	for _, s := range []string{"0", "-0", "0.0", "-0.0", "1", "0.005", "2.5", "4.2", "894943.0395792252",
		"9007199254740992", "9007199254740993", "0.0000000000000000000001", "1.00000000000000000000001",
		"1e5", "1E5", "-", "", ".", "1.2.3", "12a"} {
		checkParseFloatExact(t, s)
	}
	for _, tc := range []struct {
		in  string
		end int
		ok  bool
	}{
		{"0.25,", 4, true}, {"5]", 1, true}, {"-1.5}", 4, true}, {"01", 1, false}, {"1.", 2, false},
		{"1.5e3", 3, false}, {"2E1", 1, false}, {"-", 1, false}, {"", 0, false},
	} {
		if _, end, ok := floatAt([]byte(tc.in), 0); ok != tc.ok || (ok && end != tc.end) {
			t.Errorf("floatAt(%q) ends at %d, %v; want %d, %v", tc.in, end, ok, tc.end, tc.ok)
		}
	}
	if fast < 50000 {
		t.Fatalf("the fast path took %d of 200000 numbers", fast)
	}
}

// checkParseFloatExact fails unless parseFloatExact(s), when it accepts s,
// returns the bits strconv.ParseFloat does.
func checkParseFloatExact(t *testing.T, s string) {
	t.Helper()
	got, ok := parseFloatExact([]byte(s))
	if !ok {
		return
	}
	want, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("parseFloatExact(%q) = %v (%x); strconv.ParseFloat says %v (%x), %v",
			s, got, math.Float64bits(got), want, math.Float64bits(want), err)
	}
}

// TestScanString checks the word-at-a-time string scan against a byte loop
// with every byte value at every position of a word, after other specials
// and before them.
func TestScanString(t *testing.T) {
	want := func(src []byte, i int) (int, bool) {
		for ; i < len(src); i++ {
			if c := src[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				return i, c == '"'
			}
		}
		return i, false
	}
	for b := range 256 {
		for pos := range 20 {
			for _, tail := range []string{"", "b", "\x00\"", "\xff\\", strings.Repeat("c", 20)} {
				src := []byte(`"` + strings.Repeat("a", pos) + string(rune(0)) + tail)
				src[1+pos] = byte(b)
				gotEnd, gotClosed := scanString(src, 1)
				wantEnd, wantClosed := want(src, 1)
				if gotEnd != wantEnd || gotClosed != wantClosed {
					t.Fatalf("scanString(%q) = %d, %v; want %d, %v", src, gotEnd, gotClosed, wantEnd, wantClosed)
				}
			}
		}
	}
}

// TestAppendHexDecode checks the 8-digit steps of appendHexDecode against
// encoding/hex with every byte value at every position, in ids of every
// length up to a trace id's.
func TestAppendHexDecode(t *testing.T) {
	const digits = "0123456789abcdefABCDEF"
	rng := rand.New(rand.NewPCG(3, 4))
	for length := 0; length <= 34; length += 2 {
		for pos := 0; pos < max(length, 1); pos++ {
			for b := range 256 {
				s := make([]byte, length)
				for i := range s {
					s[i] = digits[rng.IntN(len(digits))]
				}
				if length > 0 {
					s[pos] = byte(b)
				}
				want, wantErr := hex.DecodeString(string(s))
				got, ok := appendHexDecode([]byte("x"), s)
				if ok != (wantErr == nil) || (ok && !bytes.Equal(got, append([]byte("x"), want...))) || (!ok && string(got) != "x") {
					t.Fatalf("appendHexDecode(%q) = %x, %v; encoding/hex says %x, %v", s, got, ok, want, wantErr)
				}
			}
		}
	}
}
