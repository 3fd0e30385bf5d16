#!/usr/bin/env bash
# An AOT cache for JDK 25 (JEP 483/515: classes loaded and linked, method profiles) trained under
# load: starts the fat jar with -XX:AOTCacheOutput=OUT on a scratch data directory, replays 50,000
# events to one subscriber and fans out 1,000 subscribers x 100 events/s for 10 s through it (the
# peers driver), then stops it with SIGTERM; the JVM writes OUT as it exits. Use the cache with
#   java -XX:AOTCache=OUT --sun-misc-unsafe-memory-access=allow -jar server/target/push-server.jar
# with the same JDK and the same jar file at the same path (a cache that does not match is not used:
# the JVM logs an AOT error and runs without it).
# --sun-misc-unsafe-memory-access=allow lets Netty use sun.misc.Unsafe on JDK 24+, as on JDK 17:
# without it the server runs, but without its direct socket writes.
# A cache trained by a start alone (the warm-ups) gained less: see README, Performance, session 22.
# Usage: bench/aot-cache.sh OUT   (JAVA25: the JDK 25 java, default /usr/lib/jvm/temurin-25-jdk-amd64/bin/java;
# JAR: the fat jar; needs Node and the peers driver's npm packages, as bench/replay-after-restart.sh)
set -u
root=$(cd "$(dirname "$0")/.." && pwd); peers=${PEERS:-$root/../shared/peers}
out=${1:?usage: bench/aot-cache.sh OUT}
java=${JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
jar=${JAR:-$root/server/target/push-server.jar}
port=${PORT:-18291}; dir=$(mktemp -d); pid=
export PEERS_NODE=${PEERS_NODE:-/tmp/peers-node}
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf $dir' EXIT
[ -f "$peers/fanout.mjs" ] || { echo "no peers driver at $peers (set PEERS to the peers folder)" >&2; exit 1; }
"$java" -version 2>&1 | grep -q 'version "2[5-9]' || { echo "$java is not a JDK 25 or later (set JAVA25)" >&2; exit 1; }
ulimit -n 20000 2>/dev/null
"$java" -XX:AOTCacheOutput="$out" --sun-misc-unsafe-memory-access=allow -jar "$jar" --port $port \
    --data-dir $dir/data > $dir/log 2>&1 &
pid=$!
for i in $(seq 1 300); do
  kill -0 $pid 2>/dev/null || { echo "server exited: $(tail -5 $dir/log)" >&2; pid=; exit 1; }
  curl -fs http://127.0.0.1:$port/readyz > /dev/null && break; sleep 0.1
done
node $peers/replay.mjs --port $port --events 50000 --topic aot-replay > /dev/null || { echo "the replay failed" >&2; exit 1; }
node $peers/fanout.mjs --target ours --port $port --subs 1000 --rate 100 --seconds 10 --pids $pid > /dev/null \
  || { echo "the fan-out failed" >&2; exit 1; }
kill -TERM $pid; wait $pid; pid=
grep -q "AOTCache creation is complete" $dir/log || { echo "no cache written: $(tail -5 $dir/log)" >&2; exit 1; }
ls -l "$out"
