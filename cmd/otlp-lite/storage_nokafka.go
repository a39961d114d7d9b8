//go:build nokafka

package main

import (
	"errors"
	"flag"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/storage"
)

// registerKafkaFlags defines no flags in a build without Kafka; its open
// explains why -storage kafka cannot work.
func registerKafkaFlags(*flag.FlagSet) kafkaFlags {
	return kafkaFlags{
		check:        func() error { return nil },
		metadataKeys: func() []string { return nil },
		open: func(*metrics.Set) (storage.Sink, error) {
			return nil, errors.New("built without Kafka support (-tags nokafka)")
		},
	}
}
