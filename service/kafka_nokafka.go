//go:build nokafka

package service

import (
	"context"
	"errors"
	"log/slog"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/storage"
)

// errNoKafka explains why Kafka cannot work in this build.
var errNoKafka = errors.New("built without Kafka support (-tags nokafka)")

func defaultKafkaConfig() KafkaConfig               { return KafkaConfig{} }
func defaultKafkaConsumeConfig() KafkaConsumeConfig { return KafkaConsumeConfig{} }
func (KafkaConfig) check() error                    { return nil }
func (KafkaConfig) metadataKeys() []string          { return nil }

func (KafkaConfig) openKafkaSink(*metrics.Set) (storage.Sink, error) { return nil, errNoKafka }

func (c Config) checkKafkaConsume() error {
	if c.KafkaConsume.Brokers != "" {
		return errNoKafka
	}
	return nil
}

type kafkaSource struct{}

func (c Config) startKafkaSource(*handler.Handler, *metrics.Set, *slog.Logger) (*kafkaSource, error) {
	return nil, nil
}

func (*kafkaSource) stop(context.Context) error { return nil }
