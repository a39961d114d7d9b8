package kafka_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/otlp-lite/otlp-lite/ingest"
	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpdecode"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// The tests against a real broker run when OTLP_LITE_KAFKA_BROKERS names
// one (`make kafka-test` starts it with scripts/kafka/start.sh):
//
//	OTLP_LITE_KAFKA_BROKERS       host:port of the PLAINTEXT listener
//	OTLP_LITE_KAFKA_SASL_BROKERS  host:port of the SASL_PLAINTEXT listener (user otlp/otlp-secret)
//	OTLP_LITE_KAFKA_DIR           the start.sh DIR: enables the broker stop/restart test
func brokers(t *testing.T) []string {
	t.Helper()
	b := os.Getenv("OTLP_LITE_KAFKA_BROKERS")
	if b == "" {
		t.Skip("OTLP_LITE_KAFKA_BROKERS not set; run `make kafka-test` for the tests against a real broker")
	}
	return strings.Split(b, ",")
}

// Protobuf builders for test requests.

func lenf(num int, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	b := binary.AppendUvarint(nil, uint64(num)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

// idResource is a top-level resource_* entry (ResourceSpans, ResourceMetrics
// and ResourceLogs all have `Resource resource = 1`) whose resource has one
// attribute test.id=id and nothing else: appended to any request it makes
// the request unique without adding items.
func idResource(id string) []byte {
	kv := lenf(1, lenf(1, []byte("test.id")), lenf(2, lenf(1, []byte(id))))
	return lenf(1, lenf(1, kv))
}

// span is a ResourceSpans with one span of the given trace id and name,
// padded to about size bytes.
func spanResource(traceID []byte, name string, size int) []byte {
	sp := lenf(2, lenf(1, traceID), lenf(2, []byte("spanid01")), lenf(5, []byte(name)),
		lenf(9, lenf(1, []byte("pad")), lenf(2, lenf(1, bytes.Repeat([]byte{'p'}, max(size-80, 0))))))
	return lenf(1, lenf(2, sp))
}

func payload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "otlp", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var checks = map[storage.Signal]func([]byte, *otlpdecode.Options) (otlpdecode.Result, error){
	storage.Traces:  otlpdecode.CheckTraces,
	storage.Metrics: otlpdecode.CheckMetrics,
	storage.Logs:    otlpdecode.CheckLogs,
}

func items(t testing.TB, signal storage.Signal, msg []byte) int {
	t.Helper()
	res, err := checks[signal](msg, nil)
	if err != nil {
		t.Fatalf("not a valid %v request: %v", signal, err)
	}
	return res.Items
}

// topics returns fresh topic names for one test, created with three
// partitions (the sink itself asks for auto-creation; creating them here
// makes the tests independent of the broker's auto.create setting).
// partitions is the partition count of the test topics.
const partitions = 3

func topics(t *testing.T, brokers []string) (tr, me, lo string) {
	t.Helper()
	suffix := fmt.Sprintf("%s_%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
	tr, me, lo = "otlp_spans_"+suffix, "otlp_metrics_"+suffix, "otlp_logs_"+suffix
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	for _, name := range []string{tr, me, lo} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic = name
		rt.NumPartitions = partitions
		rt.ReplicationFactor = 1
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("cannot create topics: %v", err)
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode != 0 {
			t.Fatalf("cannot create topic %s: error code %d", rt.Topic, rt.ErrorCode)
		}
	}
	return tr, me, lo
}

// consume reads topics from the start and passes each record to see until
// see returns true (it has found everything it looks for) or 60 s pass.
func consume(t *testing.T, brokers []string, see func(*kgo.Record) bool, topics ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("consume %s/%d: %v", topic, p, err)
			}
		})
		for _, r := range fs.Records() {
			if see(r) {
				return
			}
		}
	}
}

// open opens a sink for cfg. Unless the test sets its own ProduceTimeout,
// it waits up to 30 s for acknowledgements rather than the production
// default of 5 s: the first write to a topic just created on a broker just
// started (idempotent producer id, partition leaders) can take longer on a
// loaded CI machine, and these tests are about what is written, not when.
func open(t *testing.T, cfg kafka.Config) *kafka.Sink {
	t.Helper()
	if cfg.ProduceTimeout == 0 {
		cfg.ProduceTimeout = 30 * time.Second
	}
	s, err := kafka.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestProduceConsume: requests of every signal, written concurrently, are
// each one record, byte for byte, on their signal's topic.
func TestProduceConsume(t *testing.T) {
	bs := brokers(t)
	tr, me, lo := topics(t, bs)
	s := open(t, kafka.Config{Brokers: bs, TracesTopic: tr, MetricsTopic: me, LogsTopic: lo})
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	bases := map[storage.Signal][]byte{
		storage.Traces:  payload(t, "traces_all_fields.pb"),
		storage.Metrics: payload(t, "metrics_all_kinds.pb"),
		storage.Logs:    payload(t, "logs_all_fields.pb"),
	}
	topicOf := map[string]storage.Signal{tr: storage.Traces, me: storage.Metrics, lo: storage.Logs}
	const perSignal = 100
	want := map[string]storage.Signal{} // request → signal
	var wantItems [otlp.MaxSignal + 1]int
	var wg sync.WaitGroup
	var mu sync.Mutex
	for sig, base := range bases {
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < perSignal; i += 4 {
					msg := append(bytes.Clone(base), idResource(fmt.Sprintf("%v-%d", sig, i))...)
					n := items(t, sig, msg)
					if err := s.Write(context.Background(), sig, msg, n); err != nil {
						t.Errorf("Write %v #%d: %v", sig, i, err)
						return
					}
					mu.Lock()
					want[string(msg)] = sig
					wantItems[sig] += n
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var gotItems [otlp.MaxSignal + 1]int
	consume(t, bs, func(r *kgo.Record) bool {
		sig, ok := want[string(r.Value)]
		if !ok {
			t.Errorf("record on %s is not a request that was written, or a duplicate", r.Topic)
			return false
		}
		if topicOf[r.Topic] != sig {
			t.Errorf("%v request on topic %s", sig, r.Topic)
		}
		if r.Key != nil {
			t.Errorf("unkeyed sink wrote key %x", r.Key)
		}
		// Batches of an idempotent producer carry its producer id; others
		// have -1.
		if r.ProducerID < 0 {
			t.Errorf("record without a producer id: the producer is not idempotent")
		}
		delete(want, string(r.Value))
		gotItems[sig] += items(t, sig, r.Value)
		return len(want) == 0
	}, tr, me, lo)
	if len(want) != 0 {
		t.Errorf("%d acknowledged requests not found in Kafka", len(want))
	}
	for _, sig := range storage.Signals {
		if gotItems[sig] != wantItems[sig] {
			t.Errorf("%v: %d items in Kafka, %d written", sig, gotItems[sig], wantItems[sig])
		}
	}
}

// TestSplitAcrossMaxMessageBytes: a request over the limit arrives as
// several records, each within it, holding every resource once; a single
// resource over the limit is refused with ErrTooLarge and not stored.
func TestSplitAcrossMaxMessageBytes(t *testing.T) {
	bs := brokers(t)
	tr, me, lo := topics(t, bs)
	tests := []struct {
		name      string
		maxMsg    int
		resources int
		size      int
	}{
		{name: "small limit", maxMsg: 64 << 10, resources: 40, size: 10 << 10},
		// The default limit against the broker's default
		// message.max.bytes: a 3 MB request must get through.
		{name: "default limit", maxMsg: 0, resources: 30, size: 100 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t, kafka.Config{Brokers: bs, TracesTopic: tr, MetricsTopic: me, LogsTopic: lo, MaxMessageBytes: tt.maxMsg})
			var msg []byte
			want := map[string]bool{}
			for i := range tt.resources {
				rs := spanResource(bytes.Repeat([]byte{byte(i + 1)}, 16), fmt.Sprintf("%s-%d", tt.name, i), tt.size)
				want[string(rs)] = true
				msg = append(msg, rs...)
			}
			if err := s.Write(context.Background(), storage.Traces, msg, tt.resources); err != nil {
				t.Fatal(err)
			}
			limit := tt.maxMsg
			if limit == 0 {
				limit = kafka.DefaultMaxMessageBytes
			}
			records := 0
			consume(t, bs, func(r *kgo.Record) bool {
				if !bytes.Contains(r.Value, []byte(tt.name+"-")) {
					return false // the other subtest's
				}
				records++
				if len(r.Value) > limit {
					t.Errorf("record of %d bytes over the %d-byte limit", len(r.Value), limit)
				}
				for b := r.Value; len(b) > 0; {
					// Each resource is one field: tag, varint length, body.
					l, n := binary.Uvarint(b[1:])
					rs := b[:1+n+int(l)]
					if !want[string(rs)] {
						t.Fatalf("record holds a resource not written, or twice")
					}
					delete(want, string(rs))
					b = b[len(rs):]
				}
				return len(want) == 0
			}, tr)
			if min := len(msg)/limit + 1; records < min {
				t.Errorf("%d-byte request in %d records, want at least %d", len(msg), records, min)
			}
			if len(want) != 0 {
				t.Errorf("%d resources missing", len(want))
			}
			t.Logf("%d-byte request: %d records", len(msg), records)
		})
	}

	t.Run("one resource too large", func(t *testing.T) {
		s := open(t, kafka.Config{Brokers: bs, TracesTopic: tr, MetricsTopic: me, LogsTopic: lo, MaxMessageBytes: 64 << 10})
		msg := append(spanResource(bytes.Repeat([]byte{1}, 16), "fits", 1000), spanResource(bytes.Repeat([]byte{2}, 16), "too-large", 100<<10)...)
		err := s.Write(context.Background(), storage.Traces, msg, 2)
		if !errors.Is(err, kafka.ErrTooLarge) || errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrTooLarge only", err)
		}
	})
}

// TestPartitionTracesByID: every record holds the spans of one trace, is
// keyed by its trace id in hex (the Collector's key), and all records of a
// trace are in one partition, the one the Collector's partitioner picks.
func TestPartitionTracesByID(t *testing.T) {
	bs := brokers(t)
	tr, me, lo := topics(t, bs)
	s := open(t, kafka.Config{Brokers: bs, TracesTopic: tr, MetricsTopic: me, LogsTopic: lo, PartitionTracesByID: true})
	msg := payload(t, "traces_500x10.pb")
	total := items(t, storage.Traces, msg)
	// Twice: the second copy of each trace must follow the first into
	// the same partition.
	for range 2 {
		if err := s.Write(context.Background(), storage.Traces, msg, total); err != nil {
			t.Fatal(err)
		}
	}
	partOf := map[string]int32{}
	spans, records := 0, 0
	consume(t, bs, func(r *kgo.Record) bool {
		records++
		if len(r.Key) != 32 {
			t.Fatalf("record key %q, want a trace id in hex", r.Key)
		}
		if p, ok := partOf[string(r.Key)]; ok && p != r.Partition {
			t.Errorf("trace %x in partitions %d and %d", r.Key, p, r.Partition)
		}
		partOf[string(r.Key)] = r.Partition
		if want, err := kafka.Partition(kafka.HasherSaramaCompat, r.Key, partitions); err != nil || want != int(r.Partition) {
			t.Fatalf("trace %s in partition %d, the Collector's partitioner picks %d (%v)", r.Key, r.Partition, want, err)
		}
		spans += items(t, storage.Traces, r.Value)
		for _, id := range traceIDs(r.Value) {
			if hex.EncodeToString([]byte(id)) != string(r.Key) {
				t.Fatalf("span of trace %x in record keyed %x", id, r.Key)
			}
		}
		return spans >= 2*total
	}, tr)
	if spans != 2*total {
		t.Errorf("%d spans in Kafka, %d written", spans, 2*total)
	}
	parts := map[int32]bool{}
	for _, p := range partOf {
		parts[p] = true
	}
	t.Logf("%d traces, %d records, over %d partitions", len(partOf), records, len(parts))
	if len(parts) < 2 {
		t.Errorf("%d traces all in one partition: keys are not spreading", len(partOf))
	}
}

// traceIDs returns the trace_id of every span in a traces request, by a
// walk of the fixed OTLP nesting (request → 1 → 2 → 2 → 1).
func traceIDs(msg []byte) (ids []string) {
	var walk func(b []byte, path []int)
	walk = func(b []byte, path []int) {
		for len(b) > 0 {
			tag, n := binary.Uvarint(b)
			if n <= 0 {
				return
			}
			b = b[n:]
			var v []byte
			switch tag & 7 {
			case 0:
				_, m := binary.Uvarint(b)
				b = b[m:]
				continue
			case 1:
				b = b[8:]
				continue
			case 5:
				b = b[4:]
				continue
			case 2:
				l, m := binary.Uvarint(b)
				v, b = b[m:m+int(l)], b[m+int(l):]
			}
			if int(tag>>3) != path[0] {
				continue
			}
			if len(path) == 1 {
				ids = append(ids, string(v))
			} else {
				walk(v, path[1:])
			}
		}
	}
	walk(msg, []int{1, 2, 2, 1})
	return ids
}

// TestSASL: PLAIN and SCRAM authenticate; a wrong password is a retryable
// refusal.
func TestSASL(t *testing.T) {
	bs := brokers(t)
	sasl := os.Getenv("OTLP_LITE_KAFKA_SASL_BROKERS")
	if sasl == "" {
		t.Skip("OTLP_LITE_KAFKA_SASL_BROKERS not set")
	}
	tr, me, lo := topics(t, bs)
	msg := payload(t, "logs_all_fields.pb")
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			s := open(t, kafka.Config{Brokers: []string{sasl}, TracesTopic: tr, MetricsTopic: me, LogsTopic: lo,
				SASL: &kafka.SASL{Mechanism: mech, Username: "otlp", Password: "otlp-secret"}})
			if err := s.Write(context.Background(), storage.Logs, msg, items(t, storage.Logs, msg)); err != nil {
				t.Fatal(err)
			}
			bad := open(t, kafka.Config{Brokers: []string{sasl}, TracesTopic: tr, MetricsTopic: me, LogsTopic: lo,
				SASL: &kafka.SASL{Mechanism: mech, Username: "otlp", Password: "wrong"}, ProduceTimeout: 2 * time.Second})
			err := bad.Write(context.Background(), storage.Logs, msg, 1)
			if !errors.Is(err, storage.ErrUnavailable) {
				t.Fatalf("wrong password: err = %v, want ErrUnavailable", err)
			}
		})
	}
	records := 0
	consume(t, bs, func(*kgo.Record) bool { records++; return records == 3 }, lo)
	if records != 3 {
		t.Errorf("%d records from the authenticated writes, want 3", records)
	}
}

// TestBrokerRestart stops the broker under write load and starts it again,
// once with a controlled shutdown (SIGTERM) and once as a crash (SIGKILL):
// every Write that returned nil is in Kafka, every other one failed with a
// retryable error, and writes succeed again after the restart.
func TestBrokerRestart(t *testing.T) {
	t.Run("stopped", func(t *testing.T) { testBrokerRestart(t) })
	t.Run("killed", func(t *testing.T) { testBrokerRestart(t, "-9") })
}

func testBrokerRestart(t *testing.T, stopArgs ...string) {
	bs := brokers(t)
	dir := os.Getenv("OTLP_LITE_KAFKA_DIR")
	if dir == "" {
		t.Skip("OTLP_LITE_KAFKA_DIR not set: cannot stop and restart the broker")
	}
	_, port, err := net.SplitHostPort(bs[0])
	if err != nil {
		t.Fatal(err)
	}
	script := func(name string, args ...string) {
		cmd := exec.Command(filepath.Join("..", "..", "scripts", "kafka", name), args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	t.Cleanup(func() { script("start.sh", dir, port) }) // leave it running for the other tests

	tr, me, lo := topics(t, bs)
	s := open(t, kafka.Config{Brokers: bs, TracesTopic: tr, MetricsTopic: me, LogsTopic: lo, ProduceTimeout: 2 * time.Second})
	base := payload(t, "traces_all_fields.pb")
	n := items(t, storage.Traces, base)

	var (
		mu        sync.Mutex
		acked     = map[string]bool{}
		refused   atomic.Int64
		phase     atomic.Int32 // 0 before the stop, 1 down, 2 restarted
		afterUp   atomic.Int64
		seq       atomic.Int64
		stop      = make(chan struct{})
		wg        sync.WaitGroup
		badErrors atomic.Int64
	)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				msg := append(bytes.Clone(base), idResource(fmt.Sprint(seq.Add(1)))...)
				err := s.Write(context.Background(), storage.Traces, msg, n)
				switch {
				case err == nil:
					mu.Lock()
					acked[string(msg)] = true
					mu.Unlock()
					if phase.Load() == 2 {
						afterUp.Add(1)
					}
				case errors.Is(err, storage.ErrUnavailable), errors.Is(err, storage.ErrOverloaded):
					refused.Add(1)
					time.Sleep(50 * time.Millisecond) // a client's backoff
				default:
					badErrors.Add(1)
					t.Errorf("non-retryable error: %v", err)
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
	waitFor := func(what string, cond func() bool) {
		deadline := time.Now().Add(90 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("gave up waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("writes before the stop", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 50 })
	script("stop.sh", append([]string{dir}, stopArgs...)...)
	phase.Store(1)
	waitFor("refusals while the broker is down", func() bool { return refused.Load() >= 8 })
	script("start.sh", dir, port)
	phase.Store(2)
	waitFor("writes after the restart", func() bool { return afterUp.Load() >= 50 })
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d writes acknowledged, %d refused as retryable", len(acked), refused.Load())
	want := len(acked)
	consume(t, bs, func(r *kgo.Record) bool {
		delete(acked, string(r.Value))
		return len(acked) == 0
	}, tr)
	if len(acked) != 0 {
		t.Errorf("%d of %d acknowledged writes are not in Kafka", len(acked), want)
	}
}

// TestConsumerSASL: the consumer (kafkasource) authenticates as the
// producer does (the same connection code, internal/kafkaconn), reading
// back the records the SASL producer wrote into a sink through an ingest
// pipeline, and committing them.
func TestConsumerSASL(t *testing.T) {
	bs := brokers(t)
	sasl := os.Getenv("OTLP_LITE_KAFKA_SASL_BROKERS")
	if sasl == "" {
		t.Skip("OTLP_LITE_KAFKA_SASL_BROKERS not set")
	}
	tr, me, lo := topics(t, bs)
	msg := payload(t, "logs_all_fields.pb")
	want := items(t, storage.Logs, msg)
	auth := &kafka.SASL{Mechanism: "SCRAM-SHA-512", Username: "otlp", Password: "otlp-secret"}
	s := open(t, kafka.Config{Brokers: []string{sasl}, TracesTopic: tr, MetricsTopic: me, LogsTopic: lo, SASL: auth})
	for range 3 {
		if err := s.Write(context.Background(), storage.Logs, msg, want); err != nil {
			t.Fatal(err)
		}
	}
	sink := &countSink{done: make(chan struct{})}
	sink.want.Store(int64(3 * want))
	p := ingest.New(ingest.Config{Sink: sink})
	c, err := kafkasource.NewConsumer(kafkasource.ConsumerConfig{Brokers: []string{sasl}, SASL: auth, Group: "sasl-" + lo, Pipeline: p,
		Topics: map[otlp.Signal]string{otlp.Logs: lo}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- c.Run(ctx) }()
	select {
	case <-sink.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%d of %d log records consumed over SASL", sink.got.Load(), 3*want)
	}
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}

	// A wrong password reads nothing.
	bad, err := kafkasource.NewConsumer(kafkasource.ConsumerConfig{Brokers: []string{sasl}, Group: "sasl-bad-" + lo, Pipeline: p,
		SASL: &kafka.SASL{Mechanism: "SCRAM-SHA-512", Username: "otlp", Password: "wrong"}, Topics: map[otlp.Signal]string{otlp.Logs: lo}})
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := bad.Ping(pctx); err == nil {
		t.Error("a consumer with a wrong SASL password reached the broker")
	}
	bad.Close()
}

// countSink counts items and closes done when want are stored.
type countSink struct {
	got, want atomic.Int64
	done      chan struct{}
}

func (c *countSink) Write(_ context.Context, _ storage.Signal, _ []byte, items int) error {
	if c.got.Add(int64(items)) == c.want.Load() {
		close(c.done)
	}
	return nil
}

func (c *countSink) Close() error { return nil }
