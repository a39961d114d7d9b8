package otlpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// allTypes lists every MessageType.
var allTypes = []MessageType{
	TracesData, MetricsData, LogsData,
	ExportTraceServiceResponse, ExportMetricsServiceResponse, ExportLogsServiceResponse,
	Status, ProfilesData, ExportProfilesServiceResponse,
}

// readTestdata returns the contents of the files matching pattern.
func readTestdata(tb testing.TB, pattern string) map[string][]byte {
	tb.Helper()
	names, err := filepath.Glob(pattern)
	if err != nil {
		tb.Fatal(err)
	}
	files := make(map[string][]byte, len(names))
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		files[name] = b
	}
	return files
}

// checkError fails unless err is an *Error pointing inside the input.
func checkError(t *testing.T, err error, inputLen int) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %q is not *Error", err, err)
	}
	if e.Offset < 0 || e.Offset > inputLen {
		t.Fatalf("error offset %d outside input of %d bytes: %v", e.Offset, inputLen, err)
	}
}

// checkFixedPoint checks that the canonical JSON js of type mt decodes and
// re-encodes to the same bytes.
func checkFixedPoint(t *testing.T, mt MessageType, js []byte) {
	t.Helper()
	if !json.Valid(js) {
		t.Fatalf("%s: Marshal produced invalid JSON: %q", mt, js)
	}
	pb, err := Unmarshal(nil, mt, js)
	if err != nil {
		t.Fatalf("%s: Unmarshal of Marshal output failed: %v\njson: %s", mt, err, js)
	}
	js2, err := Marshal(nil, mt, pb)
	if err != nil {
		t.Fatalf("%s: Marshal after round trip failed: %v", mt, err)
	}
	if !bytes.Equal(js, js2) {
		t.Fatalf("%s: encode/decode/encode is not stable:\n%s\n%s", mt, js, js2)
	}
}

// FuzzUnmarshal checks that Unmarshal never panics, that its errors locate
// the problem inside the input, that the fast paths change neither its
// output nor its errors, that UnmarshalBounded holds its bound exactly, and that successful output marshals to canonical
// JSON that is a fixed point of decode/encode.
func FuzzUnmarshal(f *testing.F) {
	for _, b := range readTestdata(f, "testdata/*.json") {
		f.Add(b)
	}
	for _, tc := range marshalCases() {
		f.Add([]byte(tc.want))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mt := range allTypes {
			checkSameAsGeneric(t, mt, data)
			pb, err := Unmarshal(nil, mt, data)
			if err != nil {
				checkError(t, err, len(data))
				continue
			}
			checkBounded(t, mt, data, pb)
			js, err := Marshal(nil, mt, pb)
			if err != nil {
				t.Fatalf("%s: Marshal of Unmarshal output failed: %v\ninput: %q", mt, err, data)
			}
			checkFixedPoint(t, mt, js)
		}
	})
}

// checkBounded checks that UnmarshalBounded, at a limit the output of
// Unmarshal fits exactly, produces that output and charges each of its
// bytes once, and that one byte less is ErrTooLarge.
func checkBounded(t *testing.T, mt MessageType, data, want []byte) {
	t.Helper()
	charged := 0
	b := Bound{Max: max(len(want), 1), Charge: func(n int) error { charged += n; return nil }}
	got, err := UnmarshalBounded(nil, mt, data, b)
	if err != nil || !bytes.Equal(got, want) || charged != len(want) {
		t.Fatalf("%s: UnmarshalBounded at its own size: err %v, same output %v, charged %d of %d", mt, err, bytes.Equal(got, want), charged, len(want))
	}
	if len(want) > 1 {
		if _, err := UnmarshalBounded(nil, mt, data, Bound{Max: len(want) - 1}); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s: UnmarshalBounded one byte short: err %v", mt, err)
		}
	}
}

// FuzzMarshal checks that Marshal never panics on arbitrary protobuf and that
// its output is valid JSON which Unmarshal accepts and which is a fixed point
// of decode/encode.
func FuzzMarshal(f *testing.F) {
	// testdata/fuzz/FuzzMarshal holds the small payloads of the
	// repository-level testdata/otlp. Large seeds make minimization slow:
	// fuzz with -fuzzminimizetime 1s on a shared machine.
	for _, tc := range marshalCases() {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, mt := range allTypes {
			js, err := Marshal(nil, mt, data)
			if err != nil {
				checkError(t, err, len(data))
				continue
			}
			checkFixedPoint(t, mt, js)
		}
	})
}

// TestTestdataExamples checks the opentelemetry-proto examples decode, and
// that the malformed events example is rejected with its location.
func TestTestdataExamples(t *testing.T) {
	tests := []struct {
		file    string
		t       MessageType
		wantErr string
	}{
		{"testdata/trace.json", TracesData, ""},
		{"testdata/metrics.json", MetricsData, ""},
		{"testdata/logs.json", LogsData, ""},
		{"testdata/profiles.json", ProfilesData, ""},
		{"testdata/events_invalid.json", LogsData, "cannot decode resourceLogs[0].scopeLogs[0].logRecords[0].body.kvlistValue: expected object at offset 1148"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			src, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := Unmarshal(nil, tc.t, src)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v; want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			js, err := Marshal(nil, tc.t, pb)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			checkFixedPoint(t, tc.t, js)
		})
	}
}

// FuzzParseFloatExact checks that the fast path for doubles reads exactly
// the JSON number at the start of any input, if it reads one, and agrees
// with strconv.ParseFloat on its value.
func FuzzParseFloatExact(f *testing.F) {
	for _, s := range []string{"0", "-0.0", "0.005", "894943.0395792252", "9007199254740993", "1e5", "12345678901234567890", "0.25,", "01", "1.]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, end, ok := floatAt([]byte(s), 0)
		if !ok {
			return
		}
		if n := numberLen([]byte(s)); n != end {
			t.Fatalf("floatAt(%q) ends at %d; the number ends at %d", s, end, n)
		}
		checkParseFloatExact(t, s[:end])
	})
}

// FuzzDigits checks the integer fast paths (digitsAt and its eight-digit
// steps) against parseInt on arbitrary input.
func FuzzDigits(f *testing.F) {
	for _, s := range []string{"0", "01", "1704067200000547628", "12345678", "9999999999999999999", "10000000000000000000", "1234567:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseDigits([]byte(s))
		if !ok {
			return
		}
		neg, mag, pok := parseInt([]byte(s))
		if !pok || neg || mag != v || numberLen([]byte(s)) != len(s) || len(s) > 19 {
			t.Fatalf("parseDigits(%q) = %d; parseInt says %v, %d, %v", s, v, neg, mag, pok)
		}
	})
}
