package interop

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	vmetrics "github.com/VictoriaMetrics/metrics"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// Tests of the Kafka source against an attacker who can write to its
// topics: whatever they write, memory, disk and the log stay bounded and
// the partition keeps moving (the records after the hostile ones are
// stored and committed).

// hostileConsumer is a kafkasource.Consumer over a disk store and a dead-letter
// store, running until stop.
type hostileConsumer struct {
	set       *vmetrics.Set
	sink      *countingSink
	dataDir   string
	deadDir   string
	log       *syncBuffer
	stopOnce  sync.Once
	stopFn    func()
	ran       chan error
	store, dl *disk.Store
}

// startHostileConsumer consumes topic as traces with the handler and
// consumer configuration changed by hcfg and ccfg (either may be nil).
func startHostileConsumer(t *testing.T, brokers []string, topic string, hcfg func(*handler.Config), ccfg func(*kafkasource.ConsumerConfig)) *hostileConsumer {
	t.Helper()
	dir := t.TempDir()
	hc := &hostileConsumer{set: vmetrics.NewSet(), dataDir: filepath.Join(dir, "data"), deadDir: filepath.Join(dir, "dead"), log: &syncBuffer{}, ran: make(chan error, 1)}
	var err error
	if hc.store, err = disk.Open(hc.dataDir, disk.Options{}); err != nil {
		t.Fatal(err)
	}
	if hc.dl, err = disk.Open(hc.deadDir, disk.Options{}); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(hc.log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	hc.sink = newCountingSink(hc.store)
	h := handler.Config{Sink: hc.sink, Metrics: hc.set, Logger: logger}
	if hcfg != nil {
		hcfg(&h)
	}
	cfg := kafkasource.ConsumerConfig{Brokers: brokers, Pipeline: handler.New(h).Pipeline(), DeadLetter: hc.dl, Metrics: hc.set, Logger: logger,
		Group: "hostile", Topics: map[otlp.Signal]string{otlp.Traces: topic}}
	if ccfg != nil {
		ccfg(&cfg)
	}
	c, err := kafkasource.NewConsumer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hc.stopFn = cancel
	go func() { hc.ran <- c.Run(ctx) }()
	t.Cleanup(func() { hc.stop(t) })
	return hc
}

// stop ends the consumer and closes the stores (once).
func (hc *hostileConsumer) stop(t *testing.T) {
	hc.stopOnce.Do(func() {
		hc.stopFn()
		if err := <-hc.ran; err != nil {
			t.Error(err)
		}
		if err := hc.store.Close(); err != nil {
			t.Error(err)
		}
		if err := hc.dl.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("consumer log:\n%s", hc.log.String())
		}
	})
}

// heapPeak samples the memory of the Go heap's objects and of goroutine
// stacks every millisecond until stop is called, and returns the peak.
// runtime/metrics reads without stopping the world; a decompression or a
// parse large enough to matter lives far longer than a millisecond. The
// collector runs at GOGC=10 meanwhile, so that garbage (which the default
// GOGC=100 lets grow to the size of the live heap, itself large after
// earlier tests in this process) does not hide what is live.
func heapPeak() (stop func() uint64) {
	old := debug.SetGCPercent(10)
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	var peak atomic.Uint64
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(samples)
			if v := samples[0].Value.Uint64() + samples[1].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(quit)
		<-done
		debug.SetGCPercent(old)
		return peak.Load()
	}
}

// liveHeap is the heap in use after a collection (two: the first moves
// sync.Pool contents to the victim cache, the second frees them).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// bombCompressor hands franz-go's producer a prepared "compressed" records
// section instead of compressing: the producer frames it as a valid batch
// (length, CRC, codec attribute), so the broker accepts it and the
// consumer has to decompress it.
type bombCompressor struct {
	bomb  []byte
	codec kgo.CompressionCodecType
}

func (b bombCompressor) Compress(_ *bytes.Buffer, _ []byte, _ ...kgo.CompressFlag) ([]byte, kgo.CompressionCodecType) {
	return b.bomb, b.codec
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// compressZeros compresses n zero bytes with w, streaming: no n-byte
// buffer is ever held.
func compressZeros(t *testing.T, w io.WriteCloser, n int64) {
	t.Helper()
	if _, err := io.CopyN(w, zeroReader{}, n); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// bombs returns, by codec, a records section that decompresses to far
// more than kafkasource.DefaultMaxBatchBytes: 4 GiB of zstd (a streamed frame,
// no content size to refuse it by), 512 MiB of gzip (deflate's ratio is
// at most about 1:1000), 192 MiB of lz4 (1:255), and a snappy block whose
// header claims 2 GiB.
func bombs(t *testing.T) map[string]bombCompressor {
	t.Helper()
	out := map[string]bombCompressor{}
	var zb bytes.Buffer
	zw, err := zstd.NewWriter(&zb, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	compressZeros(t, zw, 4<<30)
	out["zstd"] = bombCompressor{zb.Bytes(), kgo.CodecZstd}
	var gb bytes.Buffer
	gw, err := gzip.NewWriterLevel(&gb, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	compressZeros(t, gw, 512<<20)
	out["gzip"] = bombCompressor{gb.Bytes(), kgo.CodecGzip}
	var lb bytes.Buffer
	lw := lz4.NewWriter(&lb)
	compressZeros(t, lw, 192<<20)
	out["lz4"] = bombCompressor{lb.Bytes(), kgo.CodecLz4}
	// Snappy's block format: the decoded length as a uvarint, then
	// elements; a few literal bytes follow the lie.
	sb := binary.AppendUvarint(nil, 2<<30)
	sb = append(sb, 0x0c, 'h', 'e', 'l', 'l', 'o')
	out["snappy"] = bombCompressor{sb, kgo.CodecSnappy}
	return out
}

// produceTo writes recs to partition 0 of their topic, with opts.
func produceTo(t *testing.T, brokers []string, recs []*kgo.Record, opts ...kgo.Opt) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(64 << 20)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// bigBrokers is an in-process cluster whose brokers take records up to
// 64 MiB (Kafka's default is 1 MiB).
func bigBrokers(t *testing.T) []string {
	return newKfake(t, kfake.GroupMinSessionTimeout(time.Second), kfake.BrokerConfigs(map[string]string{"message.max.bytes": "67108864"}))
}

// TestKafkaConsumeDecompressionBomb: a record batch compressed with each
// of Kafka's codecs that decompresses to gigabytes sits between valid
// records on one partition. franz-go's decompressor bounds a batch at
// 1 GiB and then stops the partition for good; the consumer's own
// (storage/kafka/consume_decompress.go) bounds it at
// kafkasource.DefaultMaxBatchBytes (64 MiB), and the consumer skips such a
// batch, logging and counting it. The heap never holds more than a few
// times the bound, every valid record is stored, and the group's offsets
// reach the end of the partition.
func TestKafkaConsumeDecompressionBomb(t *testing.T) {
	brokers := bigBrokers(t)
	const topic = "bomb_spans"
	codecs := []string{"zstd", "gzip", "lz4", "snappy"}
	if c := os.Getenv("BOMB_CODECS"); c != "" {
		codecs = strings.Split(c, ",")
	}
	bs := bombs(t)
	good := 0
	produceGood := func() {
		produceTo(t, brokers, []*kgo.Record{{Topic: topic, Partition: 0, Value: seqRequest(good, 2)}})
		good++
	}
	produceGood()
	for _, codec := range codecs {
		b := bs[codec]
		// A record larger than the bomb, so franz-go keeps the
		// "compressed" (shorter) form.
		produceTo(t, brokers, []*kgo.Record{{Topic: topic, Partition: 0, Value: randomBytes(len(b.bomb) + 1024)}}, kgo.WithCompressor(b))
		produceGood()
	}
	bs = nil
	base := liveHeap()
	peak := heapPeak()
	hc := startHostileConsumer(t, brokers, topic, nil, nil)
	hc.sink.waitItems(t, [otlp.MaxSignal + 1]int{storage.Traces: 2 * good}, 120*time.Second)
	waitMetric(t, hc.set, `otlplite_kafka_consume_skipped_batches_total{topic="`+topic+`"}`, len(codecs))
	waitCommitted(t, brokers, "hostile", []string{topic}, 60*time.Second)
	top := peak()
	hc.stop(t)
	t.Logf("heap before consuming %d MiB, peak while consuming %d MiB (batch bound %d MiB)", base>>20, top>>20, kafkasource.DefaultMaxBatchBytes>>20)
	// A batch being decompressed grows its buffer by doubling up to
	// twice the bound before it is refused, and the buffers it outgrew
	// are garbage not yet collected: each codec alone measured a peak of
	// 3.5 to 4 times the bound (snappy none: its header is checked
	// first), the four in a row up to 7.5 times: the collector lets the
	// heap grow to twice what was live at its last cycle, which may have
	// run while a doubled buffer was live. With franz-go's bound, 1 GiB,
	// the zstd bomb alone would take gigabytes.
	if limit := base + 12*kafkasource.DefaultMaxBatchBytes; top > limit {
		t.Errorf("heap peaked at %d MiB while consuming the bombs, want under %d MiB", top>>20, limit>>20)
	}
	if got := metricValue(hc.set, `otlplite_kafka_consume_dead_letter_records_total{topic="`+topic+`"}`); got != 0 {
		t.Errorf("%d records dead-lettered, want none (the bombs are skipped, the rest valid)", got)
	}
	logs := hc.log.String()
	if n := strings.Count(logs, "decompresses to more than the batch limit"); n != len(codecs) {
		t.Errorf("%d skipped-batch log lines, want %d:\n%s", n, len(codecs), logs)
	}
}

// TestKafkaConsumeOversizedRecord: a record larger than the receiver's
// message limit (handler.Config.MaxRecvMsgSize, serve's
// -grpc-max-recv-msg-size) is dead-lettered as it was read and logged with
// its topic, partition and offset; the records after it are stored and the
// partition's offset reaches its end.
func TestKafkaConsumeOversizedRecord(t *testing.T) {
	brokers := bigBrokers(t)
	const topic = "big_spans"
	const limit = 64 << 10
	big := randomBytes(limit + 1)
	produceTo(t, brokers, []*kgo.Record{{Topic: topic, Value: seqRequest(0, 2)}, {Topic: topic, Value: big}, {Topic: topic, Value: seqRequest(1, 2)}})
	hc := startHostileConsumer(t, brokers, topic, func(c *handler.Config) { c.MaxRecvMsgSize = limit }, nil)
	hc.sink.waitItems(t, [otlp.MaxSignal + 1]int{storage.Traces: 4}, 60*time.Second)
	waitMetric(t, hc.set, `otlplite_kafka_consume_dead_letter_records_total{topic="`+topic+`"}`, 1)
	waitCommitted(t, brokers, "hostile", []string{topic}, 60*time.Second)
	hc.stop(t)
	logs := hc.log.String()
	if !strings.Contains(logs, "larger than the 65536-byte message limit") || !strings.Contains(logs, "offset=1") || !strings.Contains(logs, "topic="+topic) {
		t.Errorf("want a dead-letter line naming the limit, topic and offset; log:\n%s", logs)
	}
	var dead [][]byte
	if err := disk.Scan(hc.deadDir, storage.Traces, func(r disk.Record) error {
		dead = append(dead, bytes.Clone(r.Data))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(dead) != 1 || !bytes.Equal(dead[0], big) {
		t.Errorf("dead letters: %d records, want the oversized one as read", len(dead))
	}
}

// TestKafkaConsumeHostileJSON: OTLP/JSON records built to exhaust a
// parser (arrays nested a million deep, AnyValues nested a hundred
// thousand deep, a million empty resource entries, 200,000 minimal
// spans): the deep ones are dead-lettered, the wide ones (valid OTLP) are
// stored whole, memory stays bounded, nothing crashes, and the partition
// moves on to the valid protobuf record after them (encoding detected per
// record).
func TestKafkaConsumeHostileJSON(t *testing.T) {
	brokers := bigBrokers(t)
	const topic = "json_spans"
	deepArrays := []byte(`{"resourceSpans":` + strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000) + `}`)
	var deepAny strings.Builder
	deepAny.WriteString(`{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":`)
	for range 100_000 {
		deepAny.WriteString(`{"arrayValue":{"values":[`)
	}
	deepAny.WriteString(`{"intValue":"1"}`)
	for range 100_000 {
		deepAny.WriteString(`]}}`)
	}
	deepAny.WriteString(`}]},"scopeSpans":[]}]}`)
	manyEmpty := []byte(`{"resourceSpans":[` + strings.TrimSuffix(strings.Repeat(`{},`, 1_000_000), ",") + `]}`)
	var manySpans strings.Builder
	manySpans.WriteString(`{"resourceSpans":[{"scopeSpans":[{"spans":[`)
	const spans = 200_000
	for i := range spans {
		if i > 0 {
			manySpans.WriteByte(',')
		}
		manySpans.WriteString(`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"s"}`)
	}
	manySpans.WriteString(`]}]}]}`)
	hostile := map[string][]byte{"deep arrays": deepArrays, "deep AnyValue": []byte(deepAny.String()), "many empty resources": manyEmpty, "many spans": []byte(manySpans.String())}
	var recs []*kgo.Record
	for _, v := range hostile {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: v})
	}
	recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: seqRequest(7, 3)})
	produceTo(t, brokers, recs)
	recs, manyEmpty, deepArrays = nil, nil, nil
	hostile = nil
	base := liveHeap()
	peak := heapPeak()
	hc := startHostileConsumer(t, brokers, topic, nil, nil)
	hc.sink.waitItems(t, [otlp.MaxSignal + 1]int{storage.Traces: spans + 3}, 120*time.Second)
	waitCommitted(t, brokers, "hostile", []string{topic}, 120*time.Second)
	top := peak()
	hc.stop(t)
	stored := metricValue(hc.set, `otlplite_kafka_consume_records_total{topic="`+topic+`"}`)
	dead := metricValue(hc.set, `otlplite_kafka_consume_dead_letter_records_total{topic="`+topic+`"}`)
	t.Logf("5 records: %d stored, %d dead-lettered; heap %d MiB before, peak %d MiB", stored, dead, base>>20, top>>20)
	for line := range strings.Lines(hc.log.String()) {
		if strings.Contains(line, "dead-lettered") {
			t.Logf("%.400s", line)
		}
	}
	// The nesting is refused (OTLP/JSON has no arrays of arrays; the
	// AnyValue depth is bounded), the wide records are valid OTLP.
	if stored != 3 || dead != 2 {
		t.Errorf("%d stored, %d dead-lettered; want 3 (the wide ones and the valid protobuf one) and 2 (the deep ones)", stored, dead)
	}
	// The largest record is about 18 MB of JSON: its protobuf form and
	// the decoder's state may take a few times that, not gigabytes.
	if limit := base + 512<<20; top > limit {
		t.Errorf("heap and stacks peaked at %d MiB, want under %d MiB", top>>20, limit>>20)
	}
}

// TestKafkaConsumeManyTenants: 10,000 records each naming a different
// tenant in the tenant header, and records naming tenants no receiver
// would accept (too long, control characters): each valid name is kept
// with its record, an invalid one is stored without a tenant, and the
// consumer's state (its metric series, its heap) does not grow with the
// number of tenants.
func TestKafkaConsumeManyTenants(t *testing.T) {
	brokers := newKfake(t)
	const topic = "tenant_spans"
	const tenants = 10_000
	var recs []*kgo.Record
	for i := range tenants {
		recs = append(recs, &kgo.Record{Topic: topic, Value: seqRequest(i, 1),
			Headers: []kgo.RecordHeader{{Key: kafka.TenantHeader, Value: []byte("tenant-" + strings.Repeat("x", i%50) + "-" + strconv.Itoa(i))}}})
	}
	bad := [][]byte{[]byte(strings.Repeat("a", 10_000)), []byte("evil\x00tenant"), []byte("../../etc/passwd"), {}}
	for i, name := range bad {
		recs = append(recs, &kgo.Record{Topic: topic, Value: seqRequest(tenants+i, 1), Headers: []kgo.RecordHeader{{Key: kafka.TenantHeader, Value: name}}})
	}
	// The first hundred, then the rest: the series after each.
	const first = 100
	produceTo(t, brokers, recs[:first], kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	hc := startHostileConsumer(t, brokers, topic, nil, nil)
	series := func() int {
		var b bytes.Buffer
		hc.set.WritePrometheus(&b)
		return bytes.Count(b.Bytes(), []byte("\n"))
	}
	hc.sink.waitItems(t, [otlp.MaxSignal + 1]int{storage.Traces: first}, 60*time.Second)
	waitCommitted(t, brokers, "hostile", []string{topic}, 60*time.Second)
	early := series()
	produceTo(t, brokers, recs[first:], kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	recs = nil
	hc.sink.waitItems(t, [otlp.MaxSignal + 1]int{storage.Traces: tenants + len(bad)}, 120*time.Second)
	waitCommitted(t, brokers, "hostile", []string{topic}, 60*time.Second)
	late := series()
	hc.stop(t)
	// Lag gauges come per partition as partitions deliver; tenants add none.
	if late > early+2*kfakePartitions {
		t.Errorf("metric lines grew from %d to %d over %d tenants", early, late, tenants)
	}
	names := map[string]int{}
	if err := disk.Scan(hc.dataDir, storage.Traces, func(r disk.Record) error {
		names[r.Tenant]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The valid names, and no tenant (otlp.DefaultTenant) for the
	// four bad ones.
	if len(names) != tenants+1 || names[otlp.DefaultTenant] != len(bad) {
		t.Errorf("stored %d distinct tenants, %d records without one; want %d and %d", len(names), names[otlp.DefaultTenant], tenants+1, len(bad))
	}
	if n := strings.Count(hc.log.String(), "invalid tenant header"); n == 0 {
		t.Errorf("no log line about the invalid tenant headers")
	}
}

// dirSize is the total size of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKafkaConsumeDeadLetterFlood: serve -kafka-consume with a 4 MiB
// -kafka-consume-dead-letter-max-bytes reads 320 records of 64 KiB that
// are not OTLP (20 MiB). Every one is counted and dead-lettered, the
// dead-letter store stays within its bound (plus the one segment being
// written, as the disk store's MaxBytes allows), and the log holds at
// most ten lines about them per ten seconds, with the count of those not
// logged, so that neither the store nor the log can fill the disk.
func TestKafkaConsumeDeadLetterFlood(t *testing.T) {
	brokers := bigBrokers(t)
	const topic = "flood_spans"
	const n, size = 320, 64 << 10
	var recs []*kgo.Record
	for range n {
		// Ten 0xff bytes: a varint that never ends, so no protobuf.
		v := append(bytes.Repeat([]byte{0xff}, 10), randomBytes(size-10)...)
		recs = append(recs, &kgo.Record{Topic: topic, Value: v})
	}
	produceTo(t, brokers, recs, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	recs = nil
	const maxBytes = 4 << 20
	dataDir, admin := t.TempDir(), freeAddr(t)
	start := time.Now()
	srv := startServer(t, dataDir, "-admin-addr", admin, "-kafka-consume", strings.Join(brokers, ","),
		"-kafka-consume-topic-traces", topic, "-kafka-consume-topic-metrics", "", "-kafka-consume-topic-logs", "", "-kafka-consume-topic-profiles", "",
		"-kafka-consume-session-timeout", "2s", "-kafka-consume-dead-letter-max-bytes", strconv.Itoa(maxBytes))
	waitScrape(t, admin, `otlplite_kafka_consume_dead_letter_records_total{topic="`+topic+`"}`, strconv.Itoa(n))
	waitCommitted(t, brokers, kafkasource.DefaultConsumerGroup, []string{topic}, 60*time.Second)
	elapsed := time.Since(start)
	// Retention runs as segments fill; the last may still be written.
	deadDir := filepath.Join(dataDir, "kafka-dead-letter")
	const segment = 1 << 20 // the store's segment size for this bound
	deadline := time.Now().Add(30 * time.Second)
	for dirSize(t, deadDir) > maxBytes+segment+64<<10 {
		if time.Now().After(deadline) {
			t.Fatalf("dead-letter store holds %d bytes, want at most %d (bound) + %d (the segment being written)", dirSize(t, deadDir), maxBytes, segment)
		}
		time.Sleep(50 * time.Millisecond) // polling
	}
	srv.stop()
	total := dirSize(t, deadDir)
	logs := srv.stderr.String()
	lines := strings.Count(logs, "not a valid OTLP request")
	windows := 1 + int(elapsed/(10*time.Second))
	all := strings.Count(logs, "\n")
	t.Logf("%d records of %d KiB dead-lettered in %v; store %d KiB (bound %d KiB); %d dead-letter log lines, %d in all", n, size>>10, elapsed.Round(time.Millisecond), total>>10, maxBytes>>10, lines, all)
	if lines > 10*windows {
		t.Errorf("%d dead-letter log lines over %v, want at most 10 per 10 s", lines, elapsed)
	}
	// Nothing else logs a line per record (retention logs one per
	// segment deleted: 20 MiB in 1 MiB segments).
	if all > 10*windows+60 {
		t.Errorf("%d log lines for %d bad records", all, n)
	}
}

// TestKafkaConsumeManyLargeBatches: forty batches that each decompress to
// 20 MiB, under the per-batch bound, arrive in one fetch (together they
// are compressed to a few kilobytes). franz-go would decompress them all,
// 800 MiB, before returning any record; the consumer's budget on
// decompressed bytes held (MaxDecompressedBytes, here 64 MiB) makes it
// stop part way and fetch the rest once the first are stored. Every
// record is handled (these are zeros, not OTLP: counted as dead letters)
// and the heap stays near the budget.
func TestKafkaConsumeManyLargeBatches(t *testing.T) {
	brokers := bigBrokers(t)
	const topic = "wide_spans"
	const n, size = 40, 20 << 20
	zeros := make([]byte, size)
	for range n {
		produceTo(t, brokers, []*kgo.Record{{Topic: topic, Partition: 0, Value: zeros}}, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	}
	zeros = nil
	base := liveHeap()
	peak := heapPeak()
	hc := startHostileConsumer(t, brokers, topic, nil, func(c *kafkasource.ConsumerConfig) {
		c.MaxBatchBytes, c.MaxDecompressedBytes = 32<<20, 64<<20
		c.DeadLetter = nil // 800 MiB of zeros need not reach the disk
	})
	waitMetric(t, hc.set, `otlplite_kafka_consume_dead_letter_records_total{topic="`+topic+`"}`, n)
	waitCommitted(t, brokers, "hostile", []string{topic}, 120*time.Second)
	top := peak()
	hc.stop(t)
	throttled := metricValue(hc.set, "otlplite_kafka_consume_decompress_throttled_total")
	t.Logf("%d batches of %d MiB: heap %d MiB before, peak %d MiB; fetches throttled %d times", n, size>>20, base>>20, top>>20, throttled)
	if throttled == 0 {
		t.Error("the decompression budget never throttled a fetch")
	}
	// Held: the budget and one batch past it, twice over if a fetch was
	// being decompressed when the count restarted, and the garbage the
	// collector has not reclaimed yet; without the budget, 800 MiB.
	if limit := base + 448<<20; top > limit {
		t.Errorf("heap peaked at %d MiB, want under %d MiB", top>>20, limit>>20)
	}
}

// TestKafkaConsumeBombAfterManyRecords: the skip of a batch too large to
// decompress waits for every record before it, even when those take
// several polls (MaxPollRecords 3, 10 records, with franz-go repeating
// the batch's error with each part): none is lost, none after it either,
// and the partition's offset reaches its end.
func TestKafkaConsumeBombAfterManyRecords(t *testing.T) {
	brokers := bigBrokers(t)
	const topic = "bomb_late_spans"
	var before, after []*kgo.Record
	for i := range 10 {
		before = append(before, &kgo.Record{Topic: topic, Partition: 0, Value: seqRequest(i, 1)})
		after = append(after, &kgo.Record{Topic: topic, Partition: 0, Value: seqRequest(100+i, 1)})
	}
	produceTo(t, brokers, before)
	var zb bytes.Buffer
	zw, err := zstd.NewWriter(&zb, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	compressZeros(t, zw, 256<<20)
	bomb := bombCompressor{zb.Bytes(), kgo.CodecZstd}
	produceTo(t, brokers, []*kgo.Record{{Topic: topic, Partition: 0, Value: randomBytes(len(bomb.bomb) + 1024)}}, kgo.WithCompressor(bomb))
	produceTo(t, brokers, after)
	hc := startHostileConsumer(t, brokers, topic, nil, func(c *kafkasource.ConsumerConfig) { c.MaxPollRecords = 3 })
	hc.sink.waitItems(t, [otlp.MaxSignal + 1]int{storage.Traces: 20}, 60*time.Second)
	waitMetric(t, hc.set, `otlplite_kafka_consume_skipped_batches_total{topic="`+topic+`"}`, 1)
	waitCommitted(t, brokers, "hostile", []string{topic}, 60*time.Second)
	hc.stop(t)
	stored := scanStore(t, hc.dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	if len(stored) != 20 {
		t.Errorf("stored %d records, want the 10 before the bomb and the 10 after it", len(stored))
	}
}
