#!/usr/bin/env bash
# test.sh [go test flags] — start a throw-away single-node Kafka broker, run
# the storage/kafka tests against it (produce/consume, splitting, keying by
# trace id, SASL, broker stop and restart under load), then the interop
# module's Kafka tests: the OpenTelemetry Go SDK through `otlp-lite serve
# -storage kafka`, read back with a franz-go consumer (TestKafka); edge to
# store, SDK → serve -storage kafka → Kafka → serve -kafka-consume → disk
# (TestKafkaEdgeToStore); two consumers in a group, one SIGKILLed per round
# (TestKafkaConsumerGroupKill); the kafka:// forwarder over the broker's
# SASL listener (TestForwardKafkaSASLBroker); and those that use an in-process kfake
# cluster whatever the broker (the Collector's kafkaexporter against
# otlp-lite's keys and partitions, its records consumed); and exactly once
# through Kafka, serve -storage kafka → broker → serve -kafka-consume
# SIGKILLed repeatedly, every span stored once (cmd/otlp-lite
# TestKafkaExactlyOnceConsumerKill); and a keyed sender → serve -storage
# kafka SIGKILLed repeatedly and restarted, reading the keys back from the
# records, every span in the topic once (TestKafkaExactlyOnceReceiverKill).
# It stops the
# broker, also on failure. This is `make kafka-test`. The go test
# flags apply to the storage/kafka run.
#
# Environment: KAFKA_TEST_PORT picks the first port to try (default 29092;
# the broker uses it, +1 and +2). Needs Java 17 and Maven (first run: the
# broker jars are fetched from Maven Central into scripts/kafka/.jars).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=${KAFKA_TEST_PORT:-29092}
for _ in $(seq 1 20); do
	if ! port_open "$port" && ! port_open $((port + 1)) && ! port_open $((port + 2)); then
		break
	fi
	port=$((port + 10))
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/otlp-lite-kafka.XXXXXX")
cleanup() {
	"$here/stop.sh" "$dir" || true
	rm -rf "$dir"
}
trap cleanup EXIT
"$here/start.sh" "$dir" "$port"

cd "$root"
OTLP_LITE_KAFKA_BROKERS="127.0.0.1:$port" \
OTLP_LITE_KAFKA_SASL_BROKERS="127.0.0.1:$((port + 2))" \
OTLP_LITE_KAFKA_DIR="$dir" \
	go test -race -count=1 -timeout 5m "$@" ./storage/kafka/

OTLP_LITE_KAFKA_BROKERS="127.0.0.1:$port" \
	go test -count=1 -timeout 3m -run 'TestKafkaExactlyOnce' ./cmd/otlp-lite/

cd "$root/interop"
OTLP_LITE_KAFKA_BROKERS="127.0.0.1:$port" \
OTLP_LITE_KAFKA_SASL_BROKERS="127.0.0.1:$((port + 2))" \
	go test -count=1 -timeout 6m -run Kafka ./...
