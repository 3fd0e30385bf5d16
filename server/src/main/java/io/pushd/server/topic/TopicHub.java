package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import io.pushd.protocol.EventId;
import io.pushd.server.metrics.ServerMetrics;
import java.util.Map;
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
 * event costs one encoding per format and one task per event loop, not one per subscriber.
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

        /** On {@link #executor()}: handle event {@code seq} encoded in {@link #format()}; owns and must release it. */
        void onLive(long seq, ByteBuf encodedEvent);
    }

    /** Per topic: subscribers by format, then by event loop. */
    private final Map<String, Map<EventFormat, Map<EventExecutor, Set<Subscriber>>>> subscribers =
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
            var m = byFormat == null ? new ConcurrentHashMap<EventFormat, Map<EventExecutor, Set<Subscriber>>>()
                    : byFormat;
            m.computeIfAbsent(s.format(), f -> new ConcurrentHashMap<>())
                    .computeIfAbsent(s.executor(), l -> ConcurrentHashMap.newKeySet()).add(s);
            return m;
        });
    }

    public void unsubscribe(String topic, Subscriber s) {
        subscribers.computeIfPresent(topic, (t, byFormat) -> {
            byFormat.computeIfPresent(s.format(), (f, byLoop) -> {
                byLoop.computeIfPresent(s.executor(), (l, set) -> {
                    set.remove(s);
                    return set.isEmpty() ? null : set;
                });
                return byLoop.isEmpty() ? null : byLoop;
            });
            return byFormat.isEmpty() ? null : byFormat;
        });
    }

    public int subscriberCount(String topic) {
        var byFormat = subscribers.get(topic);
        return byFormat == null ? 0 : byFormat.values().stream()
                .flatMap(byLoop -> byLoop.values().stream()).mapToInt(Set::size).sum();
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
                        dispatch(topic, seq, e.getKey(), e.getValue(), shared.retainedDuplicate(), loopsLeft,
                                appendedNanos);
                    }
                } finally {
                    shared.release();
                }
            }
        } finally {
            done(loopsLeft, appendedNanos);
        }
    }

    /** One task on {@code loop} offers the event to each of its subscribers; owns {@code forLoop}. */
    private void dispatch(String topic, long seq, EventExecutor loop, Set<Subscriber> set, ByteBuf forLoop,
                          AtomicInteger loopsLeft, long appendedNanos) {
        loopsLeft.incrementAndGet();
        try {
            loop.execute(() -> {
                try {
                    for (Subscriber s : set) {
                        try {
                            s.onLive(seq, forLoop.retainedDuplicate());
                        } catch (RuntimeException ex) {
                            // One broken subscriber must not cost the others the event. Its buffer
                            // is not released here: it may have been already, and a double
                            // release would corrupt the buffer everyone shares.
                            log.warn("subscriber of {} failed on event {}", topic, seq, ex);
                        }
                    }
                } finally {
                    forLoop.release();
                    done(loopsLeft, appendedNanos);
                }
            });
        } catch (RejectedExecutionException shuttingDown) {
            forLoop.release();
            done(loopsLeft, appendedNanos);
        }
    }

    /** The last event loop to finish records the fan-out latency (append to last live write). */
    private void done(AtomicInteger loopsLeft, long appendedNanos) {
        if (loopsLeft.decrementAndGet() == 0) {
            metrics.fannedOut(appendedNanos);
        }
    }
}
