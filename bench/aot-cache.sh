#!/usr/bin/env bash
# An AOT cache for JDK 25 (JEP 483/515: classes loaded and linked, method profiles) trained under
# load: starts the fat jar with -XX:AOTCacheOutput=OUT on a scratch data directory, drives the load
# test's fan-out through it (1,000 WebSocket subscribers of one topic, 100 events/s for 2 + 10 s,
# publishes over HTTP), then stops it with SIGTERM; the JVM writes OUT as it exits. Use it with
#   java -XX:AOTCache=OUT --sun-misc-unsafe-memory-access=allow -jar server/target/push-server.jar
# with the same JDK and the same jar file at the same path (a cache that does not match is not used:
# the JVM logs an AOT error and runs without it).
# --sun-misc-unsafe-memory-access=allow lets Netty use sun.misc.Unsafe on JDK 24+, as on JDK 17:
# without it the server runs, but without its direct socket writes.
# A cache trained by a start alone (the warm-ups) gained less: see README, Performance, session 22.
# Usage: mvn -q -DskipTests package && bench/aot-cache.sh OUT
#   JAVA25: a JDK 25 java (default /usr/lib/jvm/temurin-25-jdk-amd64/bin/java); JAR: the fat jar.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: bench/aot-cache.sh OUT}
java=${JAVA25:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
jar=${JAR:-$root/server/target/push-server.jar}
loadtest=$root/loadtest/target/push-loadtest.jar
port=${PORT:-18291}; dir=$(mktemp -d); pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; wait 2>/dev/null; rm -rf $dir' EXIT
"$java" -version 2>&1 | grep -q 'version "2[5-9]' || { echo "$java is not a JDK 25 or later (set JAVA25)" >&2; exit 1; }
[ -f "$loadtest" ] || { echo "no $loadtest: mvn -q -DskipTests package first" >&2; exit 1; }
if curl -s -o /dev/null http://127.0.0.1:$port/; then
  echo "port $port is taken by another server (set PORT)" >&2; exit 1
fi
"$java" -XX:AOTCacheOutput="$out" --sun-misc-unsafe-memory-access=allow -jar "$jar" --host 127.0.0.1 \
    --port $port --data-dir $dir/data > $dir/log 2>&1 &
pid=$!
for i in $(seq 1 300); do
  kill -0 $pid 2>/dev/null || { echo "server exited: $(tail -5 $dir/log)" >&2; pid=; exit 1; }
  curl -fs http://127.0.0.1:$port/readyz > /dev/null && break; sleep 0.1
done
java -jar "$loadtest" fanout --url http://127.0.0.1:$port --subscribers 1000 --rate 100 --warmup 2s \
    --duration 10s --report-dir $dir/report > $dir/fanout.log 2>&1 \
  || { echo "the fan-out failed: $(tail -5 $dir/fanout.log)" >&2; exit 1; }
kill -TERM $pid; wait $pid; pid=
grep -q "AOTCache creation is complete" $dir/log || { echo "no cache written: $(tail -5 $dir/log)" >&2; exit 1; }
ls -l "$out"
