package service

import (
	"fmt"
	"strings"
	"time"

	"github.com/otlp-lite/otlp-lite/internal/redact"

	"github.com/otlp-lite/otlp-lite/otlp"
)

// KafkaConfig configures the Kafka sink (Storage "kafka") under the names
// of the OpenTelemetry Collector kafkaexporter's options (v0.155.0), and
// how the sink and the source connect (SASL, TLS). Built with -tags
// nokafka, the sink cannot be used and these are ignored.
type KafkaConfig struct {
	// Brokers are comma-separated seed brokers, host:port (-kafka-brokers,
	// default "localhost:9092").
	Brokers string
	// TopicTraces, TopicMetrics, TopicLogs, TopicProfiles are the
	// signals' topics (-kafka-topic-*, defaults the Collector's:
	// otlp_spans, otlp_metrics, otlp_logs, otlp_profiles).
	TopicTraces, TopicMetrics, TopicLogs, TopicProfiles string
	// PartitionTracesByID (-kafka-partition-traces-by-id, alias
	// -kafka-key-by-trace-id), PartitionMetricsByResourceAttributes,
	// PartitionLogsByResourceAttributes, PartitionLogsByTraceID
	// (-kafka-partition-*): how records are split and keyed; default false.
	PartitionTracesByID                  bool
	PartitionMetricsByResourceAttributes bool
	PartitionLogsByResourceAttributes    bool
	PartitionLogsByTraceID               bool
	// TopicFromAttribute (-kafka-topic-from-attribute) and TopicPerTenant
	// (-kafka-topic-per-tenant, a pattern of {topic} and {tenant}) name
	// topics from the data; default "".
	TopicFromAttribute, TopicPerTenant string
	// Encoding is otlp_proto or otlp_json (-kafka-encoding, default
	// otlp_proto).
	Encoding string
	// Headers are added to every record (-kafka-header name=value,
	// repeatable).
	Headers KafkaHeaders
	// PartitionerHasher is sarama_compat or murmur2
	// (-kafka-partitioner-hasher, default sarama_compat; it belongs to the
	// sticky_key partitioner, and is dropped with another one unless set
	// to something else).
	PartitionerHasher string
	// MaxMessageBytes (-kafka-max-message-bytes), ProduceTimeout
	// (-kafka-produce-timeout), MaxBufferedBytes (-kafka-max-buffered-bytes):
	// defaults kafka.Default*.
	MaxMessageBytes  int
	ProduceTimeout   time.Duration
	MaxBufferedBytes int
	// Compression is none, gzip, snappy, lz4 or zstd (-kafka-compression,
	// default none), at CompressionLevel (-kafka-compression-level, 0: the
	// codec's default).
	Compression      string
	CompressionLevel int
	// IncludeMetadataKeys are request headers copied into records,
	// comma-separated (-kafka-include-metadata-keys, default "").
	IncludeMetadataKeys string
	// PerSignal are the per-signal options (-kafka-topic-from-metadata-key-SIGNAL,
	// -kafka-message-key-from-metadata-key-SIGNAL, -kafka-encoding-SIGNAL).
	PerSignal [otlp.MaxSignal + 1]KafkaSignalConfig
	// Partitioner is sticky_key, round_robin or least_backup
	// (-kafka-partitioner, default sticky_key).
	Partitioner string
	// RequiredAcks is all or 1 (-kafka-required-acks, default all).
	RequiredAcks string
	// FlushMaxMessages bounds records awaiting acknowledgement
	// (-kafka-flush-max-messages, default 10000).
	FlushMaxMessages int
	// AllowAutoTopicCreation (-kafka-allow-auto-topic-creation, default
	// true).
	AllowAutoTopicCreation bool
	// ClientID (-kafka-client-id, default "otlp-lite").
	ClientID string
	// MaxClientTopics bounds topics clients may name
	// (-kafka-max-client-topics, default kafka.DefaultMaxClientTopics).
	MaxClientTopics int
	// KeysReadTimeout bounds the read-back of the idempotency keys the
	// records hold, when serve starts (-kafka-keys-read-timeout, default
	// kafka.DefaultKeysReadTimeout; 0: not read, the window of keys is in
	// memory only).
	KeysReadTimeout time.Duration

	// SASLMechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	// (-kafka-sasl-mechanism, default "": no SASL), with SASLUsername and
	// SASLPassword (-kafka-sasl-username, -kafka-sasl-password).
	SASLMechanism, SASLUsername, SASLPassword string
	// TLS connects over TLS (-kafka-tls, implied by the other TLS fields):
	// TLSCA, TLSCert, TLSKey, TLSServerName (-kafka-tls-ca, -kafka-tls-cert,
	// -kafka-tls-key, -kafka-tls-server-name), TLSInsecureSkipVerify
	// (-kafka-tls-insecure-skip-verify).
	TLS                    bool
	TLSCA, TLSCert, TLSKey string
	TLSServerName          string
	TLSInsecureSkipVerify  bool
	// LogLevel is the least severe Kafka client message logged
	// (-kafka-log-level, default warn).
	LogLevel string
}

// KafkaHeader is one -kafka-header.
type KafkaHeader struct{ Key, Value string }

// KafkaHeaders are the -kafka-header values; as a flag.Value, each Set
// adds one.
type KafkaHeaders []KafkaHeader

// Set adds the header v, name=value. The value of a header whose name is
// a secret (redact.Name: Authorization, X-Api-Key...) is hidden in every
// output from now on.
func (h *KafkaHeaders) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, got %q", redact.Value(name, v))
	}
	if redact.Name(name) {
		redact.Register(value)
	}
	*h = append(*h, KafkaHeader{Key: name, Value: value})
	return nil
}

// String shows the headers as given, name=value separated by spaces.
func (h *KafkaHeaders) String() string { return h.show(false) }

// Redacted shows the headers with the values of those whose names are
// secrets hidden.
func (h *KafkaHeaders) Redacted() string { return h.show(true) }

func (h *KafkaHeaders) show(redacted bool) string {
	var parts []string
	for _, x := range *h {
		v := x.Value
		if redacted {
			v = redact.Value(x.Key, v)
		}
		parts = append(parts, x.Key+"="+v)
	}
	return strings.Join(parts, " ")
}

// KafkaSignalConfig are one signal's Kafka sink options.
type KafkaSignalConfig struct {
	TopicFromMetadataKey, MessageKeyFromMetadataKey, Encoding string
}

// KafkaConsumeConfig configures the Kafka source: OTLP records read from
// Kafka topics in a consumer group and stored as received requests. Off
// unless Brokers is set. Its connection is KafkaConfig's SASL and TLS.
type KafkaConsumeConfig struct {
	// Brokers are comma-separated host:port (-kafka-consume, default "":
	// off).
	Brokers string
	// Group is the consumer group (-kafka-consume-group, default
	// "otlp-lite").
	Group string
	// Topics are each signal's topic, or with a leading ^ a regular
	// expression (-kafka-consume-topic-SIGNAL, defaults the Collector's;
	// empty: not consumed).
	Topics [otlp.MaxSignal + 1]string
	// ExcludeTopics are comma-separated regular expressions
	// (-kafka-consume-exclude-topics, default "").
	ExcludeTopics string
	// Encoding is auto, otlp_proto or otlp_json (-kafka-consume-encoding,
	// default auto).
	Encoding string
	// Start is earliest or latest (-kafka-consume-start, default earliest).
	Start string
	// MaxPollRecords (-kafka-consume-max-poll-records) and Workers
	// (-kafka-consume-workers): defaults kafka.DefaultMaxPollRecords,
	// kafka.DefaultConsumeWorkers.
	MaxPollRecords, Workers int
	// SessionTimeout (-kafka-consume-session-timeout, default 45s) and
	// HeartbeatInterval (-kafka-consume-heartbeat-interval, default 0: a
	// third of it, at most 3s).
	SessionTimeout, HeartbeatInterval time.Duration
	// InstanceID is the static group membership (-kafka-consume-instance-id,
	// default "").
	InstanceID string
	// Balancer is cooperative-sticky, sticky, range or roundrobin
	// (-kafka-consume-balancer, default cooperative-sticky).
	Balancer string
	// FetchMaxBytes, FetchMaxPartitionBytes (default
	// kafka.DefaultFetchMaxBytes), FetchMinBytes (default 1), FetchMaxWait
	// (default 5s): -kafka-consume-fetch-*.
	FetchMaxBytes, FetchMaxPartitionBytes, FetchMinBytes int
	FetchMaxWait                                         time.Duration
	// MaxBatchBytes bounds a decompressed record batch
	// (-kafka-consume-max-batch-bytes, default 0: the larger of 64 MiB and
	// MaxRecvMsgSize).
	MaxBatchBytes int
	// MaxDecompressedBytes bounds batches held at once
	// (-kafka-consume-max-decompressed-bytes, default 0: four batches).
	MaxDecompressedBytes int64
	// DeadLetter keeps records that are not valid OTLP in
	// DataDir/kafka-dead-letter (-kafka-consume-dead-letter, default true),
	// bounded by DeadLetterMaxBytes (-kafka-consume-dead-letter-max-bytes,
	// default deadletter.DefaultMaxBytes) and DeadLetterMaxAge
	// (-kafka-consume-dead-letter-max-age, default deadletter.DefaultMaxAge).
	DeadLetter         bool
	DeadLetterMaxBytes int64
	DeadLetterMaxAge   time.Duration
}
