#!/usr/bin/env bash
# Live fan-out over server-sent events beside WebSocket, one driver for both (bench/sse-fanout.mjs):
#   bench/sse-fanout.sh [RATE] [SUBS] [SECONDS] [TRANSPORTS]
# (defaults 100, 1000, 10, "sse websocket"; also sse-multi: streams of two topics, one of them
# quiet, whose id: line is the stream's cursor): for each transport a fresh server (pinned to core 0,
# the driver to core 1, unless PIN_SERVER / PIN_DRIVER say otherwise), N subscribers of one topic,
# one JSON line: server CPU µs per delivery (serverCpuMsPer1kDeliveries), p50/p99 publish→deliver.
# JAR picks another build's fat jar, PUSH_JVM_OPTS reaches the server. Needs `mvn -q -DskipTests
# package` first, Node, and the peers driver's npm packages (its bench.sh installs them).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
rate=${1:-100}; subs=${2:-1000}; secs=${3:-10}; transports=${4:-"sse websocket"}
jar=${JAR:-$root/server/target/push-server.jar}
export PEERS_NODE=${PEERS_NODE:-/tmp/peers-node}
[ -d "$PEERS_NODE/node_modules/ws" ] || { echo "run ../shared/peers/bench.sh once first (it installs the driver's packages)" >&2; exit 1; }
ulimit -n 20000 2>/dev/null
for t in $transports; do
  dir=$(mktemp -d)
  port=$((20000 + RANDOM % 10000)) # below Linux's ephemeral range: no earlier run's TIME_WAIT holds it
  taskset -c ${PIN_SERVER:-0} java ${PUSH_JVM_OPTS:-} -jar $jar --port $port --data-dir $dir/data > $dir/log 2>&1 & spid=$!
  for i in $(seq 1 120); do curl -fs http://127.0.0.1:$port/readyz >/dev/null && break; sleep 0.25; done
  taskset -c ${PIN_DRIVER:-1} node $root/bench/sse-fanout.mjs --transport $t --port $port --subs $subs --rate $rate \
      --seconds $secs --pids $spid
  kill $spid; wait $spid 2>/dev/null; rm -rf $dir
done
