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
# TARGETS: any of push, push-c1 (this server with the JIT's C2 compiler off,
# -XX:TieredStopAtLevel=1, on top of PUSH_JVM_OPTS; see the README's Performance section), nchan,
# netty, socketio.
# Needs: `mvn -q -DskipTests package` first, Node, and nginx-light + libnginx-mod-nchan for Nchan.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
rates=${1:-"50 100 200"}; subs=${2:-1000}; secs=${3:-10}; targets=${4:-"push nchan"}
peers=${PEERS:-}; for p in "$root/../shared/peers" "$root/../../shared/peers"; do [ -z "$peers" ] && [ -x "$p/bench.sh" ] && peers=$p; done
[ -x "$peers/bench.sh" ] || { echo "no peers driver (looked in ${PEERS:-$root/../shared/peers and $root/../../shared/peers}; set PEERS to the peers folder)" >&2; exit 1; }
export PIN_SERVER=${PIN_SERVER:-0} PIN_DRIVER=${PIN_DRIVER:-1}
out=$(mktemp)
pattern() { case $1 in push|ours|push-c1) echo '^java .*push-server[.]jar --port' ;; nchan) echo '^nginx: worker' ;;
  socketio) echo 'socketio-server[.]mjs' ;; netty) echo 'RawNettyBroadcast' ;; esac; }
# One run of one target. The shared driver picks its server's port at random in 30000-49999, which
# overlaps Linux's ephemeral ports (32768-60999): a port that an earlier run's client sockets left
# in TIME_WAIT cannot be bound by a listener (those sockets had no SO_REUSEADDR), the server exits
# with "Address already in use" and the driver connects 0. Such a run measured nothing: it is run
# again, once, and says so.
attempt() { # target rate: one bench.sh run, with its CPU split when SPLIT=1
  if [ "${SPLIT:-0}" = 1 ]; then
    node "$root/bench/cpu-split.mjs" "$(pattern $1)" "${SPLIT_WINDOW:-$secs}" > "$out.split" 2>&1 & split=$!
  fi
  if [ "$1" = push-c1 ]; then
    PUSH_JVM_OPTS="${PUSH_JVM_OPTS:-} -XX:TieredStopAtLevel=1" PROJECT_DIR=${PROJECT_DIR:-$root} \
      "$peers/bench.sh" push "$subs" "$2" "$secs" | sed 's/"target":"ours"/"target":"ours (C1 only)"/'
  else
    PROJECT_DIR=${PROJECT_DIR:-$root} "$peers/bench.sh" "$1" "$subs" "$2" "$secs"
  fi
  if [ "${SPLIT:-0}" = 1 ]; then wait $split; fi
}
once() {
  local line
  line=$(attempt "$1" "$2")
  if grep -q '"connected":0,' <<< "$line"; then
    echo "$1 at $2/s: its server did not start (port taken?); running it again" >&2
    line=$(attempt "$1" "$2")
  fi
  echo "$line" | tee -a "$out" >&2
  if [ "${SPLIT:-0}" = 1 ]; then echo "$1 $2/s: $(cat "$out.split")" >&2; fi
}
for r in $rates; do
  for t in $targets; do
    once "$t" "$r"
  done
done
echo
echo "| server | offered | CPU µs/delivery | p99 ms | delivered | published |"
echo "|---|---|---|---|---|---|"
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(l => l.startsWith("{"));
  for (const l of lines) { const j = JSON.parse(l);
    console.log(`| ${j.target} | ${j.subs/1000}k × ${j.rate}/s | ${j.serverCpuMsPer1kDeliveries} | ${j.p99ms} | ${(100*j.deliveredShare).toFixed(1)} % | ${j.published} |`); }' "$out"
rm -f "$out" "$out.split"
