#!/usr/bin/env bash
# Publish latency while a fan-out runs: waits for a push-server started by bench.sh, then after
# the driver's warm-up POSTs N events (default 160 at 20/s: inside the 10 s window) to another
# topic over one keep-alive connection (publish-probe.mjs; curl's own connection set-up made most
# of what it measured) and prints p50/p90/p99/max of the round trip in ms.
# Usage: bench/publish-probe.sh [N] [JAR-PATH] & bench/compare.sh ...
n=${1:-160}; jar=${2:-push-server.jar}
for i in $(seq 1 240); do
  pid=$(pgrep -f "$jar --port" | head -1); [ -n "$pid" ] && break; sleep 0.25
done
[ -n "$pid" ] || { echo "publish-probe: no '$jar --port' process appeared within 60 s" >&2; exit 1; }
port=$(tr '\0' ' ' < /proc/$pid/cmdline | sed -E 's/.*--port ([0-9]+).*/\1/')
for i in $(seq 1 60); do curl -fs http://127.0.0.1:$port/readyz >/dev/null && break; sleep 0.5; done
sleep 6 # subscribers connect, then the driver's 2 s warm-up
${PROBE_NODE:-node} "$(dirname "$0")/publish-probe.mjs" "$port" "$n" 20
