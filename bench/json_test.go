package bench

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// pdataJSONToProto decodes js with pdata's JSONUnmarshaler and re-encodes it
// with its ProtoMarshaler, so that the pdata checksum walk can read it.
func pdataJSONToProto(t otlpjson.MessageType, js []byte) ([]byte, error) {
	switch t {
	case otlpjson.ExportTraceServiceRequest:
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(js)
		if err != nil {
			return nil, err
		}
		return (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	case otlpjson.ExportMetricsServiceRequest:
		md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(js)
		if err != nil {
			return nil, err
		}
		return (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	default:
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(js)
		if err != nil {
			return nil, err
		}
		return (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	}
}

// TestJSONDecodersAgree proves that the JSON benchmark compares like with
// like: the JSON payload holds the same data as the protobuf payload of the
// decode benchmark, our transcoder and pdata's JSON unmarshaler both recover
// every field value of it (same checksum over every field as pdata reading
// the protobuf bytes), Check accepts every item of our output, and
// protojson accepts the bytes and sees every item.
func TestJSONDecodersAgree(t *testing.T) {
	sigs := signalCases()
	for i, c := range jsonCases() {
		sig := sigs[i]
		t.Run(c.name, func(t *testing.T) {
			if sig.shape.items != c.items {
				t.Fatalf("case order differs: %s has %d items, %s %d", sig.name, sig.shape.items, c.name, c.items)
			}
			wantN, wantSum, err := sig.pdata(sig.shape.src)
			if err != nil {
				t.Fatal(err)
			}
			pb, n, err := c.ours(nil, c.js)
			if err != nil {
				t.Fatalf("ours: %s", err)
			}
			if n != c.items {
				t.Fatalf("ours: Check saw %d items, want %d", n, c.items)
			}
			gotN, gotSum, err := sig.pdata(pb)
			if err != nil {
				t.Fatalf("pdata cannot read our transcoding: %s", err)
			}
			if gotN != wantN || gotSum != wantSum {
				t.Fatalf("ours: %d items, checksum %#x; the protobuf payload has %d items, checksum %#x", gotN, gotSum, wantN, wantSum)
			}
			ppb, err := pdataJSONToProto(c.t, c.js)
			if err != nil {
				t.Fatalf("pdata JSON: %s", err)
			}
			if gotN, gotSum, err = sig.pdata(ppb); err != nil || gotN != wantN || gotSum != wantSum {
				t.Fatalf("pdata JSON: %d items, checksum %#x, err %v; want %d items, checksum %#x", gotN, gotSum, err, wantN, wantSum)
			}
			if n, err := c.protojson(c.js); err != nil || n != c.items {
				t.Fatalf("protojson: %d items, err %v; want %d", n, err, c.items)
			}
		})
	}
}

// TestJSONZeroAlloc proves that the handler's JSON work (transcode into a
// reused buffer, then Check) allocates nothing per request in steady state.
func TestJSONZeroAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	for _, c := range jsonCases() {
		t.Run(c.name, func(t *testing.T) {
			dst, _, err := c.ours(nil, c.js)
			if err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(20, func() {
				if dst, _, err = c.ours(dst, c.js); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per request, want 0", allocs)
			}
		})
	}
}
