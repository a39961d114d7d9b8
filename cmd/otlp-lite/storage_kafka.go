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
	"time"

	"github.com/otlp-lite/otlp-lite/otlpclient"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

// kafkaPasswordEnv is read when -kafka-sasl-password is not given, so the
// password need not appear in the process list.
const kafkaPasswordEnv = "OTLP_LITE_KAFKA_SASL_PASSWORD"

// registerKafkaFlags defines the -kafka-* flags on fs and returns the
// function that opens the Kafka sink from them, for -storage kafka. The
// function validates the flags, opens the sink and checks the brokers once;
// brokers that are down are logged, not fatal: the sink refuses writes as
// retryable until they come back.
func registerKafkaFlags(fs *flag.FlagSet) func() (storage.Sink, error) {
	var (
		brokers                          string
		tracesTopic, metricsTopic        string
		logsTopic, profilesTopic         string
		keyByTraceID                     bool
		maxMessageBytes                  int
		produceTimeout                   time.Duration
		maxBufferedBytes                 int
		compression                      string
		saslMechanism, saslUser, saslPwd string
		useTLS, tlsInsecure              bool
		tlsCA, tlsCert, tlsKey, tlsName  string
		logLevel                         string
	)
	fs.StringVar(&brokers, "kafka-brokers", "localhost:9092", "with -storage kafka: comma-separated seed brokers, host:port")
	fs.StringVar(&tracesTopic, "kafka-topic-traces", kafka.DefaultTracesTopic, "Kafka topic for traces (the OpenTelemetry Collector kafkareceiver's default)")
	fs.StringVar(&metricsTopic, "kafka-topic-metrics", kafka.DefaultMetricsTopic, "Kafka topic for metrics")
	fs.StringVar(&logsTopic, "kafka-topic-logs", kafka.DefaultLogsTopic, "Kafka topic for logs")
	fs.StringVar(&profilesTopic, "kafka-topic-profiles", kafka.DefaultProfilesTopic, "Kafka topic for profiles (OTLP profiles, Alpha; the kafkaexporter's default)")
	fs.BoolVar(&keyByTraceID, "kafka-key-by-trace-id", false, "split traces requests into one record per trace, keyed by trace id, so a trace stays in one partition (the Collector kafkaexporter's partition_traces_by_id)")
	fs.IntVar(&maxMessageBytes, "kafka-max-message-bytes", kafka.DefaultMaxMessageBytes, "largest Kafka record batch; larger requests are split between resources (keep it at or below the topic's max.message.bytes)")
	fs.DurationVar(&produceTimeout, "kafka-produce-timeout", kafka.DefaultProduceTimeout, "how long a request waits for Kafka's acknowledgement before the client gets a retryable refusal")
	fs.IntVar(&maxBufferedBytes, "kafka-max-buffered-bytes", kafka.DefaultMaxBufferedBytes, "bytes of records awaiting acknowledgement; beyond it requests are refused as overloaded")
	fs.StringVar(&compression, "kafka-compression", "none", "record batch compression: none, gzip, snappy, lz4 or zstd")
	fs.StringVar(&saslMechanism, "kafka-sasl-mechanism", "", "SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (empty: no SASL)")
	fs.StringVar(&saslUser, "kafka-sasl-username", "", "SASL username")
	fs.StringVar(&saslPwd, "kafka-sasl-password", "", "SASL password (default: the "+kafkaPasswordEnv+" environment variable)")
	fs.BoolVar(&useTLS, "kafka-tls", false, "connect to the brokers over TLS (implied by the other -kafka-tls-* flags)")
	fs.StringVar(&tlsCA, "kafka-tls-ca", "", "PEM file of CA certificates to verify the brokers with (default: the system roots)")
	fs.StringVar(&tlsCert, "kafka-tls-cert", "", "PEM client certificate for mutual TLS")
	fs.StringVar(&tlsKey, "kafka-tls-key", "", "PEM private key of -kafka-tls-cert")
	fs.StringVar(&tlsName, "kafka-tls-server-name", "", "server name to verify the brokers' certificates against (default: the broker host)")
	fs.BoolVar(&tlsInsecure, "kafka-tls-insecure-skip-verify", false, "do not verify the brokers' certificates (testing only)")
	fs.StringVar(&logLevel, "kafka-log-level", "warn", "least severe Kafka client message logged: debug, info, warn or error")

	return func() (storage.Sink, error) {
		cfg := kafka.Config{
			Brokers:          splitList(brokers),
			TracesTopic:      tracesTopic,
			MetricsTopic:     metricsTopic,
			LogsTopic:        logsTopic,
			ProfilesTopic:    profilesTopic,
			KeyByTraceID:     keyByTraceID,
			MaxMessageBytes:  maxMessageBytes,
			ProduceTimeout:   produceTimeout,
			MaxBufferedBytes: maxBufferedBytes,
			Compression:      compression,
		}
		var level slog.Level
		if err := level.UnmarshalText([]byte(logLevel)); err != nil {
			return nil, fmt.Errorf("bad -kafka-log-level: %w", err)
		}
		logger := slog.New(minLevel{slog.Default().Handler(), level})
		cfg.Logger = logger
		if saslMechanism != "" {
			if saslPwd == "" {
				saslPwd = os.Getenv(kafkaPasswordEnv)
			}
			cfg.SASL = &kafka.SASL{Mechanism: saslMechanism, Username: saslUser, Password: saslPwd}
		} else if saslUser != "" {
			return nil, errors.New("-kafka-sasl-username needs -kafka-sasl-mechanism")
		}
		if useTLS || tlsCA != "" || tlsCert != "" || tlsKey != "" || tlsName != "" || tlsInsecure {
			t, err := kafkaTLS(tlsCA, tlsCert, tlsKey, tlsName, tlsInsecure)
			if err != nil {
				return nil, err
			}
			cfg.TLS = t
		}
		s, err := kafka.Open(cfg)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Ping(ctx); err != nil {
			logger.Warn("Kafka brokers not reachable yet; requests are refused as retryable until they are", "brokers", brokers, "err", err)
		}
		return s, nil
	}
}

func kafkaTLS(ca, cert, key, serverName string, insecure bool) (*tls.Config, error) {
	c, err := otlpclient.ClientTLS(otlpclient.TLSFiles{CAFile: ca, CertFile: cert, KeyFile: key, ServerName: serverName, InsecureSkipVerify: insecure})
	if err != nil {
		return nil, fmt.Errorf("bad -kafka-tls-*: %w", err)
	}
	return c, nil
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
