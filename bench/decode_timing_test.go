package bench

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/otlpdecode"
)

// The benchmarks compare, on the same bytes, four ways of reading a request:
//
//   - dec=pdata: the Collector's ProtoUnmarshaler, which builds the whole
//     pdata tree (what the Collector's OTLP receiver does per request);
//   - dec=pdatawalk: the same, then reading every field of the tree;
//   - dec=check: otlpdecode.Check*, the receiver's per-request work
//     (well-formedness and validation of every item);
//   - dec=decode: the otlpview visitor reading every field of every item,
//     every attribute and its value.
//
// Each reports ns and allocations per item (span, data point, log record),
// so that the shapes compare; `benchstat -col /dec` puts them side by side.

type shape struct {
	name  string
	items int
	src   []byte
}

var (
	traceShapes = []shape{
		{name: "500x10", items: 500, src: TracesBytes(500, 10)},
		{name: "100x4", items: 100, src: TracesBytes(100, 4)},
	}
	// 17 points per metric × (10 gauges + 10 sums + 10 histograms).
	metricsShape = shape{name: "510points", items: 510, src: MetricsBytes(17)}
	logsShape    = shape{name: "500x6", items: 500, src: LogsBytes(500, 6)}
)

// runPerItem runs fn b.N times and reports ns, bytes and allocations per
// item. fn returns the number of items it saw, checked against want so that a
// decoder that silently skips items cannot look fast.
//
// Besides wall time (ns/item) it reports cpu-ns/item: the CPU time of the
// whole process (getrusage(RUSAGE_SELF): every thread, including the
// garbage collector's background workers) over the loop. On a shared machine
// wall time mostly measures the neighbours; CPU time is also what a receiver
// pays for, and it charges pdata for the collection of its garbage, which
// runs on other cores and does not show in wall time.
func runPerItem(b *testing.B, s shape, fn func(src []byte) (int, error)) {
	b.Helper()
	b.SetBytes(int64(len(s.src)))
	b.ReportAllocs()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs, bytes := ms.Mallocs, ms.TotalAlloc
	cpu0 := processCPU()
	b.ResetTimer()
	for b.Loop() {
		n, err := fn(s.src)
		if err != nil {
			b.Fatal(err)
		}
		if n != s.items {
			b.Fatalf("decoded %d items, want %d", n, s.items)
		}
	}
	b.StopTimer()
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&ms)
	total := float64(b.N) * float64(s.items)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/item")
	b.ReportMetric(float64(cpu)/total, "cpu-ns/item")
	b.ReportMetric(float64(ms.Mallocs-mallocs)/total, "allocs/item")
	b.ReportMetric(float64(ms.TotalAlloc-bytes)/total, "B/item")
}

// processCPU returns the user+system CPU time of the process in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkDecodeTraces(b *testing.B) {
	for _, s := range traceShapes {
		b.Run(fmt.Sprintf("shape=%s/dec=pdata", s.name), func(b *testing.B) {
			runPerItem(b, s, func(src []byte) (int, error) {
				td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(src)
				return td.SpanCount(), err
			})
		})
		b.Run(fmt.Sprintf("shape=%s/dec=pdatawalk", s.name), func(b *testing.B) {
			runPerItem(b, s, func(src []byte) (int, error) {
				td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(src)
				if err != nil {
					return 0, err
				}
				n, sum := pdataTraces(td)
				sink += sum
				return n, nil
			})
		})
		b.Run(fmt.Sprintf("shape=%s/dec=check", s.name), func(b *testing.B) {
			runPerItem(b, s, func(src []byte) (int, error) {
				r, err := otlpdecode.CheckTraces(src, nil)
				return r.Items, err
			})
		})
		b.Run(fmt.Sprintf("shape=%s/dec=decode", s.name), func(b *testing.B) {
			t := newTracesWalk()
			runPerItem(b, s, t.walk)
		})
	}
}

func BenchmarkDecodeMetrics(b *testing.B) {
	s := metricsShape
	b.Run(fmt.Sprintf("shape=%s/dec=pdata", s.name), func(b *testing.B) {
		runPerItem(b, s, func(src []byte) (int, error) {
			md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(src)
			return md.DataPointCount(), err
		})
	})
	b.Run(fmt.Sprintf("shape=%s/dec=pdatawalk", s.name), func(b *testing.B) {
		runPerItem(b, s, func(src []byte) (int, error) {
			md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(src)
			if err != nil {
				return 0, err
			}
			n, sum := pdataMetrics(md)
			sink += sum
			return n, nil
		})
	})
	b.Run(fmt.Sprintf("shape=%s/dec=check", s.name), func(b *testing.B) {
		runPerItem(b, s, func(src []byte) (int, error) {
			r, err := otlpdecode.CheckMetrics(src, nil)
			return r.Items, err
		})
	})
	b.Run(fmt.Sprintf("shape=%s/dec=decode", s.name), func(b *testing.B) {
		t := newMetricsWalk()
		runPerItem(b, s, t.walk)
	})
}

func BenchmarkDecodeLogs(b *testing.B) {
	s := logsShape
	b.Run(fmt.Sprintf("shape=%s/dec=pdata", s.name), func(b *testing.B) {
		runPerItem(b, s, func(src []byte) (int, error) {
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(src)
			return ld.LogRecordCount(), err
		})
	})
	b.Run(fmt.Sprintf("shape=%s/dec=pdatawalk", s.name), func(b *testing.B) {
		runPerItem(b, s, func(src []byte) (int, error) {
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(src)
			if err != nil {
				return 0, err
			}
			n, sum := pdataLogs(ld)
			sink += sum
			return n, nil
		})
	})
	b.Run(fmt.Sprintf("shape=%s/dec=check", s.name), func(b *testing.B) {
		runPerItem(b, s, func(src []byte) (int, error) {
			r, err := otlpdecode.CheckLogs(src, nil)
			return r.Items, err
		})
	})
	b.Run(fmt.Sprintf("shape=%s/dec=decode", s.name), func(b *testing.B) {
		t := newLogsWalk()
		runPerItem(b, s, t.walk)
	})
}
