//go:build nokafka

package main

import (
	"errors"
	"flag"

	"github.com/otlp-lite/otlp-lite/storage"
)

// registerKafkaFlags defines no flags in a build without Kafka; the
// returned function explains why -storage kafka cannot work.
func registerKafkaFlags(*flag.FlagSet) (check func() error, open func() (storage.Sink, error)) {
	return func() error { return nil }, func() (storage.Sink, error) {
		return nil, errors.New("built without Kafka support (-tags nokafka)")
	}
}
