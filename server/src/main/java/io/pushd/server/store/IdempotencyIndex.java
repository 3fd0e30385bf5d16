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

    /**
     * Keys remembered at most (~100 bytes each). Beyond this the oldest are forgotten before the
     * window ends: a bound on heap and start-up time rather than a promise broken silently, since
     * a retry after that is stored again (documented with the dedupe window).
     */
    static final int MAX_KEYS = 1_000_000;

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
        while (byAge.size() > MAX_KEYS) {
            seqByKey.remove(byAge.removeFirst().mapKey());
        }
    }

    synchronized long find(String topic, String key, long nowMillis) {
        expire(nowMillis);
        Long seq = seqByKey.get(topic + '\u0000' + key);
        return seq == null ? -1 : seq;
    }

    /** Forgets every key (a new history: the old one's keys name events it no longer has). */
    synchronized void clear() {
        seqByKey.clear();
        byAge.clear();
    }

    synchronized void expire(long nowMillis) {
        long cutoff = nowMillis - windowMillis;
        while (!byAge.isEmpty() && byAge.peekFirst().timestampMillis() < cutoff) {
            Entry e = byAge.removeFirst();
            seqByKey.remove(e.mapKey());
        }
    }
}
