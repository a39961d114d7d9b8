package interop

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kafkareceiver"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/testdata"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// processUsage is the CPU time (user + system) the process has used and
// its minor page faults (a fault on first touch of fresh memory).
func processUsage(b *testing.B) (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Minflt
}

// nopSink is the storage.Sink counterpart of the nop consumer the
// Collector's side is given: it counts the items and signals once all are
// there, and does nothing else (no lock, no wake-up per record), so that
// both sides end on the same event at the same cost.
type nopSink struct {
	total int64
	got   atomic.Int64
	all   chan struct{}
}

func (s *nopSink) Write(_ context.Context, _ storage.Signal, _ []byte, items int) error {
	if s.got.Add(int64(items)) == s.total {
		close(s.all)
	}
	return nil
}

func (s *nopSink) Close() error { return nil }

// BenchmarkKafkaConsumeCPU: the CPU the process spends per span consuming
// the same topic to the end, for otlp-lite's consumer (handler validation,
// a sink that only counts) and for the Collector's kafkareceiver v0.155.0
// (pdata decoding, a nop consumer that only counts), each from the start
// in a new group; the metric ratio is otlp-lite's CPU over the Collector's,
// and throughput-ratio otlp-lite's spans per second (wall time) over the
// Collector's.
// Like with like: each side's window starts with a collected heap whose
// free pages are already returned to the OS (debug.FreeOSMemory), so each
// side pays for the memory it uses and for nothing else. With only a
// collection between the sides, the background scavenger returned the
// Collector side's garbage (it allocates about 1200 objects per record)
// to the OS during otlp-lite's window, on otlp-lite's time. Each side
// still faults in the fresh pages its own buffers land on (the minflt
// metrics), alike.
// 400,000 spans per side and iteration amortise the start of each side
// (joining the group, the first fetch). Each side runs under a pprof label (side=lite or
// side=collector) so that a -cpuprofile splits with -tagfocus. With
// OTLP_LITE_KAFKA_BROKERS (make kafka-test starts one) the broker is a
// separate process; with the in-process kfake its CPU is counted on both
// sides alike, which pulls the ratio towards 1. lite-minflt/op and
// collector-minflt/op are each side's minor page faults (first touches of
// fresh memory, e.g. fetch buffers the scavenger returned to the OS). The
// runtime's background work (GC mark workers, the scavenger) carries no
// label: a -tagfocus split leaves it out, the CPU metrics count it.
func BenchmarkKafkaConsumeCPU(b *testing.B) {
	const (
		records  = 4000
		spansPer = 100
	)
	brokers, _, sfx := kafkaForTest(b)
	topic := "bench_spans" + sfx
	td := testdata.GenerateTraces(spansPer)
	validIDs(td)
	value, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		b.Fatal(err)
	}
	// Uncompressed, as the Collector's kafkaexporter and otlp-lite produce
	// by default: the consumers' CPU is then their own, not the codec's.
	pcl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		b.Fatal(err)
	}
	var failed atomic.Pointer[error]
	for range records {
		pcl.Produce(context.Background(), &kgo.Record{Topic: topic, Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Store(&err)
			}
		})
	}
	if err := pcl.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	pcl.Close()
	if err := failed.Load(); err != nil {
		b.Fatalf("cannot produce the records: %v", *err)
	}
	total := int64(records * spansPer)
	quiet := slog.New(slog.DiscardHandler)

	var liteCPU, collCPU time.Duration
	// Wall time of each side's window, for throughput: on a shared
	// machine it measures the neighbours too, so only its ratio (both
	// sides alternate within one run) is worth reading.
	var liteWall, collWall time.Duration
	var liteFlt, collFlt int64
	// Each side runs with its own pprof label (inherited by every
	// goroutine its client starts), so that -cpuprofile can be split with
	// -tagfocus side=lite or side=collector.
	liteLabels := pprof.WithLabels(context.Background(), pprof.Labels("side", "lite"))
	collLabels := pprof.WithLabels(context.Background(), pprof.Labels("side", "collector"))
	defer pprof.SetGoroutineLabels(context.Background())
	for i := range b.N {
		// Each side starts with a collected heap, its free pages returned
		// to the OS: the garbage the other left is neither collected nor
		// scavenged on its time.
		debug.FreeOSMemory()
		pprof.SetGoroutineLabels(liteLabels)
		// otlp-lite.
		sink := &nopSink{total: total, all: make(chan struct{})}
		h := handler.New(handler.Config{Sink: sink, Logger: quiet})
		c, err := kafkasource.NewConsumer(kafkasource.ConsumerConfig{Brokers: brokers, Group: fmt.Sprintf("bench-lite%s-%d", sfx, i), Pipeline: h.Pipeline(), Logger: quiet,
			Topics: map[otlp.Signal]string{otlp.Traces: topic}})
		if err != nil {
			b.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		start, flt := processUsage(b)
		wallStart := time.Now()
		go func() { done <- c.Run(ctx) }()
		select {
		case <-sink.all:
		case <-time.After(2 * time.Minute):
			b.Fatalf("otlp-lite's consumer stored %d of %d spans", sink.got.Load(), total)
		}
		end, endFlt := processUsage(b)
		liteWall += time.Since(wallStart)
		liteCPU += end - start
		liteFlt += endFlt - flt
		stop()
		<-done

		debug.FreeOSMemory()
		pprof.SetGoroutineLabels(collLabels)
		// The Collector's kafkareceiver.
		f := kafkareceiver.NewFactory()
		cfg := f.CreateDefaultConfig().(*kafkareceiver.Config)
		cfg.Brokers = brokers
		cfg.GroupID = fmt.Sprintf("bench-coll%s-%d", sfx, i)
		cfg.InitialOffset = "earliest"
		cfg.Traces.Topics = []string{topic}
		var got atomic.Int64
		all := make(chan struct{})
		next, _ := consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
			if got.Add(int64(td.SpanCount())) == total {
				close(all)
			}
			return nil
		})
		r, err := f.CreateTraces(context.Background(), receivertest.NewNopSettings(component.MustNewType("kafka")), cfg, next)
		if err != nil {
			b.Fatal(err)
		}
		start, flt = processUsage(b)
		wallStart = time.Now()
		if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
			b.Fatal(err)
		}
		select {
		case <-all:
		case <-time.After(2 * time.Minute):
			b.Fatalf("the Collector's receiver consumed %d of %d spans", got.Load(), total)
		}
		end, endFlt = processUsage(b)
		collWall += time.Since(wallStart)
		collCPU += end - start
		collFlt += endFlt - flt
		r.Shutdown(context.Background())
	}
	spans := float64(total) * float64(b.N)
	b.ReportMetric(float64(liteCPU.Nanoseconds())/spans, "lite-cpu-ns/span")
	b.ReportMetric(float64(collCPU.Nanoseconds())/spans, "collector-cpu-ns/span")
	b.ReportMetric(float64(liteCPU)/float64(collCPU), "ratio")
	b.ReportMetric(spans/liteWall.Seconds(), "lite-spans/s")
	b.ReportMetric(spans/collWall.Seconds(), "collector-spans/s")
	b.ReportMetric(collWall.Seconds()/liteWall.Seconds(), "throughput-ratio")
	b.ReportMetric(float64(liteFlt)/float64(b.N), "lite-minflt/op")
	b.ReportMetric(float64(collFlt)/float64(b.N), "collector-minflt/op")
}
