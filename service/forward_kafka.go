//go:build !nokafka

// Kafka as a forwarding destination: the Kafka sink (storage/kafka) fed
// from the disk log, so that a client's request is acknowledged once it is
// fsynced locally, and reaches Kafka afterwards, however long the brokers
// are away. Built only without the nokafka tag.

package service

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
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
//	    &tls=true&tls-ca=FILE&tls-cert=FILE&tls-key=FILE&tls-server-name=NAME&insecure-skip-verify=true
//	    &sasl-mechanism=PLAIN|SCRAM-SHA-256|SCRAM-SHA-512&sasl-username=U
//	    &sasl-password-env=VAR | &sasl-password-file=FILE
//	    &log-level=debug|info|warn|error
//
// (plus the common signals, start, timeout, retry-*, inflight). TLS and
// SASL are those of -storage kafka (kafkaConnSettings); any tls-*
// parameter implies tls=true. The password is never part of the URL (the
// URL is shown in ps, in shell history and in errors): it is read, when
// the flag is parsed, from the environment variable or the file named.
func parseKafkaDestination(host string, q url.Values) (func(*slog.Logger) (storage.Sink, error), error) {
	level, err := kafkaDestinationLogLevel(q)
	if err != nil {
		return nil, err
	}
	cfg, err := kafkaDestinationConfig(host, q)
	if err != nil {
		return nil, err
	}
	return func(logger *slog.Logger) (storage.Sink, error) {
		// The Kafka client logs every connection and metadata refresh
		// at info: only what reaches level (default warn, as
		// -kafka-log-level) shows in the receiver's log.
		cfg.Logger = slog.New(minLevel{logger.Handler(), level})
		// Open does not wait for the brokers: while they are down, writes
		// fail as retryable and the forwarder retries them.
		return kafka.Open(cfg)
	}, nil
}

// kafkaDestinationLogLevel takes from q the log-level parameter: the least
// severe Kafka client message logged, warn when absent.
func kafkaDestinationLogLevel(q url.Values) (slog.Level, error) {
	level := slog.LevelWarn
	vals, ok := q["log-level"]
	delete(q, "log-level")
	switch {
	case !ok:
		return level, nil
	case len(vals) > 1:
		return level, fmt.Errorf("log-level is given %d times", len(vals))
	}
	if err := level.UnmarshalText([]byte(vals[0])); err != nil {
		return level, fmt.Errorf("bad log-level=%s: want debug, info, warn or error", vals[0])
	}
	return level, nil
}

// kafkaDestinationConfig is the sink configuration of a kafka:// URL
// (parseKafkaDestination); it deletes from q the parameters it takes.
func kafkaDestinationConfig(host string, q url.Values) (kafka.Config, error) {
	cfg := kafka.Config{Compression: "none"}
	for b := range strings.SplitSeq(host, ",") {
		if _, _, err := net.SplitHostPort(b); err != nil {
			return kafka.Config{}, fmt.Errorf("kafka broker %q is not host:port", b)
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
			return kafka.Config{}, err
		}
		if ok && v == "" {
			return kafka.Config{}, fmt.Errorf("%s is empty", t.key)
		}
		*t.dst = v
	}
	// partition-traces-by-id is the Collector kafkaexporter's option
	// (-kafka-partition-traces-by-id of -storage kafka).
	if v, ok, err := take("partition-traces-by-id"); err != nil {
		return kafka.Config{}, err
	} else if ok {
		if cfg.PartitionTracesByID, err = strconv.ParseBool(v); err != nil {
			return kafka.Config{}, fmt.Errorf("partition-traces-by-id=%s: want true or false", v)
		}
	}
	if v, ok, err := take("compression"); err != nil {
		return kafka.Config{}, err
	} else if ok {
		switch v {
		case "none", "gzip", "snappy", "lz4", "zstd":
			cfg.Compression = v
		default:
			return kafka.Config{}, fmt.Errorf("compression=%s: want none, gzip, snappy, lz4 or zstd", v)
		}
	}
	if v, ok, err := take("max-message-bytes"); err != nil {
		return kafka.Config{}, err
	} else if ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1024 {
			return kafka.Config{}, fmt.Errorf("max-message-bytes=%s: want a number of bytes, at least 1024", v)
		}
		cfg.MaxMessageBytes = n
	}
	var conn kafkaConnSettings
	for _, p := range []struct {
		key string
		dst *string
	}{{"tls-ca", &conn.CA}, {"tls-cert", &conn.Cert}, {"tls-key", &conn.Key}, {"tls-server-name", &conn.ServerName},
		{"sasl-mechanism", &conn.Mechanism}, {"sasl-username", &conn.Username}} {
		v, ok, err := take(p.key)
		if err != nil {
			return kafka.Config{}, err
		}
		if ok && v == "" {
			return kafka.Config{}, fmt.Errorf("%s is empty", p.key)
		}
		*p.dst = v
	}
	for _, p := range []struct {
		key string
		dst *bool
	}{{"tls", &conn.TLS}, {"insecure-skip-verify", &conn.Insecure}} {
		if v, ok, err := take(p.key); err != nil {
			return kafka.Config{}, err
		} else if ok {
			if *p.dst, err = strconv.ParseBool(v); err != nil {
				return kafka.Config{}, fmt.Errorf("%s=%s: want true or false", p.key, v)
			}
		}
	}
	if _, ok := q["sasl-password"]; ok {
		return kafka.Config{}, errors.New("sasl-password is not taken in the URL, which ps, shell history and errors show: use sasl-password-env=VAR or sasl-password-file=FILE")
	}
	pwd, err := kafkaURLPassword(take)
	if err != nil {
		return kafka.Config{}, err
	}
	if pwd != "" && conn.Mechanism == "" {
		return kafka.Config{}, errors.New("sasl-password-env and sasl-password-file need sasl-mechanism")
	}
	if conn.Mechanism != "" && pwd == "" {
		return kafka.Config{}, errors.New("sasl-mechanism needs a password: sasl-password-env=VAR or sasl-password-file=FILE")
	}
	conn.Password = pwd
	if cfg.TLS, cfg.SASL, err = conn.build(""); err != nil {
		return kafka.Config{}, err
	}
	// What Open would refuse, refused at parse time (exit 2, one line).
	return cfg, cfg.Validate()
}

// kafkaURLPassword reads the SASL password a kafka:// destination names:
// sasl-password-env=VAR (the variable must be set and not empty) or
// sasl-password-file=FILE (its content, without the trailing newline
// that editors and `echo` add).
func kafkaURLPassword(take func(string) (string, bool, error)) (string, error) {
	env, envOK, err := take("sasl-password-env")
	if err != nil {
		return "", err
	}
	file, fileOK, err := take("sasl-password-file")
	if err != nil {
		return "", err
	}
	switch {
	case envOK && fileOK:
		return "", errors.New("sasl-password-env and sasl-password-file are both given: use one")
	case envOK:
		pwd := os.Getenv(env)
		if env == "" || pwd == "" {
			return "", fmt.Errorf("sasl-password-env=%s: the environment variable %q is not set or empty", env, env)
		}
		return pwd, nil
	case fileOK:
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("sasl-password-file: cannot read the password: %w", err)
		}
		pwd := strings.TrimRight(string(b), "\r\n")
		if pwd == "" {
			return "", fmt.Errorf("sasl-password-file=%s is empty", file)
		}
		return pwd, nil
	}
	return "", nil
}
