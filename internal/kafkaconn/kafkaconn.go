// Package kafkaconn is what the Kafka sink (storage/kafka) and the Kafka
// source (kafkasource) share: to reach the brokers, the client identity,
// dial timeout, TLS and SASL, and the client's log in the receiver's
// slog; the names of the record format both speak (the encodings and
// the tenant header), so that the source, a way in, need not import the
// sink; and the bounded decompression of record batches both read
// (BatchDecompressor: the source's records, the sink's keys at start).
package kafkaconn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Encodings of a record's value, the Collector's names: the protobuf
// Export*ServiceRequest, or its OTLP/JSON form.
const (
	EncodingProto = "otlp_proto"
	EncodingJSON  = "otlp_json"
)

// TenantHeader is the record header holding the tenant of the request a
// record came from, when the receiver runs with tenancy on
// (otlp.TenantFrom); records without it belong to otlp.DefaultTenant.
const TenantHeader = "tenant"

// SASL configures SASL authentication.
type SASL struct {
	// Mechanism is "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512".
	Mechanism string
	Username  string
	Password  string
}

// The client identity and dial timeout of the producer and the consumer
// when their configuration leaves them unset.
const (
	DefaultClientID    = "otlp-lite"
	DefaultDialTimeout = 5 * time.Second
)

// Opts are the client options shared by the producer and the
// consumer: logging, TLS and SASL.
func Opts(logger *slog.Logger, tlsCfg *tls.Config, sc *SASL) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if logger != nil {
		opts = append(opts, kgo.WithLogger(slogLogger{logger.With("component", "kafka")}))
	}
	if tlsCfg != nil {
		opts = append(opts, kgo.DialTLSConfig(tlsCfg.Clone()))
	}
	if sc != nil {
		m, err := Mechanism(sc)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// Mechanism is the franz-go mechanism of c, or why c is not valid.
func Mechanism(c *SASL) (sasl.Mechanism, error) {
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
