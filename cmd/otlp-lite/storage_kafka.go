//go:build !nokafka

// The -kafka-* flags of the Kafka sink (service.KafkaConfig) and source
// (service.KafkaConsumeConfig); a -tags nokafka build has none.

package main

import (
	"flag"

	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/service"
	"github.com/otlp-lite/otlp-lite/storage"
)

// registerKafkaFlags defines the -kafka-* flags of the sink and of how to
// reach the brokers on fs. The producer options are the OpenTelemetry
// Collector kafkaexporter's (v0.155.0), under the same names with dashes
// (a per-signal option traces::X is -kafka-X-traces).
func registerKafkaFlags(fs *flag.FlagSet, k *service.KafkaConfig) {
	fs.StringVar(&k.Brokers, "kafka-brokers", k.Brokers, "with -storage kafka: comma-separated seed brokers, host:port")
	fs.StringVar(&k.TopicTraces, "kafka-topic-traces", k.TopicTraces, "Kafka topic for traces (the OpenTelemetry Collector kafkareceiver's default)")
	fs.StringVar(&k.TopicMetrics, "kafka-topic-metrics", k.TopicMetrics, "Kafka topic for metrics")
	fs.StringVar(&k.TopicLogs, "kafka-topic-logs", k.TopicLogs, "Kafka topic for logs")
	fs.StringVar(&k.TopicProfiles, "kafka-topic-profiles", k.TopicProfiles, "Kafka topic for profiles (OTLP profiles, Alpha; the kafkaexporter's default)")
	fs.BoolVar(&k.PartitionTracesByID, "kafka-partition-traces-by-id", k.PartitionTracesByID, "one record per trace, keyed by the trace id in hex, so a trace stays in one partition, the one the Collector's kafkaexporter picks (its partition_traces_by_id)")
	fs.BoolVar(&k.PartitionTracesByID, "kafka-key-by-trace-id", k.PartitionTracesByID, "the former name of -kafka-partition-traces-by-id")
	fs.BoolVar(&k.PartitionMetricsByResourceAttributes, "kafka-partition-metrics-by-resource-attributes", k.PartitionMetricsByResourceAttributes, "one metrics record per resource, keyed by a hash of its attributes as the Collector's (partition_metrics_by_resource_attributes)")
	fs.BoolVar(&k.PartitionLogsByResourceAttributes, "kafka-partition-logs-by-resource-attributes", k.PartitionLogsByResourceAttributes, "one logs record per resource, keyed by a hash of its attributes as the Collector's (partition_logs_by_resource_attributes)")
	fs.BoolVar(&k.PartitionLogsByTraceID, "kafka-partition-logs-by-trace-id", k.PartitionLogsByTraceID, "one logs record per trace id, keyed by it in hex (partition_logs_by_trace_id); excludes -kafka-partition-logs-by-resource-attributes")
	fs.StringVar(&k.TopicFromAttribute, "kafka-topic-from-attribute", k.TopicFromAttribute, "resource attribute whose string value names the topic of its resource's data (topic_from_attribute); without it, the signal's topic")
	// The pattern is checked with the other -kafka-* values (kafka.Config.Validate).
	fs.StringVar(&k.TopicPerTenant, "kafka-topic-per-tenant", k.TopicPerTenant, "`pattern` naming each tenant's topic (see Tenants): {topic} is the signal's topic, {tenant} the tenant, e.g. {topic}_{tenant} sends team-a's spans to otlp_spans_team-a; data without a tenant goes to the topic of "+otlp.DefaultTenant+"; excludes -kafka-topic-from-attribute")
	fs.StringVar(&k.Encoding, "kafka-encoding", k.Encoding, "record format: otlp_proto or otlp_json (the Collector's encoding names)")
	fs.Var(kafkaHeaders{&k.Headers}, "kafka-header", "`name=value` header added to every record (record_headers); repeatable")
	fs.StringVar(&k.PartitionerHasher, "kafka-partitioner-hasher", k.PartitionerHasher, "hash of keyed records' partitioner: sarama_compat (FNV-1a, the Collector's default) or murmur2 (the Java client's)")
	fs.IntVar(&k.MaxMessageBytes, "kafka-max-message-bytes", k.MaxMessageBytes, "largest Kafka record batch; larger requests are split between resources (keep it at or below the topic's max.message.bytes)")
	fs.DurationVar(&k.ProduceTimeout, "kafka-produce-timeout", k.ProduceTimeout, "how long a request waits for Kafka's acknowledgement before the client gets a retryable refusal")
	fs.DurationVar(&k.KeysReadTimeout, "kafka-keys-read-timeout", k.KeysReadTimeout, "at start, how long serve reads the idempotency keys of the records of the last -dedup-window-age back from the topics, so that a resend after a restart is not stored twice; 0: not read")
	fs.IntVar(&k.MaxBufferedBytes, "kafka-max-buffered-bytes", k.MaxBufferedBytes, "bytes of records awaiting acknowledgement; beyond it requests are refused as overloaded")
	fs.StringVar(&k.Compression, "kafka-compression", k.Compression, "record batch compression: none, gzip, snappy, lz4 or zstd")
	fs.IntVar(&k.CompressionLevel, "kafka-compression-level", k.CompressionLevel, "codec level (compression_params.level): 0 or -1 the codec's default; gzip -2 or 1-9, zstd any; the others none")
	fs.StringVar(&k.IncludeMetadataKeys, "kafka-include-metadata-keys", k.IncludeMetadataKeys, "comma-separated request headers (gRPC metadata or HTTP headers) copied into every record as headers, one per value, after -kafka-header (include_metadata_keys)")
	for _, sig := range storage.Signals {
		sc := &k.PerSignal[sig]
		fs.StringVar(&sc.TopicFromMetadataKey, "kafka-topic-from-metadata-key-"+sig.String(), sc.TopicFromMetadataKey, "request header whose first value names the topic of the "+sig.String()+" (topic_from_metadata_key); before -kafka-topic-from-attribute; at most -kafka-max-client-topics names")
		fs.StringVar(&sc.MessageKeyFromMetadataKey, "kafka-message-key-from-metadata-key-"+sig.String(), sc.MessageKeyFromMetadataKey, "request header whose first value keys the "+sig.String()+" records no -kafka-partition-* option keys (message_key_from_metadata_key)")
		fs.StringVar(&sc.Encoding, "kafka-encoding-"+sig.String(), sc.Encoding, "record format of the "+sig.String()+" (encoding); default -kafka-encoding")
	}
	fs.StringVar(&k.Partitioner, "kafka-partitioner", k.Partitioner, "record partitioner (record_partitioner): sticky_key (keyed records by their key's hash), round_robin or least_backup (both ignore keys)")
	fs.StringVar(&k.RequiredAcks, "kafka-required-acks", k.RequiredAcks, "acknowledgement a request waits for (required_acks): all (all in-sync replicas, idempotent producer) or 1 (the leader only: faster, loses data if the leader dies; the Collector's default)")
	fs.IntVar(&k.FlushMaxMessages, "kafka-flush-max-messages", k.FlushMaxMessages, "records awaiting acknowledgement; beyond it requests are refused as overloaded (flush_max_messages)")
	fs.BoolVar(&k.AllowAutoTopicCreation, "kafka-allow-auto-topic-creation", k.AllowAutoTopicCreation, "ask the brokers to create missing topics (allow_auto_topic_creation; the brokers' auto.create.topics.enable decides)")
	fs.StringVar(&k.ClientID, "kafka-client-id", k.ClientID, "Kafka client id of the producer, for the brokers' quotas and logs (client_id)")
	fs.IntVar(&k.MaxClientTopics, "kafka-max-client-topics", k.MaxClientTopics, "distinct topics clients may name through -kafka-topic-from-attribute or -kafka-topic-from-metadata-key-*; a request naming one more is refused (the Collector has no such bound)")
	// How to reach the brokers, shared by the sink and the source.
	fs.StringVar(&k.SASLMechanism, "kafka-sasl-mechanism", k.SASLMechanism, "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (empty: no SASL); for the sink and the source")
	fs.StringVar(&k.SASLUsername, "kafka-sasl-username", k.SASLUsername, "SASL username")
	fs.StringVar(&k.SASLPassword, "kafka-sasl-password", k.SASLPassword, "SASL password (default: the "+envName("kafka-sasl-password")+" environment variable)")
	fs.BoolVar(&k.TLS, "kafka-tls", k.TLS, "connect to the brokers over TLS (implied by the other -kafka-tls-* flags); for the sink and the source")
	fs.StringVar(&k.TLSCA, "kafka-tls-ca", k.TLSCA, "PEM file of CA certificates to verify the brokers with (default: the system roots)")
	fs.StringVar(&k.TLSCert, "kafka-tls-cert", k.TLSCert, "PEM client certificate for mutual TLS")
	fs.StringVar(&k.TLSKey, "kafka-tls-key", k.TLSKey, "PEM private key of -kafka-tls-cert")
	fs.StringVar(&k.TLSServerName, "kafka-tls-server-name", k.TLSServerName, "server name to verify the brokers' certificates against (default: the broker host)")
	fs.BoolVar(&k.TLSInsecureSkipVerify, "kafka-tls-insecure-skip-verify", k.TLSInsecureSkipVerify, "do not verify the brokers' certificates (testing only)")
	fs.StringVar(&k.LogLevel, "kafka-log-level", k.LogLevel, "least severe Kafka client message logged: debug, info, warn or error")
}

// registerKafkaConsumeFlags defines the Kafka source's flags in their own
// section.
func registerKafkaConsumeFlags(s *flagSections, c *service.KafkaConsumeConfig) {
	s.add("Kafka source (-kafka-consume)", func(fs *flag.FlagSet) {
		fs.StringVar(&c.Brokers, "kafka-consume", c.Brokers, "read OTLP records from these Kafka brokers (comma-separated host:port) in a consumer group and store them as received requests; TLS and SASL as set by the -kafka-tls-* and -kafka-sasl-* flags; empty: off")
		fs.StringVar(&c.Group, "kafka-consume-group", c.Group, "consumer group: instances in one group share the partitions")
		for _, sig := range otlp.Signals {
			fs.StringVar(&c.Topics[sig], "kafka-consume-topic-"+sig.String(), c.Topics[sig], "topic of "+sig.String()+" records (the Collector's default); beginning with ^: a regular expression matching every such topic, new ones found at the next metadata refresh (within 5m), as in the Collector's kafkareceiver; empty: not consumed")
		}
		fs.StringVar(&c.ExcludeTopics, "kafka-consume-exclude-topics", c.ExcludeTopics, "comma-separated regular expressions of topics not consumed although a ^expression topic matches them (the kafkareceiver's exclude_topics)")
		fs.StringVar(&c.Encoding, "kafka-consume-encoding", c.Encoding, "record format: auto (OTLP/JSON if it starts with '{', else protobuf), otlp_proto or otlp_json")
		fs.StringVar(&c.Start, "kafka-consume-start", c.Start, "where a group without committed offsets starts: earliest or latest (the kafkareceiver's initial_offset, whose default is latest)")
		fs.IntVar(&c.MaxPollRecords, "kafka-consume-max-poll-records", c.MaxPollRecords, "records read at once; all are stored and their offsets committed before the next read (at most this many are read again after a crash)")
		fs.IntVar(&c.Workers, "kafka-consume-workers", c.Workers, "records stored concurrently")
		fs.DurationVar(&c.SessionTimeout, "kafka-consume-session-timeout", c.SessionTimeout, "how long the group waits for a silent instance before giving its partitions to the others")
		fs.DurationVar(&c.HeartbeatInterval, "kafka-consume-heartbeat-interval", c.HeartbeatInterval, "how often an instance tells the group it is alive; 0: a third of the session timeout, at most 3s")
		fs.StringVar(&c.InstanceID, "kafka-consume-instance-id", c.InstanceID, "static group membership (KIP-345): a restart within the session timeout keeps its partitions without a rebalance; unique per instance; empty: dynamic")
		fs.StringVar(&c.Balancer, "kafka-consume-balancer", c.Balancer, "partition assignment: cooperative-sticky (only moved partitions pause), sticky, range or roundrobin; the same for every instance of the group")
		fs.IntVar(&c.FetchMaxBytes, "kafka-consume-fetch-max-bytes", c.FetchMaxBytes, "largest fetch response buffered per broker (the kafkareceiver's max_fetch_size)")
		fs.IntVar(&c.FetchMaxPartitionBytes, "kafka-consume-fetch-max-partition-bytes", c.FetchMaxPartitionBytes, "largest share of one partition in a fetch (max_partition_fetch_size)")
		fs.IntVar(&c.FetchMinBytes, "kafka-consume-fetch-min-bytes", c.FetchMinBytes, "bytes a broker gathers before it answers a fetch (min_fetch_size)")
		fs.DurationVar(&c.FetchMaxWait, "kafka-consume-fetch-max-wait", c.FetchMaxWait, "longest a broker holds a fetch to gather -kafka-consume-fetch-min-bytes (max_fetch_wait)")
		fs.IntVar(&c.MaxBatchBytes, "kafka-consume-max-batch-bytes", c.MaxBatchBytes, "largest size a compressed record batch may decompress to; a larger one (a decompression bomb) is logged, counted and skipped; 0: the larger of 64 MiB and -grpc-max-recv-msg-size")
		fs.Int64Var(&c.MaxDecompressedBytes, "kafka-consume-max-decompressed-bytes", c.MaxDecompressedBytes, "decompressed record batches held at once; past it fetching pauses until the records fetched are stored; 0: four times -kafka-consume-max-batch-bytes")
		fs.BoolVar(&c.DeadLetter, "kafka-consume-dead-letter", c.DeadLetter, "keep records that are not valid OTLP in <data-dir>/"+service.KafkaDeadLetterDir+" (read it with otlp-lite export -format proto); false: only log and count them")
		fs.Int64Var(&c.DeadLetterMaxBytes, "kafka-consume-dead-letter-max-bytes", c.DeadLetterMaxBytes, "size past which the oldest dead letters are deleted, so a flood of bad records cannot fill the disk; 0: no limit")
		fs.DurationVar(&c.DeadLetterMaxAge, "kafka-consume-dead-letter-max-age", c.DeadLetterMaxAge, "age past which dead letters are deleted; 0: no limit")
	})
}

// kafkaHeaders is the repeatable -kafka-header flag.
type kafkaHeaders struct{ *service.KafkaHeaders }

func (kafkaHeaders) repeatable() {}
