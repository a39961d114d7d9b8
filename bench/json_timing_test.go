package bench

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/otlpjson"
)

// The JSON benchmarks compare, on the same OTLP/JSON bytes (written by
// pdata's JSONMarshaler), three ways of decoding an OTLP/HTTP JSON request
// body (issue 3: "OTLP/HTTP JSON decode throughput ≥ 3 × pdata's JSON
// unmarshaler"):
//
//   - dec=ours: otlpjson.Unmarshal into a reused buffer (JSON → the
//     protobuf bytes the gRPC path stores), then otlpdecode.Check* on its
//     output: exactly the handler's work for a JSON request;
//   - dec=protojson: protojson.Unmarshal into the official generated
//     Export*ServiceRequest (go.opentelemetry.io/proto/otlp);
//   - dec=pdata: pdata's ptrace/pmetric/plog JSONUnmarshaler, what the
//     Collector's otlpreceiver does for application/json.
//
// MB/s is JSON input bytes per second (b.SetBytes(len(json))). protojson
// does not implement OTLP's hex ids: it reads the hex strings as base64 and
// keeps 24- and 12-byte ids. It does the same amount of parsing, so its
// figure is a fair reference for a generic proto3 JSON decoder, but its
// output is not valid OTLP (TestJSONDecodersAgree checks the other two).

type jsonCase struct {
	name  string
	items int
	js    []byte
	t     otlpjson.MessageType
	check func([]byte, *otlpdecode.Options) (otlpdecode.Result, error)
	// pdata and protojson decode js and return the items they saw.
	pdata     func(js []byte) (int, error)
	protojson func(js []byte) (int, error)
}

func jsonCases() []jsonCase {
	tracesCase := func(spans, attrs int) jsonCase {
		return jsonCase{
			name: fmt.Sprintf("traces/%dx%d", spans, attrs), items: spans,
			js: TracesJSON(spans, attrs), t: otlpjson.ExportTraceServiceRequest, check: otlpdecode.CheckTraces,
			pdata: func(js []byte) (int, error) {
				td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(js)
				return td.SpanCount(), err
			},
			protojson: func(js []byte) (int, error) {
				var req coltracepb.ExportTraceServiceRequest
				if err := protojson.Unmarshal(js, &req); err != nil {
					return 0, err
				}
				n := 0
				for _, rs := range req.ResourceSpans {
					for _, ss := range rs.ScopeSpans {
						n += len(ss.Spans)
					}
				}
				return n, nil
			},
		}
	}
	return []jsonCase{
		tracesCase(500, 10),
		tracesCase(100, 4),
		{
			name: "metrics/510points", items: 510,
			js: MetricsJSON(17), t: otlpjson.ExportMetricsServiceRequest, check: otlpdecode.CheckMetrics,
			pdata: func(js []byte) (int, error) {
				md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(js)
				return md.DataPointCount(), err
			},
			protojson: func(js []byte) (int, error) {
				var req colmetricspb.ExportMetricsServiceRequest
				if err := protojson.Unmarshal(js, &req); err != nil {
					return 0, err
				}
				n := 0
				for _, rm := range req.ResourceMetrics {
					for _, sm := range rm.ScopeMetrics {
						for _, m := range sm.Metrics {
							n += len(m.GetGauge().GetDataPoints()) + len(m.GetSum().GetDataPoints()) +
								len(m.GetHistogram().GetDataPoints())
						}
					}
				}
				return n, nil
			},
		},
		{
			name: "logs/500x6", items: 500,
			js: LogsJSON(500, 6), t: otlpjson.ExportLogsServiceRequest, check: otlpdecode.CheckLogs,
			pdata: func(js []byte) (int, error) {
				ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(js)
				return ld.LogRecordCount(), err
			},
			protojson: func(js []byte) (int, error) {
				var req collogspb.ExportLogsServiceRequest
				if err := protojson.Unmarshal(js, &req); err != nil {
					return 0, err
				}
				n := 0
				for _, rl := range req.ResourceLogs {
					for _, sl := range rl.ScopeLogs {
						n += len(sl.LogRecords)
					}
				}
				return n, nil
			},
		},
	}
}

// ours is the handler's work for one JSON request: transcode into dst
// (reused), then validate. It returns the extended dst.
func (c jsonCase) ours(dst, js []byte) ([]byte, int, error) {
	dst, err := otlpjson.Unmarshal(dst[:0], c.t, js)
	if err != nil {
		return dst, 0, err
	}
	r, err := c.check(dst, nil)
	return dst, r.Items, err
}

func BenchmarkDecodeJSON(b *testing.B) {
	for _, c := range jsonCases() {
		s := shape{name: c.name, items: c.items, src: c.js}
		b.Run(fmt.Sprintf("shape=%s/dec=ours", c.name), func(b *testing.B) {
			var dst []byte
			runPerItem(b, s, func(js []byte) (n int, err error) {
				dst, n, err = c.ours(dst, js)
				return n, err
			})
		})
		b.Run(fmt.Sprintf("shape=%s/dec=protojson", c.name), func(b *testing.B) {
			runPerItem(b, s, c.protojson)
		})
		b.Run(fmt.Sprintf("shape=%s/dec=pdata", c.name), func(b *testing.B) {
			runPerItem(b, s, c.pdata)
		})
	}
}
