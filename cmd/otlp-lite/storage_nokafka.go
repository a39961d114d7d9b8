//go:build nokafka

package main

import (
	"flag"

	"github.com/otlp-lite/otlp-lite/service"
)

// registerKafkaFlags defines no flags in a build without Kafka: -storage
// kafka is refused by the service, which says why.
func registerKafkaFlags(*flag.FlagSet, *service.KafkaConfig) {}

// registerKafkaConsumeFlags defines no flags, and no section, without
// Kafka.
func registerKafkaConsumeFlags(*flagSections, *service.KafkaConsumeConfig) {}
