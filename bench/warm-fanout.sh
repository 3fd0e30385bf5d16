#!/usr/bin/env bash
# Fan-out CPU per delivery on a warm server: the shared driver's `bench.sh` starts a fresh server
# for each run, so its 10 s window also pays the JIT compiling the fan-out path (C2's threads were
# a fifth to a third of the server's samples 14-40 s after start at 1k x 200). This keeps one server:
#   bench/warm-fanout.sh RATE [SUBS] [WARM_SECONDS] [SECONDS]
# runs the driver WARM_SECONDS (default 60) at RATE, discards that, then measures SECONDS (default
# 10) with new subscribers; server pinned to core 0, driver to core 1 (PIN_SERVER / PIN_DRIVER).
# One JSON line per run, the warm-up's first. Nchan has no JIT: compare with its bench.sh run.
# Needs `mvn -q -DskipTests package` first and Node (the driver's ws package: bench.sh installs it).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
rate=${1:?rate}; subs=${2:-1000}; warm=${3:-60}; secs=${4:-10}
peers=${PEERS:-}; for p in "$root/../shared/peers" "$root/../../shared/peers"; do [ -z "$peers" ] && [ -x "$p/bench.sh" ] && peers=$p; done
[ -f "$peers/fanout.mjs" ] || { echo "no peers driver (set PEERS to the peers folder)" >&2; exit 1; }
export PEERS_NODE=${PEERS_NODE:-/tmp/peers-node}
[ -d "$PEERS_NODE/node_modules/ws" ] || { echo "run $peers/bench.sh once first (it installs the driver's packages)" >&2; exit 1; }
ulimit -n 20000 2>/dev/null
dir=$(mktemp -d); trap 'kill $spid 2>/dev/null; wait $spid 2>/dev/null; rm -rf $dir' EXIT
# a port below Linux's ephemeral range (32768-60999), so no earlier run's TIME_WAIT socket holds it
port=$((20000 + RANDOM % 10000))
taskset -c ${PIN_SERVER:-0} java ${PUSH_JVM_OPTS:-} -jar $root/server/target/push-server.jar --port $port --data-dir $dir/data > $dir/log 2>&1 & spid=$!
for i in $(seq 1 60); do curl -fs http://127.0.0.1:$port/readyz >/dev/null && break; sleep 0.5; done
curl -fs http://127.0.0.1:$port/readyz >/dev/null || { echo "server did not start:" >&2; tail -5 $dir/log >&2; exit 1; }
for s in $warm $secs; do
  taskset -c ${PIN_DRIVER:-1} node $peers/fanout.mjs --target ours --port $port --subs $subs --rate $rate \
      --seconds $s --workers 1 --size ${SIZE:-100} --pids $spid | grep '^{'
done
