//go:build !nokafka

// The Kafka sink and its flags. Build with -tags nokafka to leave the Kafka
// client (github.com/twmb/franz-go) out of the binary; see
// storage_nokafka.go.

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// kafkaPasswordEnv is read when -kafka-sasl-password is not given, so the
// password need not appear in the process list.
const kafkaPasswordEnv = "OTLP_LITE_KAFKA_SASL_PASSWORD"

// registerKafkaFlags defines the -kafka-* flags on fs and returns the
// functions that check them, open the Kafka sink from them (for -storage
// kafka) and list the client metadata keys the sink reads (for the
// handler). open validates the flags, opens the sink and checks the
// brokers once; brokers that are down are logged, not fatal: the sink
// refuses writes as retryable until they come back.
//
// The producer options are the OpenTelemetry Collector kafkaexporter's
// (v0.155.0), under the same names with dashes (a per-signal option
// traces::X is -kafka-X-traces), and key and partition records as it does
// (storage/kafka/keys.go, metadata.go).
func registerKafkaFlags(fs *flag.FlagSet) kafkaFlags {
	var (
		brokers                   string
		tracesTopic, metricsTopic string
		logsTopic, profilesTopic  string
		byTraceID                 bool
		metricsByAttrs            bool
		logsByAttrs, logsByTrace  bool
		topicFromAttr             string
		topicPerTenant            string
		encoding                  string
		hasher                    string
		headers                   kafkaHeaders
		maxMessageBytes           int
		produceTimeout            time.Duration
		maxBufferedBytes          int
		compression               string
		compressionLevel          int
		includeMetadataKeys       string
		perSignal                 [otlp.MaxSignal + 1]kafka.SignalConfig
		partitionerKind           string
		requiredAcks              string
		flushMaxMessages          int
		autoCreate                bool
		clientID                  string
		maxClientTopics           int
	)
	fs.StringVar(&brokers, "kafka-brokers", "localhost:9092", "with -storage kafka: comma-separated seed brokers, host:port")
	fs.StringVar(&tracesTopic, "kafka-topic-traces", kafka.DefaultTracesTopic, "Kafka topic for traces (the OpenTelemetry Collector kafkareceiver's default)")
	fs.StringVar(&metricsTopic, "kafka-topic-metrics", kafka.DefaultMetricsTopic, "Kafka topic for metrics")
	fs.StringVar(&logsTopic, "kafka-topic-logs", kafka.DefaultLogsTopic, "Kafka topic for logs")
	fs.StringVar(&profilesTopic, "kafka-topic-profiles", kafka.DefaultProfilesTopic, "Kafka topic for profiles (OTLP profiles, Alpha; the kafkaexporter's default)")
	fs.BoolVar(&byTraceID, "kafka-partition-traces-by-id", false, "one record per trace, keyed by the trace id in hex, so a trace stays in one partition, the one the Collector's kafkaexporter picks (its partition_traces_by_id)")
	fs.BoolVar(&byTraceID, "kafka-key-by-trace-id", false, "the former name of -kafka-partition-traces-by-id")
	fs.BoolVar(&metricsByAttrs, "kafka-partition-metrics-by-resource-attributes", false, "one metrics record per resource, keyed by a hash of its attributes as the Collector's (partition_metrics_by_resource_attributes)")
	fs.BoolVar(&logsByAttrs, "kafka-partition-logs-by-resource-attributes", false, "one logs record per resource, keyed by a hash of its attributes as the Collector's (partition_logs_by_resource_attributes)")
	fs.BoolVar(&logsByTrace, "kafka-partition-logs-by-trace-id", false, "one logs record per trace id, keyed by it in hex (partition_logs_by_trace_id); excludes -kafka-partition-logs-by-resource-attributes")
	fs.StringVar(&topicFromAttr, "kafka-topic-from-attribute", "", "resource attribute whose string value names the topic of its resource's data (topic_from_attribute); without it, the signal's topic")
	fs.Func("kafka-topic-per-tenant", "`pattern` naming each tenant's topic (see Tenants): {topic} is the signal's topic, {tenant} the tenant, e.g. {topic}_{tenant} sends team-a's spans to otlp_spans_team-a; data without a tenant goes to the topic of "+storage.DefaultTenant+"; excludes -kafka-topic-from-attribute", func(v string) error {
		// The pattern alone is checked as it is parsed; the length of
		// the topics it makes, against the topic flags, with the other
		// -kafka-* values (kafka.Config.Validate).
		if v != "" {
			if err := kafka.CheckTopicPerTenant(v); err != nil {
				return err
			}
		}
		topicPerTenant = v
		return nil
	})
	fs.StringVar(&encoding, "kafka-encoding", kafka.EncodingProto, "record format: otlp_proto or otlp_json (the Collector's encoding names)")
	fs.Var(&headers, "kafka-header", "`name=value` header added to every record (record_headers); repeatable")
	fs.StringVar(&hasher, "kafka-partitioner-hasher", kafka.HasherSaramaCompat, "hash of keyed records' partitioner: sarama_compat (FNV-1a, the Collector's default) or murmur2 (the Java client's)")
	fs.IntVar(&maxMessageBytes, "kafka-max-message-bytes", kafka.DefaultMaxMessageBytes, "largest Kafka record batch; larger requests are split between resources (keep it at or below the topic's max.message.bytes)")
	fs.DurationVar(&produceTimeout, "kafka-produce-timeout", kafka.DefaultProduceTimeout, "how long a request waits for Kafka's acknowledgement before the client gets a retryable refusal")
	fs.IntVar(&maxBufferedBytes, "kafka-max-buffered-bytes", kafka.DefaultMaxBufferedBytes, "bytes of records awaiting acknowledgement; beyond it requests are refused as overloaded")
	fs.StringVar(&compression, "kafka-compression", "none", "record batch compression: none, gzip, snappy, lz4 or zstd")
	fs.IntVar(&compressionLevel, "kafka-compression-level", 0, "codec level (compression_params.level): 0 or -1 the codec's default; gzip -2 or 1-9, zstd any; the others none")
	fs.StringVar(&includeMetadataKeys, "kafka-include-metadata-keys", "", "comma-separated request headers (gRPC metadata or HTTP headers) copied into every record as headers, one per value, after -kafka-header (include_metadata_keys)")
	for _, sig := range storage.Signals {
		sc := &perSignal[sig]
		fs.StringVar(&sc.TopicFromMetadataKey, "kafka-topic-from-metadata-key-"+sig.String(), "", "request header whose first value names the topic of the "+sig.String()+" (topic_from_metadata_key); before -kafka-topic-from-attribute; at most -kafka-max-client-topics names")
		fs.StringVar(&sc.MessageKeyFromMetadataKey, "kafka-message-key-from-metadata-key-"+sig.String(), "", "request header whose first value keys the "+sig.String()+" records no -kafka-partition-* option keys (message_key_from_metadata_key)")
		fs.StringVar(&sc.Encoding, "kafka-encoding-"+sig.String(), "", "record format of the "+sig.String()+" (encoding); default -kafka-encoding")
	}
	fs.StringVar(&partitionerKind, "kafka-partitioner", kafka.PartitionerStickyKey, "record partitioner (record_partitioner): sticky_key (keyed records by their key's hash), round_robin or least_backup (both ignore keys)")
	fs.StringVar(&requiredAcks, "kafka-required-acks", kafka.AcksAll, "acknowledgement a request waits for (required_acks): all (all in-sync replicas, idempotent producer) or 1 (the leader only: faster, loses data if the leader dies; the Collector's default)")
	fs.IntVar(&flushMaxMessages, "kafka-flush-max-messages", 10000, "records awaiting acknowledgement; beyond it requests are refused as overloaded (flush_max_messages)")
	fs.BoolVar(&autoCreate, "kafka-allow-auto-topic-creation", true, "ask the brokers to create missing topics (allow_auto_topic_creation; the brokers' auto.create.topics.enable decides)")
	fs.StringVar(&clientID, "kafka-client-id", "otlp-lite", "Kafka client id of the producer, for the brokers' quotas and logs (client_id)")
	fs.IntVar(&maxClientTopics, "kafka-max-client-topics", kafka.DefaultMaxClientTopics, "distinct topics clients may name through -kafka-topic-from-attribute or -kafka-topic-from-metadata-key-*; a request naming one more is refused (the Collector has no such bound)")
	registerKafkaConnFlags(fs)

	config := func() (kafka.Config, error) {
		cfg := kafka.Config{
			Brokers:                              splitList(brokers),
			TracesTopic:                          tracesTopic,
			MetricsTopic:                         metricsTopic,
			LogsTopic:                            logsTopic,
			ProfilesTopic:                        profilesTopic,
			PartitionTracesByID:                  byTraceID,
			PartitionMetricsByResourceAttributes: metricsByAttrs,
			PartitionLogsByResourceAttributes:    logsByAttrs,
			PartitionLogsByTraceID:               logsByTrace,
			TopicFromAttribute:                   topicFromAttr,
			TopicPerTenant:                       topicPerTenant,
			Encoding:                             encoding,
			Headers:                              headers,
			Hasher:                               hasher,
			MaxMessageBytes:                      maxMessageBytes,
			ProduceTimeout:                       produceTimeout,
			MaxBufferedBytes:                     maxBufferedBytes,
			Compression:                          compression,
			CompressionLevel:                     compressionLevel,
			IncludeMetadataKeys:                  splitList(includeMetadataKeys),
			PerSignal:                            perSignal,
			Partitioner:                          partitionerKind,
			RequiredAcks:                         requiredAcks,
			NoAutoTopicCreation:                  !autoCreate,
			ClientID:                             clientID,
			MaxClientTopics:                      maxClientTopics,
		}
		if partitionerKind != kafka.PartitionerStickyKey && !isSet(fs, "kafka-partitioner-hasher") {
			// The hasher's default belongs to sticky_key; set
			// explicitly with another partitioner it is an error.
			cfg.Hasher = ""
		}
		if flushMaxMessages < 1 {
			return cfg, fmt.Errorf("-kafka-flush-max-messages %d: must be at least 1", flushMaxMessages)
		}
		cfg.MaxBufferedRecords = flushMaxMessages
		if clientID == "" {
			return cfg, errors.New("-kafka-client-id is empty")
		}
		if maxClientTopics < 1 {
			return cfg, fmt.Errorf("-kafka-max-client-topics %d: must be at least 1", maxClientTopics)
		}
		var err error
		if cfg.TLS, cfg.SASL, cfg.Logger, err = kafkaConn(fs); err != nil {
			return cfg, err
		}
		return cfg, cfg.Validate()
	}
	// Every -kafka-* value is checked at parse time, also when -storage
	// is not kafka: a typo in an unused flag is still a typo.
	var k kafkaFlags
	k.check = func() error {
		_, err := config()
		return err
	}
	k.metadataKeys = func() []string {
		cfg, _ := config()
		return cfg.MetadataKeys()
	}
	k.open = func(reg *metrics.Set) (storage.Sink, error) {
		cfg, err := config()
		if err != nil {
			return nil, err
		}
		cfg.Metrics = reg
		s, err := kafka.Open(cfg)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Ping(ctx); err != nil {
			cfg.Logger.Warn("Kafka brokers not reachable yet; requests are refused as retryable until they are", "brokers", brokers, "err", err)
		}
		return s, nil
	}
	return k
}

// isSet reports whether flag name was set, on the command line or
// through its environment variable.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// kafkaHeaders is the repeatable -kafka-header flag.
type kafkaHeaders []kafka.Header

func (h *kafkaHeaders) String() string {
	var parts []string
	for _, x := range *h {
		parts = append(parts, x.Key+"="+x.Value)
	}
	return strings.Join(parts, " ")
}

func (h *kafkaHeaders) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, got %q", redact.Value(name, v))
	}
	if redact.Name(name) {
		redact.Register(value)
	}
	*h = append(*h, kafka.Header{Key: name, Value: value})
	return nil
}

func (h *kafkaHeaders) repeatable() {}

// Redacted shows the headers with the values of those whose names are
// secrets (redact.Name: Authorization, X-Api-Key...) hidden.
func (h *kafkaHeaders) Redacted() string {
	var parts []string
	for _, x := range *h {
		parts = append(parts, x.Key+"="+redact.Value(x.Key, x.Value))
	}
	return strings.Join(parts, " ")
}

// registerKafkaConnFlags defines the flags of how to reach the brokers,
// shared by the sink (-storage kafka) and the source (-kafka-consume).
func registerKafkaConnFlags(fs *flag.FlagSet) {
	fs.String("kafka-sasl-mechanism", "", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (empty: no SASL); for the sink and the source")
	fs.String("kafka-sasl-username", "", "SASL username")
	fs.String("kafka-sasl-password", "", "SASL password (default: the "+kafkaPasswordEnv+" environment variable)")
	fs.Bool("kafka-tls", false, "connect to the brokers over TLS (implied by the other -kafka-tls-* flags); for the sink and the source")
	fs.String("kafka-tls-ca", "", "PEM file of CA certificates to verify the brokers with (default: the system roots)")
	fs.String("kafka-tls-cert", "", "PEM client certificate for mutual TLS")
	fs.String("kafka-tls-key", "", "PEM private key of -kafka-tls-cert")
	fs.String("kafka-tls-server-name", "", "server name to verify the brokers' certificates against (default: the broker host)")
	fs.Bool("kafka-tls-insecure-skip-verify", false, "do not verify the brokers' certificates (testing only)")
	fs.String("kafka-log-level", "warn", "least severe Kafka client message logged: debug, info, warn or error")
}

// kafkaConn returns the TLS, SASL and logger the connection flags on fs
// (registerKafkaConnFlags) configure.
func kafkaConn(fs *flag.FlagSet) (*tls.Config, *kafka.SASL, *slog.Logger, error) {
	get := func(name string) string { return fs.Lookup(name).Value.String() }
	var level slog.Level
	if err := level.UnmarshalText([]byte(get("kafka-log-level"))); err != nil {
		return nil, nil, nil, fmt.Errorf("bad -kafka-log-level: %w", err)
	}
	logger := slog.New(minLevel{slog.Default().Handler(), level})
	c := kafkaConnSettings{
		Mechanism: get("kafka-sasl-mechanism"), Username: get("kafka-sasl-username"), Password: get("kafka-sasl-password"),
		TLS: get("kafka-tls") == "true", CA: get("kafka-tls-ca"), Cert: get("kafka-tls-cert"), Key: get("kafka-tls-key"),
		ServerName: get("kafka-tls-server-name"), Insecure: get("kafka-tls-insecure-skip-verify") == "true",
	}
	if c.Mechanism != "" && c.Password == "" {
		c.Password = os.Getenv(kafkaPasswordEnv)
	}
	t, sc, err := c.build("-kafka-")
	if err != nil {
		return nil, nil, nil, err
	}
	return t, sc, logger, nil
}

// kafkaConnSettings are how a Kafka client connects: TLS and SASL. The
// -kafka-* flags (kafkaConn) and a kafka:// forwarding destination's URL
// parameters (forward_kafka.go) fill them.
type kafkaConnSettings struct {
	// TLS turns TLS on; any of the other TLS settings implies it.
	TLS                           bool
	CA, Cert, Key, ServerName     string
	Insecure                      bool
	Mechanism, Username, Password string
}

// build checks the settings and returns the TLS configuration (nil for
// plaintext) and the SASL (nil without). prefix names the settings in
// errors: "-kafka-" for the flags, "" for URL parameters.
func (c kafkaConnSettings) build(prefix string) (*tls.Config, *kafka.SASL, error) {
	var sc *kafka.SASL
	switch {
	case c.Mechanism != "":
		switch c.Mechanism {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		default:
			return nil, nil, fmt.Errorf("%ssasl-mechanism=%s: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", prefix, c.Mechanism)
		}
		if c.Username == "" {
			return nil, nil, fmt.Errorf("%ssasl-mechanism needs %ssasl-username", prefix, prefix)
		}
		// The password, wherever it came from (a flag, the environment,
		// a kafka:// URL's sasl-password-env or -file), is hidden in
		// every output from now on.
		redact.Register(c.Password)
		sc = &kafka.SASL{Mechanism: c.Mechanism, Username: c.Username, Password: c.Password}
	case c.Username != "":
		return nil, nil, fmt.Errorf("%ssasl-username needs %ssasl-mechanism", prefix, prefix)
	}
	if !c.TLS && c.CA == "" && c.Cert == "" && c.Key == "" && c.ServerName == "" && !c.Insecure {
		return nil, sc, nil
	}
	t, err := otlpclient.ClientTLS(otlpclient.TLSFiles{CAFile: c.CA, CertFile: c.Cert, KeyFile: c.Key, ServerName: c.ServerName, InsecureSkipVerify: c.Insecure})
	if err != nil {
		return nil, nil, fmt.Errorf("bad %stls-*: %w", prefix, err)
	}
	return t, sc, nil
}

// minLevel drops records below min: the Kafka client logs every retry at
// info, too chatty for the receiver's own log level.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}
