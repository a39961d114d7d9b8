#!/usr/bin/env bash
# stop.sh DIR [-9] — stop the broker that start.sh started for DIR.
#
# Default: SIGTERM (a controlled shutdown), then SIGKILL if it is still running
# after 30s. With -9: SIGKILL at once, as a crash. Idempotent: no broker, no
# error. The data in DIR stays; delete DIR to start from scratch.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 DIR [-9]" >&2
	exit 2
fi
dir=$1
pidfile="$dir/broker.pid"
[ -f "$pidfile" ] || exit 0
pid=$(cat "$pidfile")
if ! kill -0 "$pid" 2>/dev/null; then
	rm -f "$pidfile"
	exit 0
fi
if [ "${2:-}" = "-9" ]; then
	kill -KILL "$pid" 2>/dev/null || true
else
	kill -TERM "$pid" 2>/dev/null || true
fi
for _ in $(seq 1 300); do
	if ! kill -0 "$pid" 2>/dev/null; then
		rm -f "$pidfile"
		exit 0
	fi
	sleep 0.1
done
echo "kafka: broker $pid still running after 30s; killing it" >&2
kill -KILL "$pid" 2>/dev/null || true
for _ in $(seq 1 50); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
rm -f "$pidfile"
