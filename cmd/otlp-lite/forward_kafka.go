//go:build !nokafka

// Kafka as a forwarding destination: the Kafka sink (storage/kafka) fed
// from the disk log, so that a client's request is acknowledged once it is
// fsynced locally, and reaches Kafka afterwards, however long the brokers
// are away. Built only without the nokafka tag.

package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/kafka"
)

func init() { forward.RegisterScheme("kafka", parseKafkaDestination) }

// parseKafkaDestination reads
//
//	kafka://BROKER:PORT[,BROKER:PORT...]/?topic-traces=otlp_spans&topic-metrics=otlp_metrics
//	    &topic-logs=otlp_logs&topic-profiles=otlp_profiles&partition-traces-by-id=true&compression=none|gzip|snappy|lz4|zstd
//	    &max-message-bytes=N
//
// (plus the common signals, start, timeout, retry-*, inflight). The
// brokers are plaintext, without SASL: a cluster that needs TLS or SASL
// is fed with -storage kafka.
func parseKafkaDestination(host string, q url.Values) (func(*slog.Logger) (storage.Sink, error), error) {
	cfg := kafka.Config{Compression: "none"}
	for b := range strings.SplitSeq(host, ",") {
		if _, _, err := net.SplitHostPort(b); err != nil {
			return nil, fmt.Errorf("kafka broker %q is not host:port", b)
		}
		cfg.Brokers = append(cfg.Brokers, b)
	}
	take := func(key string) (string, bool, error) {
		vals, ok := q[key]
		delete(q, key)
		if len(vals) > 1 {
			return "", false, fmt.Errorf("%s is given %d times", key, len(vals))
		}
		if !ok {
			return "", false, nil
		}
		return vals[0], true, nil
	}
	for _, t := range []struct {
		key string
		dst *string
	}{{"topic-traces", &cfg.TracesTopic}, {"topic-metrics", &cfg.MetricsTopic}, {"topic-logs", &cfg.LogsTopic}, {"topic-profiles", &cfg.ProfilesTopic}} {
		v, ok, err := take(t.key)
		if err != nil {
			return nil, err
		}
		if ok && v == "" {
			return nil, fmt.Errorf("%s is empty", t.key)
		}
		*t.dst = v
	}
	// partition-traces-by-id is the Collector kafkaexporter's option
	// (-kafka-partition-traces-by-id of -storage kafka).
	if v, ok, err := take("partition-traces-by-id"); err != nil {
		return nil, err
	} else if ok {
		if cfg.PartitionTracesByID, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("partition-traces-by-id=%s: want true or false", v)
		}
	}
	if v, ok, err := take("compression"); err != nil {
		return nil, err
	} else if ok {
		switch v {
		case "none", "gzip", "snappy", "lz4", "zstd":
			cfg.Compression = v
		default:
			return nil, fmt.Errorf("compression=%s: want none, gzip, snappy, lz4 or zstd", v)
		}
	}
	if v, ok, err := take("max-message-bytes"); err != nil {
		return nil, err
	} else if ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1024 {
			return nil, fmt.Errorf("max-message-bytes=%s: want a number of bytes, at least 1024", v)
		}
		cfg.MaxMessageBytes = n
	}
	return func(logger *slog.Logger) (storage.Sink, error) {
		cfg.Logger = logger
		// Open does not wait for the brokers: while they are down, writes
		// fail as retryable and the forwarder retries them.
		return kafka.Open(cfg)
	}, nil
}
