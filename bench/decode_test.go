package bench

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// signalCase ties a payload to otlpdecode's Check and otlpview's visitor
// walk, and to pdata's unmarshal and walk of the same signal.
type signalCase struct {
	name  string
	shape shape
	check func([]byte, *otlpdecode.Options) (otlpdecode.Result, error)
	// newWalk returns a reusable visitor walk returning (items, error) and
	// a getter of the walk's checksum.
	newWalk func() (walk func([]byte) (int, error), sum func() uint64)
	pdata   func([]byte) (int, uint64, error)
}

func signalCases() []signalCase {
	tracesCase := func(s shape) signalCase {
		return signalCase{
			name: "traces/" + s.name, shape: s, check: otlpdecode.CheckTraces,
			newWalk: func() (func([]byte) (int, error), func() uint64) {
				t := newTracesWalk()
				return t.walk, func() uint64 { return t.w.sum }
			},
			pdata: func(src []byte) (int, uint64, error) {
				td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(src)
				if err != nil {
					return 0, 0, err
				}
				n, sum := pdataTraces(td)
				return n, sum, nil
			},
		}
	}
	return []signalCase{
		tracesCase(traceShapes[0]),
		tracesCase(traceShapes[1]),
		{
			name: "metrics/" + metricsShape.name, shape: metricsShape, check: otlpdecode.CheckMetrics,
			newWalk: func() (func([]byte) (int, error), func() uint64) {
				t := newMetricsWalk()
				return t.walk, func() uint64 { return t.w.sum }
			},
			pdata: func(src []byte) (int, uint64, error) {
				md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(src)
				if err != nil {
					return 0, 0, err
				}
				n, sum := pdataMetrics(md)
				return n, sum, nil
			},
		},
		{
			name: "logs/" + logsShape.name, shape: logsShape, check: otlpdecode.CheckLogs,
			newWalk: func() (func([]byte) (int, error), func() uint64) {
				t := newLogsWalk()
				return t.walk, func() uint64 { return t.w.sum }
			},
			pdata: func(src []byte) (int, uint64, error) {
				ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(src)
				if err != nil {
					return 0, 0, err
				}
				n, sum := pdataLogs(ld)
				return n, sum, nil
			},
		},
	}
}

// TestWalksAgree proves that the benchmarks compare like with like: on every
// payload, Check accepts every item, and the otlpview visitor walk reads
// the same items and the same field values (same checksum) as pdata's.
func TestWalksAgree(t *testing.T) {
	for _, c := range signalCases() {
		t.Run(c.name, func(t *testing.T) {
			r, err := c.check(c.shape.src, &otlpdecode.Options{ValidateUTF8: true})
			if err != nil {
				t.Fatalf("Check: %s", err)
			}
			if r.Items != c.shape.items || r.Rejected != 0 {
				t.Fatalf("Check: %d items, %d rejected (%s); want %d items, 0 rejected",
					r.Items, r.Rejected, r.FirstRejection, c.shape.items)
			}
			walk, sum := c.newWalk()
			n, err := walk(c.shape.src)
			if err != nil {
				t.Fatalf("walk: %s", err)
			}
			pn, psum, err := c.pdata(c.shape.src)
			if err != nil {
				t.Fatalf("pdata: %s", err)
			}
			if n != c.shape.items || pn != c.shape.items {
				t.Fatalf("walk saw %d items, pdata %d; want %d", n, pn, c.shape.items)
			}
			if sum() != psum {
				t.Fatalf("walk checksum %#x, pdata checksum %#x: the walks read different values", sum(), psum)
			}
		})
	}
}

// TestZeroAllocPerSpan proves the hot-path claim on the benchmark payloads:
// once warmed up, Check and a reused decoder's full walk allocate nothing
// per request, hence nothing per span, data point or log record.
func TestZeroAllocPerSpan(t *testing.T) {
	for _, c := range signalCases() {
		t.Run(c.name, func(t *testing.T) {
			src := c.shape.src
			checkAllocs := testing.AllocsPerRun(20, func() {
				if _, err := c.check(src, nil); err != nil {
					t.Fatal(err)
				}
			})
			walk, _ := c.newWalk()
			walkAllocs := testing.AllocsPerRun(20, func() {
				if _, err := walk(src); err != nil {
					t.Fatal(err)
				}
			})
			if checkAllocs != 0 || walkAllocs != 0 {
				t.Fatalf("allocations per request: Check %v, Decode walk %v; want 0 and 0", checkAllocs, walkAllocs)
			}
		})
	}
}
