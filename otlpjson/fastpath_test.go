package otlpjson

import (
	"bytes"
	"strings"
	"testing"
)

// checkSameAsGeneric fails unless Unmarshal of in gives the same protobuf
// bytes, or the same error, with and without the fast paths of fastpath.go.
func checkSameAsGeneric(t *testing.T, mt MessageType, in []byte) {
	t.Helper()
	got, err := Unmarshal(nil, mt, in)
	want, wantErr := unmarshal(nil, mt, in, Bound{}, true)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%s %q: error %v; the general path says %v", mt, in, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s %q: output %x; the general path writes %x", mt, in, got, want)
	}
}

// TestFastPathsAgree checks that the KeyValue and AnyValue fast paths agree
// with decodeObject on every form of those objects, valid or not: the ones
// they take, and the ones they must leave to the general path.
func TestFastPathsAgree(t *testing.T) {
	values := []string{
		`{"stringValue":"v"}`,
		`{"stringValue":""}`,
		`{"stringValue":"a\"b\u00e9\ud83d\ude00\n"}`,
		`{"stringValue":"` + strings.Repeat("é", 30) + `"}`,
		` { "stringValue" : "v" } `,
		"{\n\t\"stringValue\"\r:\n\"v\"\n}",
		`{"stringValue": "v"}`,
		`{ "intValue" : "42" }`,
		`{"intValue": 7}`,
		`{"intValue":` + "\n" + `"7"}`,
		`{"intValue" "7"}`,
		`{"stringValue"}`,
		`{"intValue":"42"}`,
		`{"intValue":42}`,
		`{"intValue":"-9223372036854775808"}`,
		`{"intValue":"0"}`,
		`{"intValue":1e3}`,
		`{"intValue":"1.0"}`,
		`{"intValue":"01"}`,
		`{"intValue":01}`,
		`{"intValue":"9223372036854775808"}`,
		`{"intValue":"x"}`,
		`{"intValue":1.5}`,
		`{"boolValue":true}`,
		`{"boolValue":false}`,
		`{"boolValue":"true"}`,
		`{"doubleValue":1.5}`,
		`{"doubleValue":"NaN"}`,
		`{"doubleValue":-0}`,
		`{"doubleValue":1e400}`,
		`{"bytesValue":"AAE="}`,
		`{"bytesValue":""}`,
		`{"bytesValue":"a"}`,
		`{"stringValueStrindex":3}`,
		`{"stringValueStrindex":0}`,
		`{"string_value":"v"}`,
		`{"int_value":"1"}`,
		`{"stringValue":null}`,
		`{"stringValue":"a","intValue":"1"}`,
		`{"stringValue":"a","stringValue":"b"}`,
		`{"stringValue":"a","unknown":1}`,
		`{"unknown":1,"stringValue":"a"}`,
		`{"stringValueX":"a"}`,
		`{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":"1"}]}}`,
		`{"kvlistValue":{"values":[{"key":"k","value":{"boolValue":true}},{"key":"k2","value":{"arrayValue":{}}}]}}`,
		`{}`,
		`null`,
		`{"stringValue":"v"`,
		`{"stringValue":"v"]`,
		`{"stringValue":"v",}`,
		`{"stringValue" "v"}`,
		"{\"stringValue\":\"\xff\"}",
		"{\"stringValue\":\"a\x01\"}",
		`{"stringValue":1}`,
		`[]`,
	}
	keyValues := []string{
		`{"key":"k","value":%s}`,
		`{"key":"","value":%s}`,
		` { "key" : "k" , "value" : %s } `,
		`{"key": "k", "value": %s}`,
		`{"key":` + "\t" + `"k","value":` + "\n" + `%s}`,
		`{"key" "k","value":%s}`,
		`{"key":"k","value" %s}`,
		`{"key":"a\"b\/\u00e9","value":%s}`,
		`{"value":%s,"key":"k"}`,
		`{"key":"k","value":%s,"keyStrindex":1}`,
		`{"key":"k","value":%s,"x":[1]}`,
		`{"key":"k","key":"j","value":%s}`,
		`{"key":"k","value":%s,"value":%s}`,
		`{"key":null,"value":%s}`,
		`{"key":1,"value":%s}`,
		"{\"key\":\"\xc3\",\"value\":%s}",
		`{"key":"k"}`,
		`{"value":%s}`,
		`{"key":"k","value":%s`,
		`{"key":"k","value":%s]`,
		`{"key":"k" "value":%s}`,
		`{"key":"k","value":null}`,
		`{"key":"k","value":"v"}`,
		`{"keyStrindex":2,"value":%s}`,
	}
	for _, v := range values {
		// A log body is an AnyValue on its own.
		checkSameAsGeneric(t, LogsData, []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":`+v+`}]}]}]}`))
		for _, kv := range keyValues {
			attr := strings.ReplaceAll(kv, "%s", v)
			checkSameAsGeneric(t, TracesData, []byte(spanJSON(`"attributes":[`+attr+`,`+attr+`]`)))
			checkSameAsGeneric(t, LogsData, []byte(`{"resourceLogs":[{"resource":{"attributes":[`+attr+`]}}]}`))
		}
	}
}

// TestHexIDFast checks the in-place decoding of 32- and 16-digit ids
// against the general path, with ids of other lengths, escapes and
// non-hex bytes where the fast path expects digits or a quote.
func TestHexIDFast(t *testing.T) {
	const trace, span = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"
	ids := []string{
		trace, span, strings.ToUpper(trace), "", "ab", trace + "ab", trace[:30], span[:14],
		`\u0035` + trace[1:], span[:15] + `\u0034`, trace[:31] + "g", span[:8] + "-" + span[9:], trace[:16] + `\"` + trace[18:],
		span + `","spanId":"` + span, span + `"` + trace[17:], trace[:32] + "\u00e9",
	}
	for _, id := range ids {
		for _, key := range []string{"traceId", "spanId", "parentSpanId"} {
			checkSameAsGeneric(t, TracesData, []byte(spanJSON(`"`+key+`":"`+id+`","name":"n"`)))
			checkSameAsGeneric(t, TracesData, []byte(spanJSON(`"name":"n","`+key+`":"`+id+`"`)))
		}
		in := []byte(spanJSON(`"traceId":"` + id + `"`))
		for n := range len(in) + 1 {
			checkSameAsGeneric(t, TracesData, in[:n:n])
		}
	}
}

// TestFastPathsTruncated checks every prefix of a document with each kind
// of scalar attribute: the fast paths must stop where the general path
// reports the end of input.
func TestFastPathsTruncated(t *testing.T) {
	in := []byte(spanJSON(`"attributes":[{"key":"s","value":{"stringValue":"v\u00e9"}},{"key":"i","value":{"intValue":"12"}},` +
		`{"key":"j","value":{"intValue":3}},{"key":"b","value":{"boolValue":true}},{"key":"d","value":{"doubleValue":"NaN"}}, ` +
		`{ "key" : "é" , "value" : { "bytesValue" : "AA==" } }]`))
	for n := range len(in) + 1 {
		checkSameAsGeneric(t, TracesData, in[:n:n])
	}
}

// TestFastPathsDepth checks that the fast paths reject objects at the
// nesting limit exactly where decodeObject does.
func TestFastPathsDepth(t *testing.T) {
	// Each level nests two (arrays) or three (key-value lists) messages, and
	// a log body starts one level above a span attribute's value, so these
	// put a KeyValue and an AnyValue at every depth up to past MaxDepth.
	for levels := 35; levels < 66; levels++ {
		arrays := `{"kvlistValue":{"values":[{"key":"k","value":{"stringValue":"v"}}]}}`
		kvlists := `{"stringValue":"v"}`
		for range levels {
			arrays = `{"arrayValue":{"values":[` + arrays + `,{"intValue":"1"}]}}`
			kvlists = `{"kvlistValue":{"values":[{"key":"k","value":` + kvlists + `}]}}`
		}
		for _, v := range []string{arrays, kvlists} {
			checkSameAsGeneric(t, LogsData, []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":`+v+`}]}]}]}`))
			checkSameAsGeneric(t, TracesData, []byte(spanJSON(`"attributes":[{"key":"a","value":`+v+`}]`)))
		}
	}
}

// TestFastPathWire pins the bytes of the common attribute forms, so that a
// bug shared by both paths cannot hide behind TestFastPathsAgree.
func TestFastPathWire(t *testing.T) {
	in := spanJSON(`"attributes":[{"key":"k","value":{"stringValue":"v"}},{"key":"","value":{"intValue":"300"}},` +
		`{"key":"b","value":{"boolValue":false}},{"key":"d","value":{"doubleValue":0.5}}]`)
	want := pbLen(1, pbLen(2, pbLen(2, pbCat(
		pbLen(9, pbStr(1, "k"), pbLen(2, pbStr(1, "v"))),
		pbLen(9, pbLen(2, pbVarint(3, 300))),
		pbLen(9, pbStr(1, "b"), pbLen(2, pbVarint(2, 0))),
		pbLen(9, pbStr(1, "d"), pbLen(2, pbDouble(4, 0.5))),
	))))
	got, err := Unmarshal(nil, TracesData, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %x\nwant %x", got, want)
	}
}

// TestKeyAt checks the 8-byte key comparison of decodeObject for every
// field name, at the end of the input and not, against every one-byte
// change and truncation of the name.
func TestKeyAt(t *testing.T) {
	for mi := range schema {
		for fi := range schema[mi].fields {
			f := &schema[mi].fields[fi]
			for _, suffix := range []string{"", ":", `:"x"}`, ":0,          "} {
				src := []byte("  " + f.quoted + suffix)
				if !f.keyAt(src, 2, wordAt(src, 2)) {
					t.Fatalf("%s.%s: keyAt(%q, 2) = false", schema[mi].name, f.name, src)
				}
				for j := 2; j < 2+len(f.quoted); j++ {
					bad := bytes.Clone(src)
					bad[j] ^= 0x20
					if f.keyAt(bad, 2, wordAt(bad, 2)) {
						t.Fatalf("%s.%s: keyAt(%q, 2) = true", schema[mi].name, f.name, bad)
					}
					if f.keyAt(src[:j], 2, wordAt(src[:j], 2)) {
						t.Fatalf("%s.%s: keyAt(%q, 2) = true", schema[mi].name, f.name, src[:j])
					}
				}
			}
		}
	}
}
