// Package kafka is a storage.Sink that produces every accepted OTLP request
// to Apache Kafka, for deployments of several stateless receivers behind a
// load balancer.
//
// Records use the OpenTelemetry Collector's otlp_proto encoding: the value
// is exactly the protobuf ExportTraceServiceRequest,
// ExportMetricsServiceRequest, ExportLogsServiceRequest or
// ExportProfilesServiceRequest, so the Collector's kafkareceiver (encoding:
// otlp_proto, its default) reads them from the default topics otlp_spans,
// otlp_metrics, otlp_logs and otlp_profiles.
//
// Guarantee: Write returns nil only after every record of the request is
// acknowledged by all in-sync replicas (acks=all) through an idempotent
// producer. A broker that is down or slow makes Write fail within
// Config.ProduceTimeout with an error wrapping storage.ErrUnavailable, and a
// full produce buffer (Config.MaxBufferedBytes) makes it fail at once with
// storage.ErrOverloaded: memory stays bounded, the client keeps its data
// and retries, and production resumes by itself when the brokers return.
// Delivery is at-least-once: a Write that failed may still have reached
// Kafka, and the client's retry then stores it again.
//
// Requests larger than Config.MaxMessageBytes are split into several records
// between resources (see appendResources); a single resource too large for
// one record fails with an error wrapping ErrTooLarge.
package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

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

	// KeyByTraceID splits each traces request into one record per trace
	// id, keyed by the 16-byte trace id (the Collector kafkaexporter's
	// partition_traces_by_id), so all spans of a trace land in one
	// partition. Metrics and logs records have no key.
	KeyByTraceID bool

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

	// Logger, when non-nil, receives the Kafka client's log (connection
	// failures, retries, metadata changes) at the levels it enables, with
	// the attribute component=kafka.
	Logger *slog.Logger
}

// SASL configures SASL authentication.
type SASL struct {
	// Mechanism is "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512".
	Mechanism string
	Username  string
	Password  string
}

// Sink produces OTLP requests to Kafka. It is safe for concurrent use.
type Sink struct {
	cl       *kgo.Client
	topics   [otlp.MaxSignal + 1]string
	byTrace  bool
	limit    int // largest record value
	timeout  time.Duration
	closed   atomic.Bool
	inflight sync.WaitGroup
	batches  sync.Pool // *batch
	splits   sync.Pool // *traceSplitter
}

var _ storage.Sink = (*Sink)(nil)

// Open validates cfg and creates the producer. It does not wait for the
// brokers: a Sink opened while they are down refuses writes with
// storage.ErrUnavailable until they are reachable. Use Ping to check them.
func Open(cfg Config) (*Sink, error) {
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
		byTrace: cfg.KeyByTraceID,
		timeout: cfg.ProduceTimeout,
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
	clientID := cfg.ClientID
	if clientID == "" {
		clientID = "otlp-lite"
	}
	dialTimeout := cfg.DialTimeout
	if dialTimeout <= 0 {
		dialTimeout = 5 * time.Second
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(clientID),
		kgo.DialTimeout(dialTimeout),
		kgo.AllowAutoTopicCreation(),
		// acks=all with the idempotent producer (franz-go's default when
		// acks=all): the broker de-duplicates the client's own retries,
		// so a retry inside one Write never stores a record twice.
		kgo.RequiredAcks(kgo.AllISRAcks()),
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
	if cfg.Logger != nil {
		opts = append(opts, kgo.WithLogger(slogLogger{cfg.Logger.With("component", "kafka")}))
	}
	if cfg.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(cfg.TLS.Clone()))
	}
	if cfg.SASL != nil {
		m, err := saslMechanism(cfg.SASL)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	s.cl, err = kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: cannot create client: %w", err)
	}
	return s, nil
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

func saslMechanism(c *SASL) (sasl.Mechanism, error) {
	if c.Username == "" {
		return nil, errors.New("kafka: SASL needs a username")
	}
	switch c.Mechanism {
	case "PLAIN":
		return plain.Auth{User: c.Username, Pass: c.Password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: c.Username, Pass: c.Password}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: c.Username, Pass: c.Password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("kafka: unknown SASL mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.Mechanism)
}

// Ping checks that a broker answers (and, with SASL, accepts the
// credentials).
func (s *Sink) Ping(ctx context.Context) error {
	if err := s.cl.Ping(ctx); err != nil {
		return fmt.Errorf("cannot reach Kafka brokers: %w", err)
	}
	return nil
}

// Topic returns the topic records of signal go to.
func (s *Sink) Topic(signal storage.Signal) string {
	if int(signal) >= len(s.topics) {
		return ""
	}
	return s.topics[signal]
}
