package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.pushd.protocol.EventId;
import io.pushd.server.metrics.ServerMetrics;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Live fan-out. Each event is encoded once per {@link EventFormat} that has subscribers, in a
 * direct buffer that every subscriber of that format shares through
 * {@link ByteBuf#retainedDuplicate()}. Subscribers are grouped by format and event loop, so an
 * event costs one encoding per format and one task per event loop (several events per task when they queue up), not one per subscriber.
 */
public final class TopicHub {

    private static final Logger log = LoggerFactory.getLogger(TopicHub.class);

    /** A live reader of one topic, confined to one event loop. */
    public interface Subscriber {
        /** The event loop {@link #onLive} runs on. */
        EventExecutor executor();

        /** How this subscriber's transport encodes events; fixed for the subscriber's life. */
        default EventFormat format() {
            return EventFormat.JSON;
        }

        /**
         * On {@link #executor()}: handle event {@code seq} encoded in {@link #format()}; owns and
         * must release it. Writes need not be flushed: {@link #endOfBatch} follows.
         */
        void onLive(long seq, ByteBuf encodedEvent);

        /** After one or more {@link #onLive} calls of one task: flush what they wrote (once). */
        default void endOfBatch() {
        }
    }

    /** Per topic: subscribers by format, then by event loop. */
    private final Map<String, Map<EventFormat, Map<EventExecutor, LoopGroup>>> subscribers =
            new ConcurrentHashMap<>();
    private final Function<String, String> epochOf;
    private final ByteBufAllocator alloc;
    private final ServerMetrics metrics;

    /** @param epochOf the epoch of a topic's event IDs: {@code EventHistory::epoch}, asked per topic */
    public TopicHub(Function<String, String> epochOf, ByteBufAllocator alloc, ServerMetrics metrics) {
        this.epochOf = epochOf;
        this.alloc = alloc;
        this.metrics = metrics;
    }

    public void subscribe(String topic, Subscriber s) {
        subscribers.compute(topic, (t, byFormat) -> {
            var m = byFormat == null ? new ConcurrentHashMap<EventFormat, Map<EventExecutor, LoopGroup>>()
                    : byFormat;
            m.computeIfAbsent(s.format(), f -> new ConcurrentHashMap<>())
                    .computeIfAbsent(s.executor(), LoopGroup::new).subscribers.add(s);
            return m;
        });
    }

    public void unsubscribe(String topic, Subscriber s) {
        subscribers.computeIfPresent(topic, (t, byFormat) -> {
            byFormat.computeIfPresent(s.format(), (f, byLoop) -> {
                byLoop.computeIfPresent(s.executor(), (l, group) -> {
                    group.subscribers.remove(s);
                    return group.subscribers.isEmpty() ? null : group;
                });
                return byLoop.isEmpty() ? null : byLoop;
            });
            return byFormat.isEmpty() ? null : byFormat;
        });
    }

    public int subscriberCount(String topic) {
        var byFormat = subscribers.get(topic);
        return byFormat == null ? 0 : byFormat.values().stream()
                .flatMap(byLoop -> byLoop.values().stream()).mapToInt(g -> g.subscribers.size()).sum();
    }

    /**
     * Called by the writer thread after the event is in the store, in sequence order. A
     * subscriber that registers while this runs may or may not get the event; either way it is
     * covered, because it reads the head after registering and the event is already appended.
     */
    public void fanOut(String topic, long seq, long timestampMillis, byte[] data, long appendedNanos) {
        var byFormat = subscribers.get(topic);
        if (byFormat == null || byFormat.isEmpty()) {
            return;
        }
        EventId id = new EventId(epochOf.apply(topic), seq);
        AtomicInteger loopsLeft = new AtomicInteger(1);
        try {
            for (var f : byFormat.entrySet()) {
                ByteBuf shared = f.getKey().encode(alloc, topic, id, timestampMillis, data);
                try {
                    for (var e : f.getValue().entrySet()) {
                        loopsLeft.incrementAndGet();
                        e.getValue().offer(new Pending(topic, seq, shared.retainedDuplicate(), loopsLeft, appendedNanos));
                    }
                } finally {
                    shared.release();
                }
            }
        } finally {
            done(loopsLeft, appendedNanos);
        }
    }

    /** The last event loop to finish records the fan-out latency (append to last live write). */
    private void done(AtomicInteger loopsLeft, long appendedNanos) {
        if (loopsLeft.decrementAndGet() == 0) {
            metrics.fannedOut(appendedNanos);
        }
    }

    /** One event waiting for one event loop; {@code forLoop} is that loop's reference. */
    private record Pending(String topic, long seq, ByteBuf forLoop, AtomicInteger loopsLeft, long appendedNanos) {
    }

    /**
     * The subscribers of one topic and format on one event loop, and the events queued for them.
     * One task drains the queue: when events arrive faster than the loop delivers them, a task
     * takes several (at most {@link #MAX_EVENTS_PER_TASK}, and about {@link #DELIVERIES_PER_TASK}
     * writes, so the loop's other work — publishes — waits for one bounded task only), offers them to each subscriber in order, and flushes each
     * subscriber once: one write syscall per subscriber per batch instead of per event.
     */
    private final class LoopGroup {
        final EventExecutor loop;
        final Set<Subscriber> subscribers = ConcurrentHashMap.newKeySet();
        private final Queue<Pending> queue = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean scheduled = new AtomicBoolean();

        LoopGroup(EventExecutor loop) {
            this.loop = loop;
        }

        void offer(Pending p) {
            queue.add(p);
            if (scheduled.compareAndSet(false, true)) {
                try {
                    loop.execute(this::drain);
                } catch (RejectedExecutionException shuttingDown) {
                    Pending q;
                    while ((q = queue.poll()) != null) {
                        q.forLoop().release();
                        done(q.loopsLeft(), q.appendedNanos());
                    }
                }
            }
        }

        /** On {@link #loop}. */
        private void drain() {
            Pending[] batch = BATCH.get();
            int n = 0;
            int max = Math.max(1, Math.min(batch.length, DELIVERIES_PER_TASK / Math.max(1, subscribers.size())));
            Pending p;
            while (n < max && (p = queue.poll()) != null) {
                batch[n++] = p;
            }
            try {
                deliver(batch, n);
            } finally {
                for (int i = 0; i < n; i++) {
                    batch[i].forLoop().release();
                    done(batch[i].loopsLeft(), batch[i].appendedNanos());
                    batch[i] = null;
                }
                scheduled.set(false);
                if (!queue.isEmpty() && scheduled.compareAndSet(false, true)) {
                    loop.execute(this::drain); // behind whatever else the loop has to do
                }
            }
        }

        private void deliver(Pending[] batch, int n) {
            for (Subscriber s : subscribers) {
                try {
                    for (int i = 0; i < n; i++) {
                        s.onLive(batch[i].seq(), batch[i].forLoop().retainedDuplicate());
                    }
                    s.endOfBatch();
                } catch (RuntimeException ex) {
                    // One broken subscriber must not cost the others the event. Its buffer is not
                    // released here: it may have been already, and a double release would corrupt
                    // the buffer everyone shares.
                    log.warn("subscriber of {} failed on a live event", batch[0].topic(), ex);
                }
            }
        }
    }

    /** A drain's events, one array per event loop thread (not per topic: idle topics stay small). */
    private static final FastThreadLocal<Pending[]> BATCH = new FastThreadLocal<>() {
        @Override
        protected Pending[] initialValue() {
            return new Pending[MAX_EVENTS_PER_TASK];
        }
    };

    /** Events one fan-out task of one loop takes at most. */
    static final int MAX_EVENTS_PER_TASK = 16;
    /** Writes one fan-out task aims at (about a millisecond): more events per task when there are few subscribers. */
    static final int DELIVERIES_PER_TASK = 2048;
}
