#!/usr/bin/env bash
# Fan-out side by side with Nchan, one command:
#   bench/compare.sh ["50 100 200"] [SUBS] [SECONDS] [TARGETS]
# Runs the shared peers driver (../shared/peers/bench.sh, or $PEERS) for each offered rate, this
# server and Nchan in the same run (server pinned to core 0, driver to core 1 unless PIN_SERVER /
# PIN_DRIVER say otherwise), and prints one Markdown row per server and rate: server CPU µs per
# delivery (= ms per 1,000), p99 publish→deliver, delivered share, published events.
# SPLIT=1: after each run, where the CPU went (bench/cpu-split.mjs): the server's by thread kind
# (event loops, JIT compilers, writer) and each core's busy time with its softirq share, over
# the last SPLIT_WINDOW seconds of the window (default: all of it).
# Needs: `mvn -q -DskipTests package` first, Node, and nginx-light + libnginx-mod-nchan for Nchan.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
rates=${1:-"50 100 200"}; subs=${2:-1000}; secs=${3:-10}; targets=${4:-"push nchan"}
peers=${PEERS:-}; for p in "$root/../shared/peers" "$root/../../shared/peers"; do [ -z "$peers" ] && [ -x "$p/bench.sh" ] && peers=$p; done
[ -x "$peers/bench.sh" ] || { echo "no peers driver (looked in ${PEERS:-$root/../shared/peers and $root/../../shared/peers}; set PEERS to the peers folder)" >&2; exit 1; }
export PIN_SERVER=${PIN_SERVER:-0} PIN_DRIVER=${PIN_DRIVER:-1}
out=$(mktemp)
pattern() { case $1 in push|ours) echo '^java .*push-server[.]jar --port' ;; nchan) echo '^nginx: worker' ;;
  socketio) echo 'socketio-server[.]mjs' ;; netty) echo 'RawNettyBroadcast' ;; esac; }
for r in $rates; do
  if [ "${SPLIT:-0}" = 1 ]; then
    for t in $targets; do
      node "$root/bench/cpu-split.mjs" "$(pattern $t)" "${SPLIT_WINDOW:-$secs}" > "$out.split" 2>&1 & split=$!
      PROJECT_DIR=${PROJECT_DIR:-$root} "$peers/bench.sh" "$t" "$subs" "$r" "$secs" | tee -a "$out" >&2
      wait $split; echo "$t $r/s: $(cat "$out.split")" >&2
    done
  else
    PROJECT_DIR=${PROJECT_DIR:-$root} "$peers/bench.sh" "$targets" "$subs" "$r" "$secs" | tee -a "$out" >&2
  fi
done
echo
echo "| server | offered | CPU µs/delivery | p99 ms | delivered | published |"
echo "|---|---|---|---|---|---|"
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(l => l.startsWith("{"));
  for (const l of lines) { const j = JSON.parse(l);
    console.log(`| ${j.target} | ${j.subs/1000}k × ${j.rate}/s | ${j.serverCpuMsPer1kDeliveries} | ${j.p99ms} | ${(100*j.deliveredShare).toFixed(1)} % | ${j.published} |`); }' "$out"
rm -f "$out" "$out.split"
