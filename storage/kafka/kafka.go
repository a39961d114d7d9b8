// Package kafka is a storage.Sink that produces every accepted OTLP request
// to Apache Kafka, for deployments of several stateless receivers behind a
// load balancer.
//
// Records are produced as the OpenTelemetry Collector's kafkaexporter
// (v0.155.0) produces them: by default in its otlp_proto encoding (the
// value is exactly the protobuf ExportTraceServiceRequest,
// ExportMetricsServiceRequest, ExportLogsServiceRequest or
// ExportProfilesServiceRequest) or in otlp_json, to its default topics
// otlp_spans, otlp_metrics, otlp_logs and otlp_profiles, so the
// Collector's kafkareceiver reads them; with its keys and partitioner
// (keys.go), so records of otlp-lite and of Collectors on one topic land on
// the same partitions; and with its options: partition_traces_by_id,
// partition_metrics_by_resource_attributes,
// partition_logs_by_resource_attributes, partition_logs_by_trace_id,
// topic_from_attribute, record_headers, record_partitioner (sticky_key
// with either hasher, round_robin, least_backup), per signal the topic,
// encoding, topic_from_metadata_key and message_key_from_metadata_key,
// include_metadata_keys (metadata.go), and the producer's required_acks,
// compression and its level, max_message_bytes, flush_max_messages,
// allow_auto_topic_creation and client_id. What it does not copy, and
// why, is in the README's Kafka section.
//
// The Kafka source (package kafkasource) reads such records back through
// the ingest pipeline into a storage.Sink.
//
// Guarantee: Write returns nil only after every record of the request is
// acknowledged by all in-sync replicas (acks=all) through an idempotent
// producer (with RequiredAcks "1", by the partition leader only). A broker that is down or slow makes Write fail within
// Config.ProduceTimeout with an error wrapping storage.ErrUnavailable, and a
// full produce buffer (Config.MaxBufferedBytes) makes it fail at once with
// storage.ErrOverloaded: memory stays bounded, the client keeps its data
// and retries, and production resumes by itself when the brokers return.
// Delivery is at-least-once: a Write that failed may still have reached
// Kafka, and the client's retry then stores it again.
//
// The Sink is a storage.KeyedSink (keyed.go): WriteKeyed puts a request's
// idempotency key in every record of it (KeyHeader), and ReadKeys reads
// the keys of the requests stored whole back from the topics when a
// receiver starts, so that a resend after a restart is answered, not
// stored twice (docs/exactly-once.md).
//
// Requests larger than Config.MaxMessageBytes are split into several records
// between resources (see appendResources); a single resource too large for
// one record fails with an error wrapping ErrTooLarge.
package kafka

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/otlp-lite/otlp-lite/internal/kafkaconn"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/storage"
)

// Defaults for the zero fields of Config.
const (
	// The topics of the Collector's kafkareceiver and kafkaexporter.
	DefaultTracesTopic  = "otlp_spans"
	DefaultMetricsTopic = "otlp_metrics"
	DefaultLogsTopic    = "otlp_logs"
	// DefaultProfilesTopic is the kafkaexporter's default for profiles;
	// its otlp_proto encoding of profiles is the
	// ExportProfilesServiceRequest, dictionary included, as stored here.
	DefaultProfilesTopic = "otlp_profiles"

	// DefaultMaxMessageBytes is the Collector kafkaexporter's
	// producer.max_message_bytes. It stays under the broker's default
	// message.max.bytes (1048588) with room for the record batch framing.
	DefaultMaxMessageBytes = 1_000_000

	// DefaultProduceTimeout is shorter than the OpenTelemetry SDKs' 10 s
	// export timeout, so a client hears a retryable refusal before it
	// gives up on its own.
	DefaultProduceTimeout = 5 * time.Second

	// DefaultMaxBufferedBytes bounds the memory of records waiting for
	// their acknowledgement.
	DefaultMaxBufferedBytes = 64 << 20
)

// recordOverhead is reserved out of MaxMessageBytes for the framing Kafka
// puts around a value: a record batch header (61 bytes, Kafka protocol
// "Record Batch") plus one record's length, attributes, deltas, key (a
// 16-byte trace id) and header count, at most 41 bytes.
const recordOverhead = 128

// Config configures a Sink. Brokers is required; every other zero field
// takes its default.
type Config struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string

	// TracesTopic, MetricsTopic, LogsTopic and ProfilesTopic name the
	// topics per signal (defaults otlp_spans, otlp_metrics, otlp_logs,
	// otlp_profiles). The producer asks for topics to be auto-created;
	// whether they are is the brokers' auto.create.topics.enable.
	TracesTopic, MetricsTopic, LogsTopic, ProfilesTopic string

	// PartitionTracesByID splits each traces request into one record per
	// trace id, keyed by the trace id in hex (the Collector
	// kafkaexporter's partition_traces_by_id), so all spans of a trace
	// land in one partition, the Collector's.
	PartitionTracesByID bool

	// MaxMessageBytes is the largest record batch sent to the brokers
	// (default DefaultMaxMessageBytes); it must not exceed the topic's
	// max.message.bytes. Requests whose value would not fit, after
	// recordOverhead bytes of framing, are split between resources.
	MaxMessageBytes int

	// ProduceTimeout bounds how long Write waits for the acknowledgement
	// of a request (default DefaultProduceTimeout); a shorter deadline on
	// Write's context wins.
	ProduceTimeout time.Duration

	// MaxBufferedBytes bounds the bytes of records produced but not yet
	// acknowledged (default DefaultMaxBufferedBytes, and at least twice
	// MaxMessageBytes). A Write that would exceed it fails at once with
	// storage.ErrOverloaded.
	MaxBufferedBytes int

	// MaxBufferedRecords bounds the number of such records (default
	// 10000); exceeding it is also storage.ErrOverloaded.
	MaxBufferedRecords int

	// Compression is the record batch codec: "none" (the default, as the
	// Collector's kafkaexporter), "gzip", "snappy", "lz4" or "zstd".
	Compression string

	// TLS, when non-nil, connects to the brokers over TLS.
	TLS *tls.Config

	// SASL, when non-nil, authenticates to the brokers.
	SASL *SASL

	// ClientID is the Kafka client id (default "otlp-lite").
	ClientID string

	// DialTimeout bounds connecting to a broker (default 5 s).
	DialTimeout time.Duration

	// PartitionMetricsByResourceAttributes and
	// PartitionLogsByResourceAttributes write one record per resource,
	// keyed by a hash of its attributes (the Collector's
	// partition_metrics_by_resource_attributes and
	// partition_logs_by_resource_attributes), so one source's data stays
	// in one partition.
	PartitionMetricsByResourceAttributes, PartitionLogsByResourceAttributes bool

	// PartitionLogsByTraceID writes one logs record per trace id, keyed by
	// the trace id in hex, log records without one unkeyed (the
	// Collector's partition_logs_by_trace_id). It excludes
	// PartitionLogsByResourceAttributes.
	PartitionLogsByTraceID bool

	// TopicFromAttribute, when set, names a resource attribute whose
	// string value is the topic of the resource's data (the Collector's
	// topic_from_attribute): requests are written one record per resource
	// (per trace, with PartitionTracesByID), to the signal's topic when
	// the attribute is absent. Clients then choose topics: with
	// auto.create.topics.enable they can create them.
	TopicFromAttribute string

	// TopicPerTenant, when set, is a pattern naming the topic of each
	// write from its tenant (otlp.TenantFrom; a write without one
	// belongs to otlp.DefaultTenant): "{topic}" stands for the
	// signal's topic and "{tenant}" for the tenant, e.g.
	// "{topic}_{tenant}" sends team-a's spans to otlp_spans_team-a. Both
	// are required (see CheckTopicPerTenant). It excludes
	// TopicFromAttribute.
	TopicPerTenant string

	// Encoding is the record format: "otlp_proto" (the default) or
	// "otlp_json" (the Collector's encoding option).
	Encoding string

	// Headers are added to every record (the Collector's record_headers).
	Headers []Header

	// Hasher is the key partitioner's hash (the Collector's
	// record_partitioner.sticky_key.hasher): HasherSaramaCompat (the
	// default, as the Collector's) or HasherMurmur2 (the Java client's).
	Hasher string

	// Logger, when non-nil, receives the Kafka client's log (connection
	// failures, retries, metadata changes) at the levels it enables, with
	// the attribute component=kafka.
	Logger *slog.Logger

	// PerSignal holds the options of each signal (indexed by
	// storage.Signal) of the Collector's traces::, metrics::, logs:: and
	// profiles:: sections, besides the topic (above).
	PerSignal [otlp.MaxSignal + 1]SignalConfig

	// IncludeMetadataKeys names client metadata keys (the request headers
	// the receiver passes, storage.MetadataFrom) copied into every record
	// as headers, one per value, named as listed here, after Headers (the
	// Collector's include_metadata_keys). See MetadataKeys.
	IncludeMetadataKeys []string

	// Partitioner is the record partitioner (the Collector's
	// record_partitioner): PartitionerStickyKey (the default: keyed
	// records by the hash of their key, Hasher), PartitionerRoundRobin or
	// PartitionerLeastBackup (both ignore keys).
	Partitioner string

	// RequiredAcks is the producer's acks (the Collector's
	// producer.required_acks): AcksAll ("" too; "-1" is its alias), the
	// default, with the idempotent producer; or AcksLeader ("1"), without
	// it. "0" is refused: see CheckRequiredAcks.
	RequiredAcks string

	// CompressionLevel is the codec's level (the Collector's
	// producer.compression_params.level); 0 and -1 mean the codec's
	// default. See CheckCompressionLevel.
	CompressionLevel int

	// NoAutoTopicCreation stops the producer from asking the brokers to
	// create missing topics (the Collector's
	// producer.allow_auto_topic_creation: false); writes to a missing
	// topic then fail as unavailable until it exists.
	NoAutoTopicCreation bool

	// MaxClientTopics bounds the distinct topics clients may name, through
	// TopicFromAttribute, a signal's TopicFromMetadataKey, or with
	// TopicPerTenant a tenant name the client chose
	// (otlp.WithClientTenant), over the life of the Sink (default
	// DefaultMaxClientTopics): with
	// auto.create.topics.enable every new name creates a topic, and a
	// client must not be able to create them without end. A write naming
	// a topic beyond it is refused (storage.ErrRejected), counted in
	// otlplite_kafka_produce_refusals_total{reason="client_topic_limit"}.
	MaxClientTopics int

	// Metrics receives the sink's otlplite_kafka_produce_* and
	// otlplite_kafka_keys_* metrics; nil means a private set.
	Metrics *metrics.Set

	// KeysReadTimeout bounds ReadKeys, the read-back of the idempotency
	// keys at start (default DefaultKeysReadTimeout); negative: ReadKeys
	// reads nothing (the window of keys is in memory only).
	KeysReadTimeout time.Duration

	// MaxPendingKeyBytes bounds ReadKeys' memory for keys whose parts are
	// not all read yet (default DefaultMaxPendingKeyBytes); a key that
	// does not fit is not reported, each of its records counted in
	// otlplite_kafka_keys_skipped_total{reason="pending_limit"}.
	MaxPendingKeyBytes int64
}

// SignalConfig is one signal's options beyond its topic.
type SignalConfig struct {
	// TopicFromMetadataKey names a client metadata key whose first value
	// is the topic of the signal's records (the Collector's
	// topic_from_metadata_key). It takes precedence over
	// TopicFromAttribute and the signal's topic, as in the Collector.
	// The value must be a legal Kafka topic name and counts against
	// MaxClientTopics; otherwise the write is refused.
	TopicFromMetadataKey string
	// MessageKeyFromMetadataKey names a client metadata key whose first
	// value, if not empty, is the key of the signal's records that no
	// partition_* option keys (the Collector's
	// message_key_from_metadata_key); it excludes those options.
	MessageKeyFromMetadataKey string
	// Encoding overrides Config.Encoding for this signal.
	Encoding string
}

// Header is a Kafka record header.
type Header struct {
	Key, Value string
}

// Encodings of Config.Encoding, the Collector's names (internal/kafkaconn,
// shared with the Kafka source).
const (
	EncodingProto = kafkaconn.EncodingProto
	EncodingJSON  = kafkaconn.EncodingJSON
)

// SASL configures SASL authentication (internal/kafkaconn, shared with
// the Kafka source).
type SASL = kafkaconn.SASL

// Sink produces OTLP requests to Kafka. It is safe for concurrent use.
type Sink struct {
	cl       *kgo.Client
	topics   [otlp.MaxSignal + 1]string
	byTrace  bool
	byAttrs  [otlp.MaxSignal + 1]bool
	logsByID bool
	json     [otlp.MaxSignal + 1]bool
	headers  []kgo.RecordHeader
	// The client metadata options (metadata.go).
	metaHeaders     []string
	topicMetaKey    [otlp.MaxSignal + 1]string
	keyMetaKey      [otlp.MaxSignal + 1]string
	maxClientTopics int
	m               producerMetrics
	hashers         sync.Pool // *attrHasher
	// topicAttr is TopicFromAttribute; topicNames holds the topics
	// clients named, through it or through a TopicFromMetadataKey, at
	// most maxClientTopics (topicMu guards it).
	topicAttr  string
	topicMu    sync.RWMutex
	topicNames map[string]string
	// tenantPattern is TopicPerTenant; tenantTopics interns the topics
	// it yields per signal and tenant (tenantMu guards it).
	tenantPattern string
	tenantMu      sync.RWMutex
	tenantTopics  map[tenantTopicKey]string
	limit         int // largest record value
	timeout       time.Duration
	closed        atomic.Bool
	inflight      sync.WaitGroup
	batches       sync.Pool // *batch
	splits        sync.Pool // *otlpdecode.TraceSplitter
	// ReadKeys' settings (keyed.go): its time and memory bounds, its
	// counters.
	keysTimeout time.Duration
	maxPending  int64
	km          keysMetrics
	pingFailed  atomic.Bool
}

var _ storage.Sink = (*Sink)(nil)

// Open validates cfg and creates the producer. It does not wait for the
// brokers: a Sink opened while they are down refuses writes with
// storage.ErrUnavailable until they are reachable. Use Ping to check them.
func Open(cfg Config) (*Sink, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("kafka: no brokers configured")
	}
	for _, b := range cfg.Brokers {
		if _, _, err := net.SplitHostPort(b); err != nil {
			return nil, fmt.Errorf("kafka: bad broker address %q: want host:port", b)
		}
	}
	s := &Sink{
		topics:  [otlp.MaxSignal + 1]string{storage.Traces: cfg.TracesTopic, storage.Metrics: cfg.MetricsTopic, storage.Logs: cfg.LogsTopic, storage.Profiles: cfg.ProfilesTopic},
		byTrace: cfg.PartitionTracesByID,
		timeout: cfg.ProduceTimeout,
		m:       newProducerMetrics(cfg.Metrics),
		km:      newKeysMetrics(cfg.Metrics),

		keysTimeout: cmp.Or(cfg.KeysReadTimeout, DefaultKeysReadTimeout),
		maxPending:  cmp.Or(cfg.MaxPendingKeyBytes, DefaultMaxPendingKeyBytes),
	}
	if err := s.setProducerOptions(&cfg); err != nil {
		return nil, err
	}
	for _, sig := range storage.Signals {
		if s.topics[sig] == "" {
			s.topics[sig] = sig.Info().KafkaTopic
		}
	}
	if s.timeout <= 0 {
		s.timeout = DefaultProduceTimeout
	}
	maxMsg := cfg.MaxMessageBytes
	if maxMsg == 0 {
		maxMsg = DefaultMaxMessageBytes
	}
	if maxMsg < 1024 || maxMsg > 1<<30 {
		return nil, fmt.Errorf("kafka: MaxMessageBytes %d out of range [1024, 1 GiB]", maxMsg)
	}
	s.limit = maxMsg - recordOverhead
	maxBuf := cfg.MaxBufferedBytes
	if maxBuf <= 0 {
		maxBuf = DefaultMaxBufferedBytes
	}
	maxBuf = max(maxBuf, 2*maxMsg)
	maxRecs := cfg.MaxBufferedRecords
	if maxRecs <= 0 {
		maxRecs = 10000
	}
	codec, err := parseCompression(cfg.Compression)
	if err != nil {
		return nil, err
	}
	if l := cfg.CompressionLevel; l != 0 && l != -1 {
		// As the Collector's franz_client.go (lines 58-63).
		codec = codec.WithLevel(l)
	}
	part, err := partitioner(cfg.Partitioner, cfg.Hasher)
	if err != nil {
		return nil, err
	}
	opts := []kgo.Opt{
		kgo.RecordPartitioner(part),
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(cmp.Or(cfg.ClientID, kafkaconn.DefaultClientID)),
		kgo.DialTimeout(cmp.Or(max(cfg.DialTimeout, 0), kafkaconn.DefaultDialTimeout)),
		// As the Collector (franz_client.go commonOpts): some brokers
		// claim to support KIP-714 client metrics and then fail them.
		kgo.DisableClientMetrics(),
		kgo.ProducerBatchMaxBytes(int32(maxMsg)),
		kgo.ProducerBatchCompression(codec),
		kgo.MaxBufferedBytes(maxBuf),
		kgo.MaxBufferedRecords(maxRecs),
		// The broker's own wait for the replicas, and how long a record
		// may wait in the client before it is failed.
		// (franz-go's minimum is 1 s; a shorter ProduceTimeout is still
		// enforced through each record's context.)
		kgo.ProduceRequestTimeout(max(s.timeout, time.Second)),
		kgo.RecordDeliveryTimeout(max(s.timeout, time.Second)),
		// Without this a record already sent to a broker that then
		// vanished can never be failed (the client cannot know whether it
		// was written), and Write would block until the broker returns.
		// With it, the record fails at its deadline and the client
		// retries: at-least-once, a duplicate at worst.
		kgo.AllowIdempotentProduceCancellation(),
		// Retry a dead broker quickly: Write's deadline, not a backoff
		// schedule, decides when to give up.
		kgo.RetryBackoffFn(func(tries int) time.Duration {
			return min(time.Duration(tries)*100*time.Millisecond, time.Second)
		}),
	}
	if !cfg.NoAutoTopicCreation {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	if cfg.RequiredAcks == AcksLeader {
		// As the Collector (franz_client.go lines 86-88): the idempotent
		// producer needs acks=all. Kafka acknowledges once the leader
		// has the records: a leader lost before its followers copied
		// them loses data the client was told is stored.
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck()))
	} else {
		// acks=all with the idempotent producer (franz-go's default when
		// acks=all): the broker de-duplicates the client's own retries,
		// so a retry inside one Write never stores a record twice.
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	}
	conn, err := kafkaconn.Opts(cfg.Logger, cfg.TLS, cfg.SASL)
	if err != nil {
		return nil, err
	}
	opts = append(opts, conn...)
	s.cl, err = kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: cannot create client: %w", err)
	}
	return s, nil
}

// setProducerOptions checks and applies the Collector's producer options.
// Validate checks cfg as Open does, without creating a client, so that a
// command can refuse a bad configuration before it starts anything.
func (cfg Config) Validate() error {
	if len(cfg.Brokers) == 0 {
		return errors.New("kafka: no brokers configured")
	}
	for _, b := range cfg.Brokers {
		if _, _, err := net.SplitHostPort(b); err != nil {
			return fmt.Errorf("kafka: bad broker address %q: want host:port", b)
		}
	}
	if err := (&Sink{}).setProducerOptions(&cfg); err != nil {
		return err
	}
	if m := cfg.MaxMessageBytes; m != 0 && (m < 1024 || m > 1<<30) {
		return fmt.Errorf("kafka: MaxMessageBytes %d out of range [1024, 1 GiB]", m)
	}
	if cfg.ProduceTimeout < 0 || cfg.MaxBufferedBytes < 0 {
		return errors.New("kafka: ProduceTimeout and MaxBufferedBytes must not be negative")
	}
	if _, err := parseCompression(cfg.Compression); err != nil {
		return err
	}
	if _, err := partitioner(cfg.Partitioner, cfg.Hasher); err != nil {
		return err
	}
	if cfg.SASL != nil {
		if _, err := kafkaconn.Mechanism(cfg.SASL); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sink) setProducerOptions(cfg *Config) error {
	if cfg.PartitionLogsByResourceAttributes && cfg.PartitionLogsByTraceID {
		// As the Collector's config validation.
		return errors.New("kafka: PartitionLogsByResourceAttributes and PartitionLogsByTraceID cannot both be set")
	}
	s.byAttrs[storage.Metrics] = cfg.PartitionMetricsByResourceAttributes
	s.byAttrs[storage.Logs] = cfg.PartitionLogsByResourceAttributes
	s.logsByID = cfg.PartitionLogsByTraceID
	for _, sig := range storage.Signals {
		// The Collector has an encoding per signal; Encoding is the
		// default of all four.
		enc := cmp.Or(cfg.signalConfig(sig).Encoding, cfg.Encoding)
		switch enc {
		case "", EncodingProto:
		case EncodingJSON:
			s.json[sig] = true
		default:
			return fmt.Errorf("kafka: unknown %s encoding %q: want otlp_proto or otlp_json", sig, enc)
		}
	}
	if err := s.setMetadataOptions(cfg); err != nil {
		return err
	}
	for _, h := range cfg.Headers {
		if h.Key == "" {
			return errors.New("kafka: a record header needs a name")
		}
		s.headers = append(s.headers, kgo.RecordHeader{Key: h.Key, Value: []byte(h.Value)})
	}
	s.topicAttr = cfg.TopicFromAttribute
	s.topicNames = make(map[string]string)
	if cfg.TopicPerTenant != "" {
		if cfg.TopicFromAttribute != "" {
			// A resource attribute would let one tenant's client pick
			// another tenant's topic.
			return errors.New("kafka: TopicPerTenant and TopicFromAttribute cannot both be set: a resource attribute would let a tenant's clients write to another tenant's topic")
		}
		if err := CheckTopicPerTenant(cfg.TopicPerTenant); err != nil {
			return err
		}
		for _, sig := range storage.Signals {
			topic := cfg.signalTopic(sig)
			if n := len(expandTopic(cfg.TopicPerTenant, topic, "")) + otlp.MaxTenantNameLength; n > maxTopicLength {
				return fmt.Errorf("kafka: TopicPerTenant %q: with the %s topic %q and a tenant name of %d bytes (the longest allowed), a topic would be %d bytes, more than Kafka's %d", cfg.TopicPerTenant, sig, topic, otlp.MaxTenantNameLength, n, maxTopicLength)
			}
		}
		if err := checkTenantTopicsApart(cfg); err != nil {
			return err
		}
		s.tenantPattern = cfg.TopicPerTenant
		s.tenantTopics = make(map[tenantTopicKey]string)
	}
	return nil
}

// signalTopic is the configured topic of sig, or its default.
func (cfg *Config) signalTopic(sig storage.Signal) string {
	t := [otlp.MaxSignal + 1]string{storage.Traces: cfg.TracesTopic, storage.Metrics: cfg.MetricsTopic, storage.Logs: cfg.LogsTopic, storage.Profiles: cfg.ProfilesTopic}[sig]
	if t == "" {
		t = sig.Info().KafkaTopic
	}
	return t
}

// maxTopicLength is Kafka's limit on a topic name (Topic.MAX_NAME_LENGTH,
// 249: a partition's directory name, topic-partition, must fit in 255).
const maxTopicLength = 249

// CheckTopicPerTenant says why pattern cannot be Config.TopicPerTenant, if
// it cannot: it must hold "{tenant}" and "{topic}" once each, and its
// other characters must be ones a Kafka topic allows (A-Z a-z 0-9 . _ -).
// Tenant names are made of those same characters (otlp.CheckTenantName),
// so every tenant yields a legal topic; Open also checks that the signals'
// topics keep tenants apart, and Write refuses tenant names with a '.'
// (see topicFold): two tenants never share a topic.
func CheckTopicPerTenant(pattern string) error {
	if strings.Count(pattern, "{tenant}") != 1 {
		return fmt.Errorf("kafka: topic-per-tenant pattern %q: want {tenant} exactly once (it is replaced by the tenant name)", pattern)
	}
	if strings.Count(pattern, "{topic}") != 1 {
		// Without it every signal of a tenant would share one topic,
		// which a consumer cannot split: the Collector's kafkareceiver
		// reads one signal per topic, as -kafka-consume does.
		return fmt.Errorf("kafka: topic-per-tenant pattern %q: want {topic} exactly once (it is replaced by the signal's topic, so that traces, metrics and logs stay on separate topics)", pattern)
	}
	rest := strings.NewReplacer("{tenant}", "", "{topic}", "").Replace(pattern)
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
			continue
		}
		return fmt.Errorf("kafka: topic-per-tenant pattern %q: byte 0x%02x is not allowed in a Kafka topic (A-Z a-z 0-9 . _ -)", pattern, c)
	}
	return nil
}

// Kafka does not tell '.' from '_' in topic names: a topic whose name
// equals another's once every '.' is read as '_' cannot be created beside
// it (Topic.hasCollision; both would export the same metric names). So
// TopicPerTenant's topics are kept apart under that reading, not only
// byte for byte:
//
//   - a tenant name with a '.' is refused (checkTopicTenant): a.b's topic
//     would collide with a_b's, whichever was created first winning the
//     name, the other's writes failing for good. Every name without '.'
//     maps to a topic of its own: the tenant's bytes appear in it as they
//     are.
//   - two signals' topics must differ outside the tenant's place
//     (checkTenantTopicsApart): with "{tenant}_{topic}" and the topics
//     "spans" and "x_spans", tenant "a_x"'s spans and tenant "a"'s
//     would share "a_x_spans".

// topicFold is name as Kafka compares topics: '.' read as '_'.
func topicFold(name string) string { return strings.ReplaceAll(name, ".", "_") }

// checkTopicTenant says why tenant cannot name a TopicPerTenant topic, if
// it cannot. The error wraps storage.ErrRejected (the client must not
// retry it) and storage.ErrNotStored. It does not quote the name, which
// comes from a client.
func checkTopicTenant(tenant string) error {
	if i := strings.IndexByte(tenant, '.'); i >= 0 {
		return storage.NotStored(fmt.Errorf("kafka: the tenant name has a '.' (byte %d), which Kafka does not tell from '_' in a topic name: its topic would collide with the topic of the tenant named with '_' there; with a topic per tenant, tenant names cannot contain '.': %w", i+1, storage.ErrRejected))
	}
	return nil
}

// admitTenant returns the TopicPerTenant topic of a write of signal by
// tenant (hasTenant false: DefaultTenant), or why it is refused: a name
// with a '.' (checkTopicTenant), or a name a client chose
// (otlp.WithClientTenant) whose topic would be one more than
// MaxClientTopics allows. With auto.create.topics.enable every new tenant
// name creates topics on the brokers, so names from a header are counted
// with every other topic a client may name; the operator's tenants are
// not. Every refusal wraps storage.ErrRejected and storage.ErrNotStored.
func (s *Sink) admitTenant(ctx context.Context, signal storage.Signal, tenant string, hasTenant bool) (string, error) {
	if !hasTenant {
		tenant = otlp.DefaultTenant
	}
	if err := checkTopicTenant(tenant); err != nil {
		return "", err
	}
	topic := s.tenantTopic(signal, tenant)
	if otlp.TenantFromClient(ctx) {
		if _, err := s.admitTopic(topic, "a tenant name a client sent"); err != nil {
			return "", storage.NotStored(err)
		}
	}
	return topic, nil
}

// checkTenantTopicsApart says why cfg's TopicPerTenant could give two
// tenants of different signals one topic (under topicFold), if it could.
// Each signal's topics are prefix + tenant + suffix; two signals' topics
// can meet only if one prefix starts the other and one suffix ends the
// other. Signals whose own topics already fold to one name are the
// operator's choice, and still keep tenants apart.
func checkTenantTopicsApart(cfg *Config) error {
	type parts struct {
		sig            storage.Signal
		prefix, suffix string
	}
	var all []parts
	for _, sig := range storage.Signals {
		full := topicFold(expandTopic(cfg.TopicPerTenant, cfg.signalTopic(sig), "{tenant}"))
		prefix, suffix, _ := strings.Cut(full, "{tenant}")
		all = append(all, parts{sig, prefix, suffix})
	}
	for i, a := range all {
		for _, b := range all[i+1:] {
			if a.prefix == b.prefix && a.suffix == b.suffix {
				continue
			}
			pre := strings.HasPrefix(a.prefix, b.prefix) || strings.HasPrefix(b.prefix, a.prefix)
			suf := strings.HasSuffix(a.suffix, b.suffix) || strings.HasSuffix(b.suffix, a.suffix)
			if pre && suf {
				return fmt.Errorf("kafka: TopicPerTenant %q: the %s topic %q and the %s topic %q differ only next to {tenant}, so two tenants' topics could be one (Kafka reads '.' as '_'); give the signals topics that differ at the start or at the end, as the defaults do", cfg.TopicPerTenant, a.sig, cfg.signalTopic(a.sig), b.sig, cfg.signalTopic(b.sig))
			}
		}
	}
	return nil
}

func expandTopic(pattern, topic, tenant string) string {
	return strings.NewReplacer("{topic}", topic, "{tenant}", tenant).Replace(pattern)
}

// tenantTopicKey names an interned TopicPerTenant topic.
type tenantTopicKey struct {
	signal storage.Signal
	tenant string
}

// tenantTopic is the TopicPerTenant topic of tenant's writes of signal.
func (s *Sink) tenantTopic(signal storage.Signal, tenant string) string {
	k := tenantTopicKey{signal, tenant}
	s.tenantMu.RLock()
	t, ok := s.tenantTopics[k]
	s.tenantMu.RUnlock()
	if ok {
		return t
	}
	t = expandTopic(s.tenantPattern, s.topics[signal], tenant)
	s.tenantMu.Lock()
	// Bounded: beyond it a topic is built per write, which costs an
	// allocation, not memory held. (Tenants are the operator's, or
	// bounded by the tenant registry: no client picks them freely.)
	if len(s.tenantTopics) < maxTenantTopics {
		s.tenantTopics[k] = t
	}
	s.tenantMu.Unlock()
	return t
}

// maxTenantTopics bounds the interned TopicPerTenant topics.
const maxTenantTopics = 1024

// topicFor is the TopicFromAttribute topic of a request piece, "" for the
// signal's own.
func (s *Sink) topicFor(msg []byte) string {
	v, ok := stringAttr(msg, s.topicAttr)
	if !ok {
		return ""
	}
	s.topicMu.RLock()
	t, ok := s.topicNames[string(v)]
	s.topicMu.RUnlock()
	if ok {
		return t
	}
	// Not admitted yet: Write checks it (admitTopic).
	return string(v)
}

func parseCompression(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "", "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("kafka: unknown compression %q: want none, gzip, snappy, lz4 or zstd", name)
}

// Ping checks that a broker answers (and, with SASL, accepts the
// credentials). Until a later Ping succeeds, ReadKeys then reads nothing
// (a receiver pings before it starts: brokers down then delay its start
// by the ping, not by the keys' read as well).
func (s *Sink) Ping(ctx context.Context) error {
	if err := s.cl.Ping(ctx); err != nil {
		s.pingFailed.Store(true)
		return fmt.Errorf("cannot reach Kafka brokers: %w", err)
	}
	s.pingFailed.Store(false)
	return nil
}

// Topic returns the topic records of signal go to (with TopicPerTenant,
// the {topic} of its pattern).
func (s *Sink) Topic(signal storage.Signal) string {
	if int(signal) >= len(s.topics) {
		return ""
	}
	return s.topics[signal]
}
