package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.metrics.ServerMetrics;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Live fan-out. Each event is encoded to its frame payload once, in a direct buffer that every
 * subscriber of the topic shares through {@link ByteBuf#retainedDuplicate()}. Subscribers are
 * grouped by event loop, so an event costs one task per event loop, not one per subscriber.
 */
public final class TopicHub {

    private static final Logger log = LoggerFactory.getLogger(TopicHub.class);

    /** A live reader of one topic, confined to one event loop. */
    public interface Subscriber {
        /** The event loop {@link #onLive} runs on. */
        EventExecutor executor();

        /** On {@link #executor()}: handle the frame of event {@code seq}; owns and must release it. */
        void onLive(long seq, ByteBuf eventFrame);
    }

    private final Map<String, Map<EventExecutor, Set<Subscriber>>> subscribers = new ConcurrentHashMap<>();
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
        subscribers.compute(topic, (t, byLoop) -> {
            Map<EventExecutor, Set<Subscriber>> m = byLoop == null ? new ConcurrentHashMap<>() : byLoop;
            m.computeIfAbsent(s.executor(), l -> ConcurrentHashMap.newKeySet()).add(s);
            return m;
        });
    }

    public void unsubscribe(String topic, Subscriber s) {
        subscribers.computeIfPresent(topic, (t, byLoop) -> {
            byLoop.computeIfPresent(s.executor(), (l, set) -> {
                set.remove(s);
                return set.isEmpty() ? null : set;
            });
            return byLoop.isEmpty() ? null : byLoop;
        });
    }

    public int subscriberCount(String topic) {
        Map<EventExecutor, Set<Subscriber>> byLoop = subscribers.get(topic);
        return byLoop == null ? 0 : byLoop.values().stream().mapToInt(Set::size).sum();
    }

    /**
     * Called by the writer thread after the event is in the store, in sequence order. A
     * subscriber that registers while this runs may or may not get the frame; either way it is
     * covered, because it reads the head after registering and the event is already appended.
     */
    public void fanOut(String topic, long seq, long timestampMillis, byte[] data, long appendedNanos) {
        Map<EventExecutor, Set<Subscriber>> byLoop = subscribers.get(topic);
        if (byLoop == null || byLoop.isEmpty()) {
            return;
        }
        byte[] frame = ProtocolCodec.encodeEvent(topic, new EventId(epochOf.apply(topic), seq), timestampMillis, data);
        ByteBuf shared = alloc.directBuffer(frame.length).writeBytes(frame);
        AtomicInteger loopsLeft = new AtomicInteger(1);
        try {
            for (Map.Entry<EventExecutor, Set<Subscriber>> e : byLoop.entrySet()) {
                Set<Subscriber> set = e.getValue();
                ByteBuf forLoop = shared.retainedDuplicate();
                loopsLeft.incrementAndGet();
                try {
                    e.getKey().execute(() -> {
                        try {
                            for (Subscriber s : set) {
                                try {
                                    s.onLive(seq, forLoop.retainedDuplicate());
                                } catch (RuntimeException ex) {
                                    // One broken subscriber must not cost the others the event. Its frame
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
        } finally {
            shared.release();
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
