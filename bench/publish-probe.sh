#!/usr/bin/env bash
# Publish latency while a fan-out runs: waits for a push-server started by bench.sh, then for the
# driver's subscribers to be connected (the server's push_connections gauge, SUBS of them, default
# 1000) and the driver's 2 s warm-up, and POSTs N events (default 180 at 30/s, ~6.3 s: inside the
# driver's 10 s window, and clear of its end, when the driver's 1,000 subscribers all disconnect
# at once) to another topic over one keep-alive connection (publish-probe.mjs; curl's own
# connection set-up made most of what it measured), and prints p50/p90/p99/max of the round trip
# in ms. PROBE_SLOW_MS=M also prints when each publish slower than M ms was sent.
# Usage: bench/publish-probe.sh [N] [JAR-PATH] [SUBS] & bench/compare.sh ...
# (Before session 16 it waited a fixed 6 s after /readyz and sent 160 at 20/s: its last second
# or so overlapped the driver's disconnects, and its slowest publishes were there.)
n=${1:-180}; jar=${2:-push-server.jar}; subs=${3:-1000}
for i in $(seq 1 240); do
  pid=$(pgrep -f "$jar --port" | head -1); [ -n "$pid" ] && break; sleep 0.25
done
[ -n "$pid" ] || { echo "publish-probe: no '$jar --port' process appeared within 60 s" >&2; exit 1; }
port=$(tr '\0' ' ' < /proc/$pid/cmdline | sed -E 's/.*--port ([0-9]+).*/\1/')
for i in $(seq 1 60); do curl -fs http://127.0.0.1:$port/readyz >/dev/null && break; sleep 0.5; done
connected=0
for i in $(seq 1 300); do
  connected=$(curl -fs http://127.0.0.1:$port/metrics | awk '/^push_connections\{/ { s += $2 } END { print s + 0 }')
  [ "${connected%.*}" -ge "$subs" ] && break; sleep 0.1
done
[ "${connected%.*}" -ge "$subs" ] || { echo "publish-probe: $connected of $subs subscribers connected within 30 s" >&2; exit 1; }
sleep 2.5 # the driver's warm-up
${PROBE_NODE:-node} "$(dirname "$0")/publish-probe.mjs" "$port" "$n" 30
