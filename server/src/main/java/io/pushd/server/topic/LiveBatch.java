package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The live events one fan-out task hands to each subscriber of a loop group, in sequence order,
 * each encoded in the group's {@link EventFormat}. The buffers are lent, not given: the hub keeps
 * them and releases them after every subscriber has had the batch, so a subscriber that writes an
 * event straight to its socket costs no reference count and no buffer object. One that keeps an
 * event past {@link TopicHub.Subscriber#onLive} takes its own reference
 * ({@link ByteBuf#retainedDuplicate()}), and no subscriber moves a lent buffer's indices.
 *
 * <p>Confined to one event loop and reused from task to task; {@link #generation()} tells one
 * task's batch from the next and from any other batch, so a transport may keep something it
 * derived from the batch (native I/O vectors of its buffers) for the rest of the task.
 */
public final class LiveBatch {

    /**
     * Generations are unique across batches, not per batch: a transport then knows a batch by its
     * generation alone. It used to ask for the same batch object as well, a test that fails only
     * the first time an event loop sees a batch. The live warm-up's loops are not the server's, so
     * C2 compiled the delivery path with that branch as never taken, and the first multi-event batch
     * on each of the server's loops threw the compiled path away (an unstable_if trap in a JIT log):
     * profiled code until C2 compiled the hottest methods again, in the first seconds of traffic
     * after every start. One atomic increment per batch (a task of one loop, not a delivery) costs
     * nothing beside that.
     */
    private static final AtomicLong GENERATIONS = new AtomicLong();

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
        generation = GENERATIONS.incrementAndGet();
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
        generation = GENERATIONS.incrementAndGet();
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

    /**
     * Changes with every {@link #clear()} and differs from every other batch's: what was derived
     * from a batch of another generation is stale.
     */
    public long generation() {
        return generation;
    }
}
