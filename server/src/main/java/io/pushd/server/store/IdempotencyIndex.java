package io.pushd.server.store;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * Idempotency keys seen within the dedupe window, so a retried publish gets its original ID. Rebuilt
 * from the log at start-up, so it survives restarts. Guarded by its own monitor.
 */
final class IdempotencyIndex {

    private record Entry(String mapKey, long timestampMillis) {
    }

    private final long windowMillis;
    private final Map<String, Long> seqByKey = new HashMap<>();
    private final ArrayDeque<Entry> byAge = new ArrayDeque<>();

    IdempotencyIndex(long windowMillis) {
        this.windowMillis = windowMillis;
    }

    synchronized void put(String topic, String key, long seq, long timestampMillis, long nowMillis) {
        if (timestampMillis < nowMillis - windowMillis) {
            return;
        }
        String mapKey = topic + '\u0000' + key;
        seqByKey.put(mapKey, seq);
        byAge.addLast(new Entry(mapKey, timestampMillis));
    }

    synchronized long find(String topic, String key, long nowMillis) {
        expire(nowMillis);
        Long seq = seqByKey.get(topic + '\u0000' + key);
        return seq == null ? -1 : seq;
    }

    synchronized void expire(long nowMillis) {
        long cutoff = nowMillis - windowMillis;
        while (!byAge.isEmpty() && byAge.peekFirst().timestampMillis() < cutoff) {
            Entry e = byAge.removeFirst();
            seqByKey.remove(e.mapKey());
        }
    }

    synchronized int size() {
        return seqByKey.size();
    }
}
