//go:build !nokafka

// The Kafka sink, the Kafka source and how both connect. Build with -tags
// nokafka to leave the Kafka client (github.com/twmb/franz-go) out of the
// binary: kafka_nokafka.go.

package service

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/internal/redact"
	"github.com/otlp-lite/otlp-lite/kafkasource"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/deadletter"
	"github.com/otlp-lite/otlp-lite/storage/disk"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// KafkaDeadLetterDir is where, under DataDir, the Kafka source keeps
// records that are not valid OTLP: a disk log of its own, which `otlp-lite
// export -data-dir <data-dir>/kafka-dead-letter -signal traces -format
// proto` prints.
const KafkaDeadLetterDir = "kafka-dead-letter"

func defaultKafkaConfig() KafkaConfig {
	return KafkaConfig{
		Brokers:     "localhost:9092",
		TopicTraces: kafka.DefaultTracesTopic, TopicMetrics: kafka.DefaultMetricsTopic,
		TopicLogs: kafka.DefaultLogsTopic, TopicProfiles: kafka.DefaultProfilesTopic,
		Encoding:               kafka.EncodingProto,
		PartitionerHasher:      kafka.HasherSaramaCompat,
		MaxMessageBytes:        kafka.DefaultMaxMessageBytes,
		ProduceTimeout:         kafka.DefaultProduceTimeout,
		MaxBufferedBytes:       kafka.DefaultMaxBufferedBytes,
		Compression:            "none",
		Partitioner:            kafka.PartitionerStickyKey,
		RequiredAcks:           kafka.AcksAll,
		FlushMaxMessages:       10000,
		AllowAutoTopicCreation: true,
		ClientID:               "otlp-lite",
		MaxClientTopics:        kafka.DefaultMaxClientTopics,
		KeysReadTimeout:        kafka.DefaultKeysReadTimeout,
		LogLevel:               "warn",
	}
}

func defaultKafkaConsumeConfig() KafkaConsumeConfig {
	c := KafkaConsumeConfig{
		Group: kafkasource.DefaultConsumerGroup, Encoding: "auto", Start: "earliest",
		MaxPollRecords: kafkasource.DefaultMaxPollRecords, Workers: kafkasource.DefaultConsumeWorkers,
		SessionTimeout: 45 * time.Second, Balancer: "cooperative-sticky",
		FetchMaxBytes: kafkasource.DefaultFetchMaxBytes, FetchMaxPartitionBytes: kafkasource.DefaultFetchMaxBytes,
		FetchMinBytes: 1, FetchMaxWait: 5 * time.Second,
		DeadLetter: true, DeadLetterMaxBytes: deadletter.DefaultMaxBytes, DeadLetterMaxAge: deadletter.DefaultMaxAge,
	}
	for _, sig := range otlp.Signals {
		c.Topics[sig] = sig.Info().KafkaTopic
	}
	return c
}

// sinkConfig is the Kafka sink's configuration. Every value is checked
// before start, also when Storage is not kafka: a typo in an unused flag is
// still a typo.
func (k KafkaConfig) sinkConfig() (kafka.Config, error) {
	cfg := kafka.Config{
		Brokers:                              splitList(k.Brokers),
		TracesTopic:                          k.TopicTraces,
		MetricsTopic:                         k.TopicMetrics,
		LogsTopic:                            k.TopicLogs,
		ProfilesTopic:                        k.TopicProfiles,
		PartitionTracesByID:                  k.PartitionTracesByID,
		PartitionMetricsByResourceAttributes: k.PartitionMetricsByResourceAttributes,
		PartitionLogsByResourceAttributes:    k.PartitionLogsByResourceAttributes,
		PartitionLogsByTraceID:               k.PartitionLogsByTraceID,
		TopicFromAttribute:                   k.TopicFromAttribute,
		TopicPerTenant:                       k.TopicPerTenant,
		Encoding:                             k.Encoding,
		Hasher:                               k.PartitionerHasher,
		MaxMessageBytes:                      k.MaxMessageBytes,
		ProduceTimeout:                       k.ProduceTimeout,
		MaxBufferedBytes:                     k.MaxBufferedBytes,
		Compression:                          k.Compression,
		CompressionLevel:                     k.CompressionLevel,
		IncludeMetadataKeys:                  splitList(k.IncludeMetadataKeys),
		Partitioner:                          k.Partitioner,
		RequiredAcks:                         k.RequiredAcks,
		NoAutoTopicCreation:                  !k.AllowAutoTopicCreation,
		ClientID:                             k.ClientID,
		MaxClientTopics:                      k.MaxClientTopics,
		KeysReadTimeout:                      cmp.Or(k.KeysReadTimeout, -1), // 0: off
	}
	for _, h := range k.Headers {
		cfg.Headers = append(cfg.Headers, kafka.Header{Key: h.Key, Value: h.Value})
	}
	for i, s := range k.PerSignal {
		cfg.PerSignal[i] = kafka.SignalConfig{TopicFromMetadataKey: s.TopicFromMetadataKey, MessageKeyFromMetadataKey: s.MessageKeyFromMetadataKey, Encoding: s.Encoding}
	}
	if k.Partitioner != kafka.PartitionerStickyKey && k.PartitionerHasher == kafka.HasherSaramaCompat {
		// The hasher's default belongs to sticky_key; another hasher
		// with another partitioner is an error (Validate).
		cfg.Hasher = ""
	}
	if k.FlushMaxMessages < 1 {
		return cfg, fmt.Errorf("-kafka-flush-max-messages %d: must be at least 1", k.FlushMaxMessages)
	}
	cfg.MaxBufferedRecords = k.FlushMaxMessages
	if k.ClientID == "" {
		return cfg, errors.New("-kafka-client-id is empty")
	}
	if k.MaxClientTopics < 1 {
		return cfg, fmt.Errorf("-kafka-max-client-topics %d: must be at least 1", k.MaxClientTopics)
	}
	if k.KeysReadTimeout < 0 {
		return cfg, fmt.Errorf("-kafka-keys-read-timeout %v: must not be negative (0 turns the read off)", k.KeysReadTimeout)
	}
	var err error
	if cfg.TLS, cfg.SASL, cfg.Logger, err = k.conn(); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func (k KafkaConfig) check() error {
	_, err := k.sinkConfig()
	return err
}

// metadataKeys lists the request headers the sink reads
// (handler.Config.MetadataKeys).
func (k KafkaConfig) metadataKeys() []string {
	cfg, _ := k.sinkConfig()
	return cfg.MetadataKeys()
}

// openKafkaSink opens the sink and checks the brokers once: brokers that
// are down are logged, not fatal; the sink refuses writes as retryable
// until they come back.
func (k KafkaConfig) openKafkaSink(reg *metrics.Set) (storage.Sink, error) {
	cfg, err := k.sinkConfig()
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
		cfg.Logger.Warn("Kafka brokers not reachable yet; requests are refused as retryable until they are", "brokers", k.Brokers, "err", err)
	}
	return s, nil
}

// conn returns the TLS, SASL and logger the connection settings configure.
func (k KafkaConfig) conn() (*tls.Config, *kafka.SASL, *slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(k.LogLevel)); err != nil {
		return nil, nil, nil, fmt.Errorf("bad -kafka-log-level: %w", err)
	}
	logger := slog.New(minLevel{slog.Default().Handler(), level})
	c := kafkaConnSettings{
		Mechanism: k.SASLMechanism, Username: k.SASLUsername, Password: k.SASLPassword,
		TLS: k.TLS, CA: k.TLSCA, Cert: k.TLSCert, Key: k.TLSKey, ServerName: k.TLSServerName, Insecure: k.TLSInsecureSkipVerify,
	}
	t, sc, err := c.build("-kafka-")
	if err != nil {
		return nil, nil, nil, err
	}
	return t, sc, logger, nil
}

// kafkaConnSettings are how a Kafka client connects: TLS and SASL. The
// -kafka-* settings (conn) and a kafka:// forwarding destination's URL
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

// checkKafkaConsume checks the Kafka source's settings, when it is on.
func (c Config) checkKafkaConsume() error {
	f := c.KafkaConsume
	if f.Brokers == "" {
		return nil
	}
	if len(splitList(f.Brokers)) == 0 {
		return errors.New("bad -kafka-consume: no broker")
	}
	if c.storageKind() == "kafka" && c.Kafka.Brokers == f.Brokers {
		return errors.New("-kafka-consume with -storage kafka on the same brokers would store its records back into Kafka; use -storage disk")
	}
	switch f.Encoding {
	case "auto", kafka.EncodingProto, kafka.EncodingJSON:
	default:
		return fmt.Errorf("bad -kafka-consume-encoding %q: want auto, otlp_proto or otlp_json", f.Encoding)
	}
	if f.Start != "earliest" && f.Start != "latest" {
		return fmt.Errorf("bad -kafka-consume-start %q: want earliest or latest", f.Start)
	}
	if f.MaxPollRecords <= 0 || f.Workers <= 0 {
		return errors.New("bad -kafka-consume-max-poll-records or -kafka-consume-workers: must be positive")
	}
	if f.Group == "" {
		return errors.New("bad -kafka-consume-group: empty")
	}
	if f.SessionTimeout < time.Second {
		return fmt.Errorf("bad -kafka-consume-session-timeout %v: at least 1s", f.SessionTimeout)
	}
	if f.HeartbeatInterval < 0 || (f.HeartbeatInterval > 0 && f.HeartbeatInterval >= f.SessionTimeout) {
		return fmt.Errorf("bad -kafka-consume-heartbeat-interval %v: must be shorter than -kafka-consume-session-timeout %v", f.HeartbeatInterval, f.SessionTimeout)
	}
	switch f.Balancer {
	case "cooperative-sticky", "sticky", "range", "roundrobin":
	default:
		return fmt.Errorf("bad -kafka-consume-balancer %q: want cooperative-sticky, sticky, range or roundrobin", f.Balancer)
	}
	regex := false
	for _, sig := range otlp.Signals {
		topic := f.Topics[sig]
		if !strings.HasPrefix(topic, "^") {
			continue
		}
		regex = true
		if _, err := regexp.Compile(topic); err != nil {
			return fmt.Errorf("bad -kafka-consume-topic-%s: %w", sig, err)
		}
	}
	for _, x := range splitList(f.ExcludeTopics) {
		if !regex {
			return errors.New("-kafka-consume-exclude-topics needs a -kafka-consume-topic-* regular expression (beginning with ^)")
		}
		if _, err := regexp.Compile(x); err != nil {
			return fmt.Errorf("bad -kafka-consume-exclude-topics: %w", err)
		}
	}
	if f.FetchMaxBytes <= 0 || f.FetchMaxBytes > 1<<30 || f.FetchMaxPartitionBytes <= 0 || f.FetchMaxPartitionBytes > 1<<30 || f.FetchMinBytes <= 0 || f.FetchMinBytes > 1<<30 {
		return errors.New("bad -kafka-consume-fetch-*-bytes: from 1 to 1073741824")
	}
	if f.FetchMaxWait < time.Millisecond {
		return fmt.Errorf("bad -kafka-consume-fetch-max-wait %v: at least 1ms", f.FetchMaxWait)
	}
	// A batch holds at least one record, and a record as large as the
	// largest request is legitimate.
	if f.MaxBatchBytes != 0 && (f.MaxBatchBytes < c.MaxRecvMsgSize || f.MaxBatchBytes > 1<<30) {
		return fmt.Errorf("bad -kafka-consume-max-batch-bytes %d: 0 or from -grpc-max-recv-msg-size (%d) to 1073741824", f.MaxBatchBytes, c.MaxRecvMsgSize)
	}
	if batch := c.kafkaBatchBytes(); f.MaxDecompressedBytes != 0 && f.MaxDecompressedBytes < int64(batch) {
		return fmt.Errorf("bad -kafka-consume-max-decompressed-bytes %d: 0 or at least the batch bound (%d)", f.MaxDecompressedBytes, batch)
	}
	if f.DeadLetterMaxBytes < 0 || f.DeadLetterMaxAge < 0 {
		return errors.New("bad -kafka-consume-dead-letter-max-bytes or -max-age: negative")
	}
	return nil
}

// kafkaBatchBytes is the batch bound: MaxBatchBytes, or by default the
// larger of kafkasource.DefaultMaxBatchBytes and the largest request (a batch of
// one such record is legitimate), within franz-go's 1 GiB.
func (c Config) kafkaBatchBytes() int {
	if c.KafkaConsume.MaxBatchBytes != 0 {
		return c.KafkaConsume.MaxBatchBytes
	}
	return min(max(kafkasource.DefaultMaxBatchBytes, c.MaxRecvMsgSize), 1<<30)
}

// kafkaSource runs a kafka.Consumer beside the receivers.
type kafkaSource struct {
	c      *kafkasource.Consumer
	dl     *disk.Store
	cancel func()
	done   chan error
}

// startKafkaSource starts the Kafka source when it is configured (nil
// otherwise): it stores through h, as the receivers do.
func (c Config) startKafkaSource(h *handler.Handler, reg *metrics.Set, logger *slog.Logger) (*kafkaSource, error) {
	f := c.KafkaConsume
	if f.Brokers == "" {
		return nil, nil
	}
	cfg := kafkasource.ConsumerConfig{
		Brokers:                splitList(f.Brokers),
		Group:                  f.Group,
		Topics:                 map[otlp.Signal]string{},
		StartFromLatest:        f.Start == "latest",
		ExcludeTopics:          splitList(f.ExcludeTopics),
		MaxPollRecords:         f.MaxPollRecords,
		Workers:                f.Workers,
		SessionTimeout:         f.SessionTimeout,
		HeartbeatInterval:      f.HeartbeatInterval,
		InstanceID:             f.InstanceID,
		Balancer:               f.Balancer,
		FetchMaxBytes:          f.FetchMaxBytes,
		FetchMaxPartitionBytes: f.FetchMaxPartitionBytes,
		FetchMinBytes:          f.FetchMinBytes,
		FetchMaxWait:           f.FetchMaxWait,
		MaxBatchBytes:          c.kafkaBatchBytes(),
		MaxDecompressedBytes:   f.MaxDecompressedBytes, // 0: 4 × MaxBatchBytes
		Pipeline:               h.Pipeline(),
		Metrics:                reg,
	}
	if f.Encoding != "auto" {
		cfg.Encoding = f.Encoding
	}
	for _, sig := range otlp.Signals {
		cfg.Topics[sig] = f.Topics[sig]
	}
	var err error
	if cfg.TLS, cfg.SASL, cfg.Logger, err = c.Kafka.conn(); err != nil {
		return nil, err
	}
	k := &kafkaSource{}
	if f.DeadLetter {
		bound := deadletter.Bound{MaxBytes: f.DeadLetterMaxBytes, MaxAge: f.DeadLetterMaxAge}
		if k.dl, err = deadletter.Open(filepath.Join(c.DataDir, KafkaDeadLetterDir), bound, logger); err != nil {
			return nil, fmt.Errorf("cannot open the Kafka dead-letter store: %w", err)
		}
		cfg.DeadLetter = k.dl
	}
	if k.c, err = kafkasource.NewConsumer(cfg); err != nil {
		k.closeDeadLetter()
		return nil, err
	}
	// A wrong CA, client certificate or password does not heal: refuse to
	// start with the reason, instead of retrying in the log forever.
	// Brokers that are merely down are waited for.
	pctx, pcancel := context.WithTimeout(context.Background(), 10*time.Second)
	err = k.c.Ping(pctx)
	pcancel()
	if kafkasource.PermanentConnError(err) {
		k.c.Close()
		k.closeDeadLetter()
		return nil, fmt.Errorf("cannot start the Kafka source (check -kafka-tls-* and -kafka-sasl-*): %w", err)
	}
	if err != nil {
		logger.Warn("Kafka brokers not reachable yet; the Kafka source waits for them", "brokers", f.Brokers, "err", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel, k.done = cancel, make(chan error, 1)
	go func() { k.done <- k.c.Run(ctx) }()
	logger.Info("consuming OTLP from Kafka", "brokers", f.Brokers, "group", f.Group, "topics", cfg.Topics, "dead_letters", f.DeadLetter)
	return k, nil
}

// stop ends consumption: records being stored finish (or are abandoned at
// ctx's end, to be read again), what is stored is committed, the group is
// left.
func (k *kafkaSource) stop(ctx context.Context) error {
	k.cancel()
	var err error
	select {
	case err = <-k.done:
	case <-ctx.Done():
		k.c.Close()
		err = errors.New("Kafka source did not stop in time; uncommitted records will be read again")
	}
	if e := k.closeDeadLetter(); e != nil && err == nil {
		err = e
	}
	return err
}

func (k *kafkaSource) closeDeadLetter() error {
	if k.dl == nil {
		return nil
	}
	return k.dl.Close()
}
