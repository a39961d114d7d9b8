#!/usr/bin/env bash
# start.sh DIR PORT — start (or keep) a single-node Apache Kafka broker in
# KRaft mode on loopback, for the storage/kafka tests.
#
#   PORT    PLAINTEXT listener (clients connect here)
#   PORT+1  KRaft controller listener
#   PORT+2  SASL_PLAINTEXT listener: PLAIN user otlp/otlp-secret and SCRAM-SHA-256/512
#           user otlp/otlp-secret (SCRAM credentials are written when the log dir is formatted)
#
# The broker's jars come from Maven Central through `mvn dependency:copy-dependencies`
# (pom.xml next to this script) and are cached in scripts/kafka/.jars. DIR holds
# server.properties, the log dir (DIR/data), broker.log and broker.pid. Idempotent:
# a broker already running for DIR is left alone, and an already formatted DIR
# keeps its data (the tests restart the broker and expect every acknowledged
# record to still be there). Every wait is bounded.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 DIR PORT" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mkdir -p "$1" && cd "$1" && pwd)
port=$2
cport=$((port + 1))
sport=$((port + 2))
jars="$here/.jars"
java=${JAVA:-java}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The jars: fetched once; a partial download (no marker) is redone.
if [ ! -f "$jars/.complete" ]; then
	echo "kafka: fetching broker jars from Maven Central into $jars" >&2
	rm -rf "$jars"
	mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$jars" >&2
	touch "$jars/.complete"
fi

if [ -f "$dir/broker.pid" ] && kill -0 "$(cat "$dir/broker.pid")" 2>/dev/null; then
	if port_open "$port"; then
		echo "kafka: already running (pid $(cat "$dir/broker.pid")) on 127.0.0.1:$port" >&2
		exit 0
	fi
else
	rm -f "$dir/broker.pid"
	for p in "$port" "$cport" "$sport"; do
		if port_open "$p"; then
			echo "kafka: port $p is already in use by another process" >&2
			exit 1
		fi
	done
fi

if [ ! -f "$dir/broker.pid" ]; then
	cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SASL_PLAINTEXT://127.0.0.1:$sport
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_PLAINTEXT://127.0.0.1:$sport
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_otlp="otlp-secret";
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
log.dirs=$dir/data
# Three partitions so keying by trace id has something to spread over.
num.partitions=3
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
	if [ ! -f "$dir/data/meta.properties" ]; then
		# A fixed cluster id: the directory is private to one test run.
		"$java" -cp "$jars/*" kafka.tools.StorageTool format \
			-t otlp-lite-test-kafka0 -c "$dir/server.properties" \
			--add-scram 'SCRAM-SHA-256=[name=otlp,password=otlp-secret]' \
			--add-scram 'SCRAM-SHA-512=[name=otlp,password=otlp-secret]' \
			>"$dir/format.log" 2>&1 || {
			cat "$dir/format.log" >&2
			exit 1
		}
	fi
	# A small heap: the machine is shared and the broker only serves tests.
	# A fresh log per start, so the readiness check below sees only this run.
	[ -f "$dir/broker.log" ] && mv "$dir/broker.log" "$dir/broker.log.prev"
	nohup "$java" -Xms128m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto \
		-cp "$jars/*" kafka.Kafka "$dir/server.properties" >>"$dir/broker.log" 2>&1 </dev/null &
	echo $! >"$dir/broker.pid"
fi

pid=$(cat "$dir/broker.pid")
for _ in $(seq 1 120); do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "kafka: broker exited; last lines of $dir/broker.log:" >&2
		tail -n 30 "$dir/broker.log" >&2
		rm -f "$dir/broker.pid"
		exit 1
	fi
	if port_open "$port" && port_open "$sport" && grep -q 'Kafka Server started' "$dir/broker.log" 2>/dev/null; then
		echo "kafka: running (pid $pid) on 127.0.0.1:$port" >&2
		exit 0
	fi
	sleep 0.5
done
echo "kafka: broker did not start within 60s; see $dir/broker.log" >&2
exit 1
