package interop

// The OTLP/JSON payload files in ../testdata/otlp: *.json twins of the
// binary payloads that set every field of the v1.11 data model, written in
// the OTLP/JSON encoding a human or curl would post (opentelemetry-proto
// docs/specification.md "JSON Protobuf Encoding": lowerCamelCase keys, hex
// trace and span ids, enums as integers, 64-bit integers as strings), and
// one in the snake_case form with upper-case hex ids that OTLP/HTTP
// receivers accept too (as the collector does).

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/otlp-lite/otlp-lite/otlpjson"
	"github.com/otlp-lite/otlp-lite/storage"
)

var updateJSON = flag.Bool("update-json", false, "rewrite the ../testdata/otlp/*.json payload files from their .pb twins")

// jsonPayload is one OTLP/JSON payload file.
type jsonPayload struct {
	file   string
	signal storage.Signal
	pbFile string // the binary payload it transcribes; "" for invalidSpanRequest
	// snake writes the lenient form receivers accept like the collector
	// does: snake_case proto field names, upper-case hex ids.
	snake bool
}

var jsonPayloads = []jsonPayload{
	{"traces.json", storage.Traces, "traces_all_fields.pb", false},
	{"metrics.json", storage.Metrics, "metrics_all_kinds.pb", false},
	{"logs.json", storage.Logs, "logs_all_fields.pb", false},
	{"metrics_snake_case.json", storage.Metrics, "metrics_all_kinds.pb", true},
	{"traces_invalid_span.json", storage.Traces, "", false},
}

// invalidSpanRequest has three spans, the second with a 3-byte trace_id,
// which OTLP/HTTP must answer with a partial success (otlp.md "Partial
// Success") that rejects one span and stores the other two.
func invalidSpanRequest() proto.Message {
	bad := testSpan("json-bad-trace-id", 2)
	bad.TraceId = []byte{1, 2, 3}
	return traceRequest(testSpan("json-valid-1", 1, kv("k", strV("v"))), bad, testSpan("json-valid-2", 3))
}

func payloadPath(file string) string { return filepath.Join("..", "testdata", "otlp", file) }

// TestJSONPayloadFiles checks that each JSON file, decoded independently of
// otlp-lite (protojson with the official generated types, after turning the
// hex ids back into the base64 protojson expects), is the message of its .pb
// twin, and that otlpjson.Unmarshal decodes it to the same message. With
// -update-json it first rewrites the files.
func TestJSONPayloadFiles(t *testing.T) {
	for _, p := range jsonPayloads {
		want := jsonPayloadWant(t, p)
		if *updateJSON {
			pj, err := protojson.MarshalOptions{UseEnumNumbers: true, UseProtoNames: p.snake}.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.MarshalIndent(ojHexIDs(t, ojParse(t, pj), p.snake), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(payloadPath(p.file), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got := readJSONPayload(t, p)
		if d := diffProto(want, got); d != "" {
			t.Errorf("%s differs from %s (-pb +json):\n%s", p.file, p.pbFile, d)
		}
		b, err := os.ReadFile(payloadPath(p.file))
		if err != nil {
			t.Fatal(err)
		}
		pb, err := otlpjson.Unmarshal(nil, jsonType(p.signal), b)
		if err != nil {
			t.Fatalf("otlpjson.Unmarshal(%s): %v", p.file, err)
		}
		mine := newRequest(p.signal)
		if err := proto.Unmarshal(pb, mine); err != nil {
			t.Fatal(err)
		}
		if d := diffProto(want, mine); d != "" {
			t.Errorf("otlpjson.Unmarshal(%s) differs (-want +otlpjson):\n%s", p.file, d)
		}
	}
}

// jsonPayloadWant is the message p.file must hold.
func jsonPayloadWant(t *testing.T, p jsonPayload) proto.Message {
	t.Helper()
	if p.pbFile == "" {
		return invalidSpanRequest()
	}
	b, err := os.ReadFile(payloadPath(p.pbFile))
	if err != nil {
		t.Fatal(err)
	}
	m := newRequest(p.signal)
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatalf("cannot parse %s: %v", p.pbFile, err)
	}
	return m
}

// readJSONPayload decodes p.file with protojson, independently of otlpjson.
func readJSONPayload(t *testing.T, p jsonPayload) proto.Message {
	t.Helper()
	b, err := os.ReadFile(payloadPath(p.file))
	if err != nil {
		t.Fatalf("cannot read payload (regenerate with -update-json): %v", err)
	}
	return protojsonOTLP(t, p.signal, b)
}

// protojsonOTLP decodes OTLP/JSON with protojson: hex ids are rewritten to
// base64 first, the one OTLP/JSON rule protojson does not know (enums as
// integers and lowerCamelCase keys are protojson's own forms).
func protojsonOTLP(t *testing.T, signal storage.Signal, b []byte) proto.Message {
	t.Helper()
	in, err := json.Marshal(ojBase64IDs(t, ojParse(t, b)))
	if err != nil {
		t.Fatal(err)
	}
	m := newRequest(signal)
	if err := protojson.Unmarshal(in, m); err != nil {
		t.Fatalf("protojson.Unmarshal: %v\n%.500s", err, b)
	}
	return m
}

// ojBase64IDs is the inverse of ojHexIDs: hex trace/span ids to base64.
func ojBase64IDs(t *testing.T, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id":
				b, err := hex.DecodeString(x.(string))
				if err != nil {
					t.Fatalf("id %q is not hex: %v", x, err)
				}
				v[k] = base64.StdEncoding.EncodeToString(b)
			case "profileId", "profile_id":
				// Hex when it is 16 bytes, as pdata writes it (otlpjson's kProfileID).
				if b, err := hex.DecodeString(x.(string)); err == nil && len(b) == 16 {
					v[k] = base64.StdEncoding.EncodeToString(b)
				}
			default:
				v[k] = ojBase64IDs(t, x)
			}
		}
	case []any:
		for i := range v {
			v[i] = ojBase64IDs(t, v[i])
		}
	}
	return v
}
