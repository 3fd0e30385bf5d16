#!/usr/bin/env bash
# Where a delivery's latency goes: one push-server pinned to core 0, the shared driver
# (fanout.mjs) on core 1, then the server's own view from /metrics: push_fanout_latency (an event
# appended to its write to the topic's LAST subscriber) and push_publish_latency (a publish
# accepted to appended), as the histogram buckets that hold p50/p90/p99/p99.9 (bounds, not
# interpolations), over the whole run including the driver's 2 s warm-up. Set against the
# driver's p99 (publish sent to frame parsed), the difference is what lies outside the server's
# fan-out: the publish's HTTP round, the kernel, and the driver's own core.
# Usage: bench/fanout-split.sh [RATE] [SUBS] [SECONDS]   (PUSH_JVM_OPTS, PEERS, PROJECT_DIR as bench.sh)
set -u
rate=${1:-50}; subs=${2:-1000}; secs=${3:-10}
project=${PROJECT_DIR:-$(pwd)}; peers=${PEERS:-$project/../shared/peers}
export PEERS_NODE=${PEERS_NODE:-/tmp/peers-node}
[ -d "$PEERS_NODE/node_modules/ws" ] || npm install --prefix "$PEERS_NODE" --no-audit --no-fund --silent ws@8.18.3 >/dev/null 2>&1
ulimit -n 20000 2>/dev/null
port=$((30000 + RANDOM % 20000)); dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
taskset -c ${PIN_SERVER:-0} java ${PUSH_JVM_OPTS:-} -jar $project/server/target/push-server.jar \
    --port $port --data-dir $dir/data > $dir/log 2>&1 & spid=$!
for i in $(seq 1 60); do curl -fs http://127.0.0.1:$port/readyz >/dev/null && break; sleep 0.5; done
taskset -c ${PIN_DRIVER:-1} node $peers/fanout.mjs --target ours --port $port --subs $subs --rate $rate \
    --seconds $secs --workers 1 --size 100 --pids $spid
curl -fs http://127.0.0.1:$port/metrics > $dir/metrics || { echo "server gone:"; tail -5 $dir/log; exit 1; }
kill $spid; wait $spid 2>/dev/null
python3 - $dir/metrics <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
for name in ('push_fanout_latency_seconds', 'push_publish_latency_seconds'):
    buckets = [(float(re.search(r'le="([^"]+)"', l).group(1)), float(l.split()[-1]))
               for l in lines if l.startswith(name + '_bucket') and '+Inf' not in l]
    count = [float(l.split()[-1]) for l in lines if l.startswith(name + '_count')]
    if not count:
        print(name, 'not scraped'); continue
    n = count[0]
    quantiles = [f'p{q * 100:g}<={next((le for le, c in buckets if c >= q * n), float("inf")) * 1000:.1f}ms'
                 for q in (0.5, 0.9, 0.99, 0.999)]
    print(name, int(n), ' '.join(quantiles))
PY
