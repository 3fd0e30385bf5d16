package io.pushd.server.cluster;

import io.pushd.server.history.EventHistory;
import io.pushd.server.history.EventHistory.EventVisitor;
import io.pushd.server.history.TopicRange;

/**
 * What this node holds of one topic of the shared history: its epoch, the head it has applied
 * (every event up to it exists in Redis, and this node has fanned out every one it received),
 * the oldest kept, and the newest events in a ring so replays of recent events cost no round
 * trip. Changed only by the applier thread; read from any thread (hence the lock, held briefly).
 */
final class TopicLog {

    /** The ring starts small and doubles up to its capacity: most topics hold a few events. */
    private static final int FIRST_SIZE = 16;

    private final String topic;
    private final int capacity;
    private long[] seqs;
    private long[] timestamps;
    private byte[][] data;
    private String epoch;
    private long head;
    private long oldest;
    /** When this node last used the topic ({@link RedisHistory#now}): reads, subscribers. */
    private volatile long lastUsed;
    /** Set by the applier when it stops following the topic; then it is loaded again on next use. */
    private boolean retired;

    TopicLog(String topic, int capacity, String epoch, long head, long oldest) {
        this.topic = topic;
        this.capacity = capacity;
        allocate(Math.min(FIRST_SIZE, capacity));
        this.epoch = epoch;
        this.head = head;
        this.oldest = oldest;
    }

    String topic() {
        return topic;
    }

    /** Any thread: used now (a read, a subscriber); cheap, for every read. */
    void touch(long now) {
        if (lastUsed != now) {
            lastUsed = now;
        }
    }

    /**
     * Any thread: used now, by a subscriber that registered before it asks; false when the applier
     * retired this log first (then load the topic again). The lock orders the two: either the
     * applier sees this use and keeps the topic, or this sees the topic retired.
     */
    synchronized boolean use(long now) {
        if (retired) {
            return false;
        }
        lastUsed = now;
        return true;
    }

    /**
     * Applier thread: retires this log when it was not used since {@code before} and {@code unused}
     * (no local subscriber) still holds; returns whether it did.
     */
    synchronized boolean retireIfUnused(long before, java.util.function.BooleanSupplier unused) {
        if (retired || lastUsed >= before || !unused.getAsBoolean()) {
            return false;
        }
        retired = true;
        return true;
    }

    synchronized boolean retired() {
        return retired;
    }

    synchronized String epoch() {
        return epoch;
    }

    synchronized long head() {
        return head;
    }

    synchronized TopicRange range() {
        return new TopicRange(head, oldest);
    }

    /** Applier thread: the topic's history was replaced; nothing of the old epoch is kept. */
    synchronized void reset(String newEpoch) {
        epoch = newEpoch;
        head = 0;
        oldest = 0;
        allocate(Math.min(FIRST_SIZE, capacity));
    }

    private void allocate(int size) {
        seqs = new long[size];
        timestamps = new long[size];
        data = new byte[size][];
    }

    /** The ring is full of consecutive events: double it (up to the capacity), keeping what it holds. */
    private void growIfFull(long seq) {
        int size = seqs.length;
        if (size >= capacity || seq < size || seqs[(int) (seq % size)] != seq - size) {
            return;
        }
        long[] s = seqs;
        long[] t = timestamps;
        byte[][] d = data;
        allocate(Math.min(capacity, size * 2));
        for (int i = 0; i < size; i++) {
            if (d[i] != null) {
                int j = (int) (s[i] % seqs.length);
                seqs[j] = s[i];
                timestamps[j] = t[i];
                data[j] = d[i];
            }
        }
    }

    /** Applier thread: Redis keeps nothing before {@code first} (retention, or 0 when empty). */
    synchronized void keptFrom(long first) {
        oldest = first > 0 ? first : 0;
    }

    /** Applier thread: a page read from Redis started at {@code first}; nothing before it is kept. */
    synchronized void trimmedTo(long first) {
        if (first > oldest && first <= head) {
            oldest = first;
        }
    }

    /** Applier thread: event {@code seq} (after a hole when the stream was trimmed meanwhile). */
    synchronized void add(long seq, long ts, byte[] bytes) {
        growIfFull(seq);
        int i = (int) (seq % seqs.length);
        seqs[i] = seq;
        timestamps[i] = ts;
        data[i] = bytes;
        if (oldest == 0 || head + 1 < seq) {
            oldest = seq; // the first event, or the first after events retention took
        }
        head = seq;
    }

    /** What {@link #readCached} returns when the ring does not hold the start. */
    static final int NOT_IN_RING = -1;

    /**
     * Serves {@code afterSeq+1 ..} of epoch {@code expectedEpoch} from the ring when it still holds
     * {@code afterSeq+1}; returns how many it passed, {@link #NOT_IN_RING} when the ring does not
     * hold the start (read the cache or Redis instead), or {@link EventHistory#EPOCH_CHANGED} when
     * the topic's epoch is another: checked under the lock that {@link #reset} takes, so the events
     * passed are always of the epoch the caller labels them with.
     */
    int readCached(String expectedEpoch, long afterSeq, int max, EventVisitor visitor) {
        long[] s;
        long[] t;
        byte[][] d;
        int n = 0;
        synchronized (this) {
            if (!epoch.equals(expectedEpoch)) {
                return EventHistory.EPOCH_CHANGED;
            }
            long upTo = Math.min(head, afterSeq + max);
            if (afterSeq >= head) {
                return 0;
            }
            int first = (int) ((afterSeq + 1) % seqs.length);
            if (seqs[first] != afterSeq + 1 || data[first] == null) {
                return NOT_IN_RING;
            }
            int count = (int) (upTo - afterSeq);
            s = new long[count];
            t = new long[count];
            d = new byte[count][];
            for (long q = afterSeq + 1; q <= upTo; q++) {
                int i = (int) (q % seqs.length);
                if (seqs[i] != q || data[i] == null) {
                    break;
                }
                s[n] = q;
                t[n] = timestamps[i];
                d[n] = data[i];
                n++;
            }
        }
        for (int i = 0; i < n; i++) { // outside the lock: the visitor writes to a socket
            visitor.accept(s[i], t[i], d[i]);
        }
        return n;
    }
}
