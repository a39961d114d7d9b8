package interop

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// The Kafka sink as a storage.KeyedSink (docs/exactly-once.md "Across
// restarts"), against an in-process cluster (kfake): the keys a receiver
// stored with WriteKeyed are found again by a new sink's ReadKeys, as a
// restarted receiver's window is rebuilt.

// tracesWithIDs is a traces request of n spans, each of its own trace:
// with PartitionTracesByID, n records over the cluster's partitions.
func tracesWithIDs(t *testing.T, n, seed int) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i := range n {
		sp := ss.Spans().AppendEmpty()
		sp.SetName(fmt.Sprintf("span-%d-%d", seed, i))
		sp.SetTraceID([16]byte{byte(seed), byte(seed >> 8), byte(i), byte(i >> 8), 1})
		sp.SetSpanID([8]byte{byte(seed), byte(i), 2})
	}
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func openKeyed(t *testing.T, cfg kafka.Config) *kafka.Sink {
	t.Helper()
	s, err := kafka.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func readAllKeys(t *testing.T, s *kafka.Sink, since time.Time) (map[string]storage.StoredKey, error) {
	t.Helper()
	got := make(map[string]storage.StoredKey)
	err := s.ReadKeys(since, func(k storage.StoredKey) error {
		if _, dup := got[k.Key]; dup {
			t.Errorf("key %q reported twice", k.Key)
		}
		got[k.Key] = k
		return nil
	})
	return got, err
}

// TestKafkaReadKeysFindsEveryKey: requests written with keys, whole or
// split over the partitions (one record per trace), with a tenant or
// without, with a partial success's message, are all found by a new sink
// with every field; records without the header (a plain Write, a
// Collector's record) are skipped.
func TestKafkaReadKeysFindsEveryKey(t *testing.T) {
	brokers := newKfake(t)
	since := time.Now().Add(-time.Second)
	cfg := kafka.Config{Brokers: brokers, PartitionTracesByID: true, TracesTopic: "keys_spans", LogsTopic: "keys_logs"}
	a := openKeyed(t, cfg)
	ctx := context.Background()
	want := map[string]storage.StoredKey{}
	for i := range 20 {
		k := storage.StoredKey{Signal: storage.Traces, Tenant: otlp.DefaultTenant, Key: fmt.Sprintf("req-%d", i),
			Fingerprint: uint64(1000 + i), Items: 1 + i%9}
		wctx := ctx
		if i%3 == 0 {
			k.Tenant = fmt.Sprintf("team-%d", i)
			wctx = otlp.WithTenant(ctx, k.Tenant)
		}
		if i%4 == 0 {
			k.Rejected, k.Message = 2, "2 spans rejected: no trace id"
		}
		// 1 to 9 traces: 1 to 9 records, over up to 7 partitions.
		if err := a.WriteKeyed(wctx, storage.Traces, tracesWithIDs(t, k.Items, i), k.Items, k); err != nil {
			t.Fatal(err)
		}
		want[k.Key] = k
	}
	if err := a.Write(ctx, storage.Traces, tracesWithIDs(t, 3, 99), 3); err != nil {
		t.Fatal(err)
	}
	// A Collector's records: no header, or others.
	raw, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.ProduceSync(ctx, &kgo.Record{Topic: "keys_spans", Value: tracesWithIDs(t, 1, 98)},
		&kgo.Record{Topic: "keys_spans", Value: tracesWithIDs(t, 1, 97), Headers: []kgo.RecordHeader{{Key: "x-team", Value: []byte("a")}}}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// Hostile headers: truncated, a part count of 2^40, a key longer than
	// the value: skipped and counted, nothing else disturbed.
	for _, v := range [][]byte{{1, 0, 0}, {1, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'k', 0},
		{1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xac, 0x02, 'k'}} {
		if err := raw.ProduceSync(ctx, &kgo.Record{Topic: "keys_spans", Value: []byte("x"), Headers: []kgo.RecordHeader{{Key: kafka.KeyHeader, Value: v}}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.WriteKeyed(ctx, storage.Logs, tracesWithIDs(t, 1, 96), 1, storage.StoredKey{}); err == nil || !errors.Is(err, storage.ErrNotStored) {
		t.Fatalf("an empty key: %v, want an error wrapping ErrNotStored", err)
	}
	before := time.Now().Add(time.Second)

	set := metrics.NewSet()
	b := openKeyed(t, kafka.Config{Brokers: brokers, PartitionTracesByID: true, TracesTopic: "keys_spans", LogsTopic: "keys_logs", Metrics: set})
	got, err := readAllKeys(t, b, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("read %d keys, want %d", len(got), len(want))
	}
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			t.Errorf("key %q not found", key)
			continue
		}
		if g.Time.Before(since) || g.Time.After(before) {
			t.Errorf("key %q: time %v, want between %v and %v", key, g.Time, since, before)
		}
		g.Time = time.Time{}
		if g != w {
			t.Errorf("key %q read as %+v, want %+v", key, g, w)
		}
	}
	if n := set.GetOrCreateCounter(`otlplite_kafka_keys_read_total`).Get(); n != uint64(len(want)) {
		t.Errorf("otlplite_kafka_keys_read_total = %d, want %d", n, len(want))
	}
	if n := set.GetOrCreateCounter(`otlplite_kafka_keys_skipped_total{reason="damaged"}`).Get(); n != 3 {
		t.Errorf("damaged headers counted %d, want 3", n)
	}
	// Since after everything: nothing.
	if got, err := readAllKeys(t, b, before); err != nil || len(got) != 0 {
		t.Errorf("since the end: %d keys, %v", len(got), err)
	}
}

// TestKafkaWriteKeyedOutlivesCtx: unlike Write, WriteKeyed waits for its
// records' fate after ctx ended (storage.KeyedSink): a client gone before
// Kafka answered still gets its key stored and reported, so that its
// resend is answered, not stored again.
func TestKafkaWriteKeyedOutlivesCtx(t *testing.T) {
	brokers := newKfake(t)
	since := time.Now().Add(-time.Second)
	cfg := kafka.Config{Brokers: brokers, TracesTopic: "gone_spans", PartitionTracesByID: true}
	a := openKeyed(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.WriteKeyed(ctx, storage.Traces, tracesWithIDs(t, 4, 1), 4, storage.StoredKey{Key: "client-gone", Fingerprint: 5}); err != nil {
		t.Fatalf("WriteKeyed after its client went away: %v, want nil once Kafka acknowledged", err)
	}
	got, err := readAllKeys(t, openKeyed(t, cfg), since)
	if err != nil {
		t.Fatal(err)
	}
	if got["client-gone"].Fingerprint != 5 || len(got) != 1 {
		t.Fatalf("read %+v, want the key client-gone", got)
	}
}

// TestKafkaReadKeysTopicPerTenant: with a topic per tenant, the keys are
// read from every existing topic of the pattern (tenants the new sink
// never saw), and nothing from a topic outside it.
func TestKafkaReadKeysTopicPerTenant(t *testing.T) {
	brokers := newKfake(t)
	since := time.Now().Add(-time.Second)
	cfg := kafka.Config{Brokers: brokers, TopicPerTenant: "{topic}_{tenant}", TracesTopic: "ptt_spans"}
	a := openKeyed(t, cfg)
	ctx := context.Background()
	for _, tenant := range []string{"team-a", "team-b"} {
		k := storage.StoredKey{Key: "key-of-" + tenant, Fingerprint: 1}
		if err := a.WriteKeyed(otlp.WithTenant(ctx, tenant), storage.Traces, tracesWithIDs(t, 2, 1), 2, k); err != nil {
			t.Fatal(err)
		}
	}
	// The same header in a topic the pattern does not name: not read.
	other := openKeyed(t, kafka.Config{Brokers: brokers, TracesTopic: "elsewhere"})
	if err := other.WriteKeyed(ctx, storage.Traces, tracesWithIDs(t, 1, 2), 1, storage.StoredKey{Key: "elsewhere", Fingerprint: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := readAllKeys(t, openKeyed(t, cfg), since)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["key-of-team-a"].Tenant != "team-a" || got["key-of-team-b"].Tenant != "team-b" {
		t.Fatalf("read %+v, want the keys of team-a and team-b under their tenants", got)
	}
}

// TestKafkaReadKeysPartMissing: a request split over several partitions
// of which one record is missing (copied to another topic without it) was
// not stored whole: its key is not reported (its resend is stored again,
// at least once), and is counted; the others are.
func TestKafkaReadKeysPartMissing(t *testing.T) {
	brokers := newKfake(t)
	since := time.Now().Add(-time.Second)
	a := openKeyed(t, kafka.Config{Brokers: brokers, PartitionTracesByID: true, TracesTopic: "torn_src"})
	ctx := context.Background()
	for i, key := range []string{"whole", "torn", "single"} {
		n := 6
		if key == "single" {
			n = 1
		}
		if err := a.WriteKeyed(ctx, storage.Traces, tracesWithIDs(t, n, i), n, storage.StoredKey{Key: key, Fingerprint: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Copy the records to torn_dst, all but the third of "torn".
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("torn_src"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AllowAutoTopicCreation(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var copied []*kgo.Record
	seenTorn := 0
	for total := 0; total < 13; {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d records: %v", total, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			total++
			for _, h := range r.Headers {
				if h.Key == kafka.KeyHeader && strings.Contains(string(h.Value), "torn") {
					if seenTorn++; seenTorn == 3 {
						return
					}
				}
			}
			copied = append(copied, &kgo.Record{Topic: "torn_dst", Key: r.Key, Value: r.Value, Headers: r.Headers, Partition: r.Partition})
		})
	}
	if err := cl.ProduceSync(ctx, copied...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	b := openKeyed(t, kafka.Config{Brokers: brokers, TracesTopic: "torn_dst", Metrics: set})
	got, err := readAllKeys(t, b, since)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["torn"]; ok || len(got) != 2 || got["whole"].Key == "" || got["single"].Key == "" {
		t.Errorf("read %v, want whole and single only", got)
	}
	if n := set.GetOrCreateCounter(`otlplite_kafka_keys_skipped_total{reason="incomplete"}`).Get(); n != 1 {
		t.Errorf("incomplete keys counted %d, want 1", n)
	}
}

// TestKafkaReadKeysPendingBounded: with a small MaxPendingKeyBytes and
// many split requests whose parts are read partition by partition, the
// keys waiting for parts stay within it (TestKeyAssemblerBounded measures
// it): the records of keys over it are counted, their keys not reported
// (at least once).
func TestKafkaReadKeysPendingBounded(t *testing.T) {
	brokers := newKfake(t)
	since := time.Now().Add(-time.Second)
	a := openKeyed(t, kafka.Config{Brokers: brokers, PartitionTracesByID: true, TracesTopic: "bounded_spans"})
	ctx := context.Background()
	const keys = 300
	for i := range keys {
		if err := a.WriteKeyed(ctx, storage.Traces, tracesWithIDs(t, 7, i), 7, storage.StoredKey{Key: fmt.Sprintf("key-%04d", i), Fingerprint: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	set := metrics.NewSet()
	b := openKeyed(t, kafka.Config{Brokers: brokers, TracesTopic: "bounded_spans", Metrics: set, MaxPendingKeyBytes: 8 << 10})
	got, err := readAllKeys(t, b, since)
	if err != nil {
		t.Fatal(err)
	}
	over := set.GetOrCreateCounter(`otlplite_kafka_keys_skipped_total{reason="pending_limit"}`).Get()
	incomplete := set.GetOrCreateCounter(`otlplite_kafka_keys_skipped_total{reason="incomplete"}`).Get()
	t.Logf("%d keys reported, %d over the pending limit, %d incomplete", len(got), over, incomplete)
	if uint64(len(got))+incomplete > keys || len(got) == 0 {
		t.Errorf("%d reported and %d incomplete of %d keys", len(got), incomplete, keys)
	}
	if len(got) < keys && over == 0 {
		t.Errorf("%d of %d keys reported, none counted over the limit", len(got), keys)
	}
}

// TestKafkaReadKeysBrokerTrouble: ReadKeys never holds a receiver's start
// for ever. Brokers down (the start's Ping failed): it reads nothing and
// says so at once. A broker that never answers ListOffsets: it gives up at
// KeysReadTimeout with an error (the window starts with what was read).
// A broker refusing it for good: the error at once.
func TestKafkaReadKeysBrokerTrouble(t *testing.T) {
	t.Run("down", func(t *testing.T) {
		s := openKeyed(t, kafka.Config{Brokers: []string{deadBroker(t)}, DialTimeout: 100 * time.Millisecond})
		pctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if err := s.Ping(pctx); err == nil {
			t.Fatal("Ping of a dead broker succeeded")
		}
		if _, err := readAllKeys(t, s, time.Now().Add(-time.Minute)); err == nil || !strings.Contains(err.Error(), "no keys read") {
			t.Fatalf("ReadKeys after a failed Ping: %v", err)
		}
	})
	for _, tc := range []struct {
		name  string
		stall bool
		want  string
	}{{"stalling", true, "deadline exceeded"}, {"refusing", false, "TOPIC_AUTHORIZATION_FAILED"}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.SeedTopics(3, "trouble_spans"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			release := make(chan struct{})
			t.Cleanup(func() { close(release) }) // before c.Close
			c.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				if tc.stall {
					c.SleepControl(func() { <-release })
					return nil, nil, false
				}
				lreq := req.(*kmsg.ListOffsetsRequest)
				resp := lreq.ResponseKind().(*kmsg.ListOffsetsResponse)
				for _, rt := range lreq.Topics {
					st := kmsg.NewListOffsetsResponseTopic()
					st.Topic = rt.Topic
					for _, rp := range rt.Partitions {
						sp := kmsg.NewListOffsetsResponseTopicPartition()
						sp.Partition, sp.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
						st.Partitions = append(st.Partitions, sp)
					}
					resp.Topics = append(resp.Topics, st)
				}
				return resp, nil, true
			})
			s := openKeyed(t, kafka.Config{Brokers: c.ListenAddrs(), TracesTopic: "trouble_spans", KeysReadTimeout: 500 * time.Millisecond})
			_, err = readAllKeys(t, s, time.Now().Add(-time.Minute))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadKeys: %v, want an error saying %s", err, tc.want)
			}
			t.Logf("ReadKeys: %v", err)
		})
	}
}

// deadBroker is a loopback address nothing listens on.
func deadBroker(t *testing.T) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	addr := c.ListenAddrs()[0]
	c.Close()
	return addr
}

// TestKafkaReadKeysHeaderBombBounded: records that decode to far more than
// their bytes (thousands of empty headers each, zstd-compressed to a few
// hundred bytes a batch) on a topic the receiver reads at start cost
// ReadKeys memory in proportion to the bytes it reads, not to what the
// records claim: a topic anyone can write to must not stop a receiver from
// starting. The keyed request stored after them is found all the same.
func TestKafkaReadKeysHeaderBombBounded(t *testing.T) {
	brokers := newKfake(t, kfake.SeedTopics(1, "bomb_spans"))
	since := time.Now().Add(-time.Second)
	ctx := context.Background()
	// 8 batches of one record with 1<<19 empty headers: 1 MiB each
	// decompressed (2 bytes a header), each under every decompression
	// bound, about 200 bytes each on the wire.
	const batches, headers = 8, 1 << 19
	bomb, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.ProducerBatchMaxBytes(4<<20), kgo.MaxBufferedBytes(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer bomb.Close()
	hs := make([]kgo.RecordHeader, headers)
	for range batches {
		if err := bomb.ProduceSync(ctx, &kgo.Record{Topic: "bomb_spans", Headers: hs}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	hs = nil
	cfg := kafka.Config{Brokers: brokers, TracesTopic: "bomb_spans"}
	if err := openKeyed(t, cfg).WriteKeyed(ctx, storage.Traces, tracesWithIDs(t, 1, 1), 1, storage.StoredKey{Key: "after-the-bomb", Fingerprint: 3}); err != nil {
		t.Fatal(err)
	}
	b := openKeyed(t, cfg)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := readAllKeys(t, b, since)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got["after-the-bomb"].Fingerprint != 3 || len(got) != 1 {
		t.Errorf("read %+v, want the key after-the-bomb", got)
	}
	// The records decompress to 8 MiB: reading them may cost that and
	// the fetches, not their 4M headers decoded (40 bytes each).
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("ReadKeys allocated %d MiB for %d batches of %d headers", alloc>>20, batches, headers)
	if alloc > 48<<20 {
		t.Errorf("ReadKeys allocated %d MiB reading %d batches of %d MiB decompressed, want at most 48 MiB", alloc>>20, batches, 2*headers>>20)
	}
}

// TestKafkaReadKeysEveryCodec: ReadKeys decompresses the batches itself:
// keys written with every codec the sink offers are found.
func TestKafkaReadKeysEveryCodec(t *testing.T) {
	brokers := newKfake(t)
	since := time.Now().Add(-time.Second)
	ctx := context.Background()
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		cfg := kafka.Config{Brokers: brokers, TracesTopic: "codec_" + codec, Compression: codec, PartitionTracesByID: true}
		if err := openKeyed(t, cfg).WriteKeyed(ctx, storage.Traces, tracesWithIDs(t, 5, 1), 5, storage.StoredKey{Key: "key-" + codec, Fingerprint: 7}); err != nil {
			t.Fatal(codec, err)
		}
		got, err := readAllKeys(t, openKeyed(t, cfg), since)
		if err != nil {
			t.Fatal(err)
		}
		if got["key-"+codec].Fingerprint != 7 || got["key-"+codec].Items != 5 || len(got) != 1 {
			t.Errorf("%s: read %+v, want key-%s", codec, got, codec)
		}
	}
}

// TestKafkaReadKeysBatchTooLarge: a batch that decompresses past the bound
// (a zstd bomb: 65 MiB of zeros in a few KiB) is skipped and counted, and
// the keys before and after it in the same partition are found.
func TestKafkaReadKeysBatchTooLarge(t *testing.T) {
	brokers := newKfake(t, kfake.SeedTopics(1, "toolarge_spans"))
	since := time.Now().Add(-time.Second)
	ctx := context.Background()
	cfg := kafka.Config{Brokers: brokers, TracesTopic: "toolarge_spans"}
	w := openKeyed(t, cfg)
	if err := w.WriteKeyed(ctx, storage.Traces, tracesWithIDs(t, 1, 1), 1, storage.StoredKey{Key: "before", Fingerprint: 1}); err != nil {
		t.Fatal(err)
	}
	bomb, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.ProducerBatchMaxBytes(80<<20), kgo.MaxBufferedBytes(100<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer bomb.Close()
	if err := bomb.ProduceSync(ctx, &kgo.Record{Topic: "toolarge_spans", Value: make([]byte, 65<<20)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteKeyed(ctx, storage.Traces, tracesWithIDs(t, 1, 2), 1, storage.StoredKey{Key: "after", Fingerprint: 2}); err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	got, err := readAllKeys(t, openKeyed(t, kafka.Config{Brokers: brokers, TracesTopic: "toolarge_spans", Metrics: set}), since)
	if err != nil {
		t.Fatal(err)
	}
	if got["before"].Fingerprint != 1 || got["after"].Fingerprint != 2 || len(got) != 2 {
		t.Errorf("read %+v, want before and after", got)
	}
	if n := set.GetOrCreateCounter(`otlplite_kafka_keys_skipped_total{reason="batch_too_large"}`).Get(); n != 1 {
		t.Errorf("batches too large counted %d, want 1", n)
	}
}

// TestKafkaReadKeysLogTruncated: a partition whose end moved back after
// ReadKeys listed it (a leader lost records acknowledged with acks=1; here
// the listed end is a lie) is read to its new end, not waited on until
// -kafka-keys-read-timeout.
func TestKafkaReadKeysLogTruncated(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "truncated_spans"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	since := time.Now().Add(-time.Second)
	cfg := kafka.Config{Brokers: c.ListenAddrs(), TracesTopic: "truncated_spans", KeysReadTimeout: 5 * time.Second}
	w := openKeyed(t, cfg)
	for i := range 3 {
		if err := w.WriteKeyed(context.Background(), storage.Traces, tracesWithIDs(t, 1, i), 1, storage.StoredKey{Key: fmt.Sprint("k", i), Fingerprint: 1}); err != nil {
			t.Fatal(err)
		}
	}
	c.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		lreq := req.(*kmsg.ListOffsetsRequest)
		resp := lreq.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, rt := range lreq.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition, sp.Offset = rp.Partition, 0
				if rp.Timestamp == -1 {
					sp.Offset = 1000 // the end as listed; the log ends at 3
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	// Before the fix, the read waited for offsets 3 to 999 until its
	// timeout and failed: "1 partition(s) not read to their end".
	got, err := readAllKeys(t, openKeyed(t, cfg), since)
	if err != nil || len(got) != 3 {
		t.Fatalf("read %v, %v; want the 3 keys and no error", got, err)
	}
}
