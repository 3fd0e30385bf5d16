#!/usr/bin/env bash
# Publish latency while a fan-out runs: waits for a push-server started by bench.sh, then after
# the driver's warm-up POSTs N events (default 80, 10/s) to another topic and prints p50/p99/max
# of the HTTP round trip in ms. Usage: bench/publish-probe.sh [N] [JAR-PATH] & bench/compare.sh ...
n=${1:-80}; jar=${2:-push-server.jar}
for i in $(seq 1 240); do
  pid=$(pgrep -f "$jar --port" | head -1); [ -n "$pid" ] && break; sleep 0.25
done
[ -n "$pid" ] || exit 0
port=$(tr '\0' ' ' < /proc/$pid/cmdline | sed -E 's/.*--port ([0-9]+).*/\1/')
for i in $(seq 1 60); do curl -fs http://127.0.0.1:$port/readyz >/dev/null && break; sleep 0.5; done
sleep 6 # subscribers connect, then the driver's 2 s warm-up
for i in $(seq 1 $n); do
  curl -s -o /dev/null -w '%{time_total}\n' -H 'content-type: application/json' -d '{"probe":1}' \
      http://127.0.0.1:$port/v1/topics/probe/events
  sleep 0.1
done | sort -n | awk '{a[NR]=$1*1000} END {i = int(NR * 0.99) + 1; if (i > NR) i = NR; printf "publish ms: p50 %.1f p99 %.1f max %.1f (n=%d)\n", a[int(NR * 0.5) + 1], a[i], a[NR], NR}'
