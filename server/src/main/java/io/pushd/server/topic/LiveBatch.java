package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;

/**
 * The live events one fan-out task hands to each subscriber of a loop group, in sequence order,
 * each encoded in the group's {@link EventFormat}. The buffers are lent, not given: the hub keeps
 * them and releases them after every subscriber has had the batch, so a subscriber that writes an
 * event straight to its socket costs no reference count and no buffer object. One that keeps an
 * event past {@link TopicHub.Subscriber#onLive} takes its own reference
 * ({@link ByteBuf#retainedDuplicate()}), and no subscriber moves a lent buffer's indices.
 *
 * <p>Confined to one event loop and reused from task to task; {@link #generation()} tells one
 * task's batch from the next, so a transport may keep something it derived from the batch
 * (native I/O vectors of its buffers) for the rest of the task.
 */
public final class LiveBatch {

    private final String[] epochs;
    private final long[] seqs;
    private final ByteBuf[] events;
    /** {@code messageBytesBefore[i]}: the message bytes of events 0..i-1 (what {@code push.delivered.bytes} counts). */
    private final long[] messageBytesBefore;
    private int size;
    private long generation;
    private int deliveries;
    private long deliveredBytes;

    public LiveBatch(int capacity) {
        epochs = new String[capacity];
        seqs = new long[capacity];
        events = new ByteBuf[capacity];
        messageBytesBefore = new long[capacity + 1];
    }

    /**
     * Adds event {@code epoch}-{@code seq}; the batch lends {@code event}, the caller still owns
     * it. {@code messageBytes}: the message bytes it carries ({@link EventFormat#payloadBytes}).
     */
    public void add(String epoch, long seq, ByteBuf event, int messageBytes) {
        epochs[size] = epoch;
        seqs[size] = seq;
        events[size] = event;
        messageBytesBefore[size + 1] = messageBytesBefore[size] + messageBytes;
        size++;
    }

    /**
     * A subscriber wrote events {@code from}..{@code to} (exclusive): counted here, in plain
     * fields, and into the metrics once per batch by the hub rather than once per subscriber.
     */
    public void delivered(int from, int to) {
        deliveries += to - from;
        deliveredBytes += messageBytesBefore[to] - messageBytesBefore[from];
    }

    /** Deliveries {@link #delivered} counted since the last {@link #clear()}. */
    public int deliveries() {
        return deliveries;
    }

    /** Their message bytes. */
    public long deliveredBytes() {
        return deliveredBytes;
    }

    /** Forgets the events (without releasing them: their owner does) and the counts, and starts a new generation. */
    public void clear() {
        for (int i = 0; i < size; i++) {
            epochs[i] = null;
            events[i] = null;
        }
        size = 0;
        deliveries = 0;
        deliveredBytes = 0;
        generation++;
    }

    public int size() {
        return size;
    }

    public int capacity() {
        return events.length;
    }

    /**
     * The epoch event {@code i}'s ID was encoded with: one queued before its topic's history was
     * replaced may reach a subscriber that has moved to the new epoch.
     */
    public String epoch(int i) {
        return epochs[i];
    }

    public long seq(int i) {
        return seqs[i];
    }

    /** Event {@code i}, lent for the call it was handed in. */
    public ByteBuf event(int i) {
        return events[i];
    }

    /** Changes with every {@link #clear()}: what was derived from an earlier batch is stale. */
    public long generation() {
        return generation;
    }
}
