package kafka_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// The options that read client metadata, and the producer options, are
// checked as the Collector checks them (config.go Validate), plus
// otlp-lite's own bounds.
func TestProducerOptionsConfig(t *testing.T) {
	b := []string{"127.0.0.1:1"}
	sig := func(s storage.Signal, sc kafka.SignalConfig) [5]kafka.SignalConfig {
		var a [5]kafka.SignalConfig
		a[s] = sc
		return a
	}
	for _, tc := range []struct {
		name string
		cfg  kafka.Config
		want string // "" valid
	}{
		{"all options", kafka.Config{Brokers: b, IncludeMetadataKeys: []string{"X-Team", "x-route"},
			PerSignal:   sig(storage.Traces, kafka.SignalConfig{TopicFromMetadataKey: "x-topic", MessageKeyFromMetadataKey: "x-key", Encoding: "otlp_json"}),
			Partitioner: "round_robin", RequiredAcks: "1", Compression: "gzip", CompressionLevel: 9, NoAutoTopicCreation: true, MaxClientTopics: 5}, ""},
		{"least_backup", kafka.Config{Brokers: b, Partitioner: "least_backup"}, ""},
		{"sticky_key murmur2", kafka.Config{Brokers: b, Partitioner: "sticky_key", Hasher: "murmur2"}, ""},
		{"acks -1", kafka.Config{Brokers: b, RequiredAcks: "-1"}, ""},
		{"zstd any level", kafka.Config{Brokers: b, Compression: "zstd", CompressionLevel: 19}, ""},
		{"gzip huffman", kafka.Config{Brokers: b, Compression: "gzip", CompressionLevel: -2}, ""},
		{"unknown partitioner", kafka.Config{Brokers: b, Partitioner: "sticky"}, "unknown partitioner"},
		{"hasher with round_robin", kafka.Config{Brokers: b, Partitioner: "round_robin", Hasher: "murmur2"}, "sticky_key partitioner only"},
		{"acks 0", kafka.Config{Brokers: b, RequiredAcks: "0"}, "acks=0 means Kafka never does"},
		{"acks 2", kafka.Config{Brokers: b, RequiredAcks: "2"}, "unknown required acks"},
		{"gzip level 10", kafka.Config{Brokers: b, Compression: "gzip", CompressionLevel: 10}, "gzip compression level 10"},
		{"snappy level", kafka.Config{Brokers: b, Compression: "snappy", CompressionLevel: 3}, "takes no level"},
		{"level without codec", kafka.Config{Brokers: b, CompressionLevel: 3}, `"none" takes no level`},
		{"empty include key", kafka.Config{Brokers: b, IncludeMetadataKeys: []string{""}}, "empty client metadata key"},
		{"include key not a header name", kafka.Config{Brokers: b, IncludeMetadataKeys: []string{"x team"}}, "cannot be in a header name"},
		{"include key twice", kafka.Config{Brokers: b, IncludeMetadataKeys: []string{"x-team", "X-Team"}}, "listed twice"},
		{"binary key", kafka.Config{Brokers: b, IncludeMetadataKeys: []string{"trace-bin"}}, "binary gRPC key"},
		{"tenant key", kafka.Config{Brokers: b, IncludeMetadataKeys: []string{"Tenant"}}, "holds the receiver's tenant"},
		{"bad topic key", kafka.Config{Brokers: b, PerSignal: sig(storage.Logs, kafka.SignalConfig{TopicFromMetadataKey: "a:b"})}, "cannot be in a header name"},
		{"per-tenant and metadata topic", kafka.Config{Brokers: b, TopicPerTenant: "{topic}_{tenant}",
			PerSignal: sig(storage.Metrics, kafka.SignalConfig{TopicFromMetadataKey: "x-topic"})}, "another tenant's topic"},
		{"traces key and by id", kafka.Config{Brokers: b, PartitionTracesByID: true,
			PerSignal: sig(storage.Traces, kafka.SignalConfig{MessageKeyFromMetadataKey: "x-key"})}, "PartitionTracesByID"},
		{"metrics key and by attributes", kafka.Config{Brokers: b, PartitionMetricsByResourceAttributes: true,
			PerSignal: sig(storage.Metrics, kafka.SignalConfig{MessageKeyFromMetadataKey: "x-key"})}, "PartitionMetricsByResourceAttributes"},
		{"logs key and by trace id", kafka.Config{Brokers: b, PartitionLogsByTraceID: true,
			PerSignal: sig(storage.Logs, kafka.SignalConfig{MessageKeyFromMetadataKey: "x-key"})}, "PartitionLogsByTraceID"},
		{"logs key, metrics partitioned", kafka.Config{Brokers: b, PartitionMetricsByResourceAttributes: true,
			PerSignal: sig(storage.Logs, kafka.SignalConfig{MessageKeyFromMetadataKey: "x-key"})}, ""},
		{"bad signal encoding", kafka.Config{Brokers: b, PerSignal: sig(storage.Profiles, kafka.SignalConfig{Encoding: "raw"})}, `unknown profiles encoding "raw"`},
		{"max client topics", kafka.Config{Brokers: b, MaxClientTopics: -1}, "MaxClientTopics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate: %v, want %q", err, tc.want)
			}
			s, err := kafka.Open(tc.cfg)
			if tc.want == "" && err != nil || tc.want != "" && err == nil {
				t.Fatalf("Open: %v, want %q", err, tc.want)
			}
			if s != nil {
				s.Close()
			}
		})
	}
}

// MetadataKeys lists what the handler must pass: every key any option
// reads, once, case-insensitively.
func TestMetadataKeys(t *testing.T) {
	var ps [5]kafka.SignalConfig
	ps[storage.Traces] = kafka.SignalConfig{TopicFromMetadataKey: "x-topic", MessageKeyFromMetadataKey: "X-Team"}
	ps[storage.Logs] = kafka.SignalConfig{TopicFromMetadataKey: "X-Topic"}
	cfg := kafka.Config{IncludeMetadataKeys: []string{"x-team", "x-route"}, PerSignal: ps}
	if got := fmt.Sprint(cfg.MetadataKeys()); got != "[x-team x-route x-topic]" {
		t.Errorf("MetadataKeys() = %s", got)
	}
	if got := (kafka.Config{}).MetadataKeys(); got != nil {
		t.Errorf("no option: MetadataKeys() = %q, want nil", got)
	}
}

func TestCheckTopicName(t *testing.T) {
	for name, ok := range map[string]bool{
		"otlp_spans": true, "a.b-c_D9": true, strings.Repeat("t", 249): true,
		"": false, ".": false, "..": false, strings.Repeat("t", 250): false,
		"a/b": false, "a b": false, "ünï": false, "a\x00": false, "{topic}": false,
	} {
		if err := kafka.CheckTopicName(name); (err == nil) != ok {
			t.Errorf("CheckTopicName(%.20q) = %v, want ok=%v", name, err, ok)
		}
	}
}

// counter reads a counter of set.
func counter(set *metrics.Set, name string) uint64 {
	var buf bytes.Buffer
	set.WritePrometheus(&buf)
	for _, line := range strings.Split(buf.String(), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var n uint64
			fmt.Sscan(v, &n)
			return n
		}
	}
	return 0
}

func withMetadata(kv ...string) context.Context {
	var md storage.Metadata
	for i := 0; i < len(kv); i += 2 {
		md = append(md, storage.MetadataEntry{Key: kv[i], Values: []string{kv[i+1]}})
	}
	return storage.WithMetadata(context.Background(), md)
}

// TestClientTopicsBounded is the attacker's view: a client that controls
// a request header naming the topic (topic_from_metadata_key), or a
// resource attribute naming it (topic_from_attribute), cannot make the
// receiver produce to illegal topic names nor to more than
// MaxClientTopics distinct topics (with auto.create.topics.enable, each
// would be created), and cannot have unbounded headers copied into
// records. Every such request is refused as not retryable
// (storage.ErrRejected: INVALID_ARGUMENT, HTTP 400) before anything is
// produced, and counted. No broker is needed: the refusals come first.
func TestClientTopicsBounded(t *testing.T) {
	set := metrics.NewSet()
	var ps [5]kafka.SignalConfig
	ps[storage.Traces].TopicFromMetadataKey = "x-topic"
	s, err := kafka.Open(kafka.Config{Brokers: []string{deadAddr(t)}, ProduceTimeout: 100 * time.Millisecond,
		PerSignal: ps, TopicFromAttribute: "kafka.topic", IncludeMetadataKeys: []string{"x-big"},
		MaxClientTopics: 3, Metrics: set})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msg := payload(t, "traces_all_fields.pb")
	write := func(ctx context.Context, m []byte) error {
		return s.Write(ctx, storage.Traces, m, items(t, storage.Traces, m))
	}
	const (
		invalid = `otlplite_kafka_produce_refusals_total{reason="client_topic_invalid"}`
		limit   = `otlplite_kafka_produce_refusals_total{reason="client_topic_limit"}`
		tooBig  = `otlplite_kafka_produce_refusals_total{reason="metadata_too_large"}`
	)

	// Illegal names: refused, counted, nothing remembered.
	bad := []string{"", "..", "a/b", "spaces here", "ünïcode", strings.Repeat("x", 250)}
	for _, name := range bad {
		if err := write(withMetadata("X-Topic", name), msg); !errors.Is(err, storage.ErrRejected) {
			t.Errorf("topic %.20q: err = %v, want storage.ErrRejected", name, err)
		}
	}
	if n := counter(set, invalid); n != uint64(len(bad)) {
		t.Errorf("%s = %d, want %d", invalid, n, len(bad))
	}

	// Three new names are admitted (the dead broker then makes the
	// writes unavailable, retryable); the signal's own topic is not a
	// client's and does not count.
	for _, name := range []string{"team-a", "team-b", kafka.DefaultTracesTopic, "team-c"} {
		if err := write(withMetadata("x-topic", name), msg); !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("topic %s: err = %v, want storage.ErrUnavailable (admitted, broker down)", name, err)
		}
	}
	// A client inventing a topic per request: all refused from now on,
	// before any produce, with a message that names the limit.
	for i := range 1000 {
		err := write(withMetadata("x-topic", fmt.Sprintf("random-%d", i)), msg)
		if !errors.Is(err, storage.ErrRejected) {
			t.Fatalf("random topic %d: err = %v, want storage.ErrRejected", i, err)
		}
		if i == 0 && !strings.Contains(err.Error(), "-kafka-max-client-topics") {
			t.Errorf("refusal does not say what to change: %v", err)
		}
	}
	if n := counter(set, limit); n != 1000 {
		t.Errorf("%s = %d, want 1000", limit, n)
	}
	// A name already admitted still goes through.
	if err := write(withMetadata("x-topic", "team-b"), msg); !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("admitted topic again: err = %v, want storage.ErrUnavailable", err)
	}

	// The same bound for a topic named by a resource attribute.
	withSpan := func(v string) []byte {
		// One resource with the attribute and a span.
		kv := lenf(1, lenf(1, []byte("kafka.topic")), lenf(2, lenf(1, []byte(v))))
		sp := lenf(2, lenf(1, bytes.Repeat([]byte{7}, 16)), lenf(2, []byte("spanid01")), lenf(5, []byte("s")))
		return lenf(1, lenf(1, kv), lenf(2, sp))
	}
	if err := write(context.Background(), withSpan("bad/topic")); !errors.Is(err, storage.ErrRejected) {
		t.Errorf("attribute topic bad/topic: err = %v, want storage.ErrRejected", err)
	}
	if err := write(context.Background(), withSpan("yet-another")); !errors.Is(err, storage.ErrRejected) {
		t.Errorf("attribute topic over the limit: err = %v, want storage.ErrRejected", err)
	}
	if err := write(context.Background(), withSpan("team-a")); !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("attribute topic admitted: err = %v, want storage.ErrUnavailable", err)
	}
	if n := counter(set, invalid); n != uint64(len(bad))+1 {
		t.Errorf("%s = %d, want %d", invalid, n, len(bad)+1)
	}

	// Headers copied from metadata: bounded in bytes per record.
	var vals []string
	for range 100 {
		vals = append(vals, strings.Repeat("v", 100))
	}
	ctx := storage.WithMetadata(context.Background(), storage.Metadata{{Key: "x-big", Values: vals}})
	if err := write(ctx, msg); !errors.Is(err, storage.ErrRejected) || !strings.Contains(err.Error(), "x-big") {
		t.Errorf("10 KB of metadata headers: err = %v, want storage.ErrRejected naming x-big", err)
	}
	if n := counter(set, tooBig); n != 1 {
		t.Errorf("%s = %d, want 1", tooBig, n)
	}
}

// TestMetadataRecords against a real broker: include_metadata_keys
// headers (one per value, named as configured, after the static headers
// and before the tenant's), the topic from a metadata key before the one
// from an attribute, and the record key from a metadata key.
func TestMetadataRecords(t *testing.T) {
	bs := brokers(t)
	tr, me, lo := topics(t, bs)
	fromMeta := tr + "_meta"
	var ps [5]kafka.SignalConfig
	ps[storage.Traces] = kafka.SignalConfig{TopicFromMetadataKey: "x-topic", MessageKeyFromMetadataKey: "x-key"}
	ps[storage.Logs] = kafka.SignalConfig{MessageKeyFromMetadataKey: "x-key"}
	s := open(t, kafka.Config{Brokers: bs, TracesTopic: tr, MetricsTopic: me, LogsTopic: lo, PerSignal: ps,
		Headers: []kafka.Header{{Key: "origin", Value: "edge"}}, IncludeMetadataKeys: []string{"X-Team", "x-absent", "x-route"}})
	md := storage.Metadata{
		{Key: "x-team", Values: []string{"a", "b"}},
		{Key: "x-route", Values: []string{"eu"}},
		{Key: "x-topic", Values: []string{fromMeta, "ignored"}},
		{Key: "x-key", Values: []string{"k1"}},
	}
	ctx := otlp.WithTenant(storage.WithMetadata(context.Background(), md), "t1")
	trMsg := append(payload(t, "traces_all_fields.pb"), idResource("meta-traces")...)
	loMsg := append(payload(t, "logs_all_fields.pb"), idResource("meta-logs")...)
	if err := s.Write(ctx, storage.Traces, trMsg, items(t, storage.Traces, trMsg)); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, storage.Logs, loMsg, items(t, storage.Logs, loMsg)); err != nil {
		t.Fatal(err)
	}
	wantHeaders := "[origin=edge X-Team=a X-Team=b x-route=eu tenant=t1]"
	seen := map[string]bool{}
	consume(t, bs, func(r *kgo.Record) bool {
		var hs []string
		for _, h := range r.Headers {
			hs = append(hs, h.Key+"="+string(h.Value))
		}
		switch {
		case bytes.Equal(r.Value, trMsg):
			if r.Topic != fromMeta {
				t.Errorf("traces on %s, want %s", r.Topic, fromMeta)
			}
			seen["traces"] = true
		case bytes.Equal(r.Value, loMsg):
			if r.Topic != lo {
				t.Errorf("logs on %s, want %s", r.Topic, lo)
			}
			seen["logs"] = true
		default:
			t.Errorf("unexpected record on %s", r.Topic)
			return false
		}
		if fmt.Sprint(hs) != wantHeaders || string(r.Key) != "k1" {
			t.Errorf("record on %s: headers %v key %q, want %s key k1", r.Topic, hs, r.Key, wantHeaders)
		}
		return len(seen) == 2
	}, fromMeta, lo)
	if len(seen) != 2 {
		t.Errorf("found %v", seen)
	}
}
