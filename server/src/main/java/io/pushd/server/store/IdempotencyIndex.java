package io.pushd.server.store;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * Idempotency keys seen within the dedupe window, so a retried publish gets its original ID. Rebuilt
 * at start-up from the log and from the keys saved before retention last deleted log files
 * ({@link #snapshot}), so it survives restarts even for events retention no longer keeps. Guarded
 * by its own monitor.
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
        Long before = seqByKey.put(mapKey, seq);
        if (before != null && before == seq) {
            return; // the same event again (saved and still in the log): already in byAge
        }
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

    /** Every key in the window, oldest first: {@code count, then (timestamp, seq, topic, key)...}. */
    synchronized byte[] snapshot(long nowMillis) {
        expire(nowMillis);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + byAge.size() * 48);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(byAge.size());
            for (Entry e : byAge) {
                int nul = e.mapKey().indexOf('\u0000');
                out.writeLong(e.timestampMillis());
                out.writeLong(seqByKey.getOrDefault(e.mapKey(), -1L));
                out.writeUTF(e.mapKey().substring(0, nul));
                out.writeUTF(e.mapKey().substring(nul + 1));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail
        }
        return bytes.toByteArray();
    }

    /** Adds the keys of a {@link #snapshot} that are still in the window; returns how many. */
    synchronized int load(byte[] snapshot, long nowMillis) throws IOException {
        int added = 0;
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(snapshot))) {
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                long ts = in.readLong();
                long seq = in.readLong();
                String topic = in.readUTF();
                String key = in.readUTF();
                if (seq > 0 && ts >= nowMillis - windowMillis) {
                    put(topic, key, seq, ts, nowMillis);
                    added++;
                }
            }
        }
        return added;
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
