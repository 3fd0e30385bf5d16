#!/usr/bin/env bash
# The first replay after a restart (what the reconnect herd costs): fills a topic with N events
# (default 100,000) on a fresh server, stops it (SIGTERM), starts it again on the same data
# directory, and as soon as it is ready replays the topic from its start to one subscriber, twice
# (bench/replay-after-restart.mjs). Server pinned to core 0 and the client to core 1 unless
# PIN_SERVER / PIN_DRIVER say otherwise; TRANSPORT=sse replays over server-sent events (GET /v1/sse)
# instead of WebSocket, TRANSPORT=sse-multi over streams of that topic and a quiet one;
# PUSH_JVM_OPTS and PUSH_* variables reach the server;
# JAR picks another build's fat jar (default server/target/push-server.jar), to compare two in turn.
# Needs: `mvn -q -DskipTests package` first, Node, and the peers driver's npm packages (run its
# bench.sh once: it installs them in /tmp/peers-node, or PEERS_NODE).
set -u
root=$(cd "$(dirname "$0")/.." && pwd); peers=${PEERS:-$root/../shared/peers}
n=${1:-100000}; port=${PORT:-18190}; dir=$(mktemp -d); topic=replay$$
jar=${JAR:-$root/server/target/push-server.jar}
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf $dir' EXIT
[ -f "$peers/replay.mjs" ] || { echo "no peers driver at $peers (set PEERS to the peers folder)" >&2; exit 1; }
if curl -s -o /dev/null http://127.0.0.1:$port/; then
  echo "port $port is taken by another server (set PORT)" >&2; exit 1
fi
start() {
  taskset -c ${PIN_SERVER:-0} java ${PUSH_JVM_OPTS:-} -jar $jar --port $port --data-dir $dir/data >> $dir/log 2>&1 &
  pid=$!
  for i in $(seq 1 120); do
    kill -0 $pid 2>/dev/null || { echo "server exited: $(tail -5 $dir/log)" >&2; pid=; exit 1; }
    curl -fs http://127.0.0.1:$port/readyz > /dev/null && return; sleep 0.1
  done
  echo "server did not become ready: $(tail -5 $dir/log)" >&2; exit 1
}
stop() { kill -TERM $pid; wait $pid 2>/dev/null; pid=; }
start
taskset -c ${PIN_DRIVER:-1} node $peers/replay.mjs --port $port --events $n --topic $topic > /dev/null \
  || { echo "filling the topic failed" >&2; exit 1; }
stop
start
taskset -c ${PIN_DRIVER:-1} node $root/bench/replay-after-restart.mjs \
    --port $port --pid $pid --topic $topic --events $n --transport ${TRANSPORT:-websocket} || { echo "the replay probe failed" >&2; exit 1; }
stop
