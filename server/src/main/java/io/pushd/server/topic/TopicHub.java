package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import java.util.Map;
import java.util.Set;
import io.pushd.server.metrics.ServerMetrics;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Live fan-out. Each event is encoded to its frame payload once, in a direct buffer that every
 * subscriber of the topic shares through {@link ByteBuf#retainedDuplicate()}.
 */
public final class TopicHub {

    /**
     * A live reader of one topic. {@link #offer} owns the buffer it is given and must release it,
     * and calls {@link Delivery#done()} once it has written or dropped the frame.
     */
    public interface Subscriber {
        void offer(long seq, ByteBuf eventFrame, Delivery delivery);
    }

    /** Counts the subscribers still to handle one event; the last one records the fan-out latency. */
    public static final class Delivery {
        private final AtomicInteger remaining = new AtomicInteger(1);
        private final long appendedNanos;
        private final ServerMetrics metrics;

        Delivery(long appendedNanos, ServerMetrics metrics) {
            this.appendedNanos = appendedNanos;
            this.metrics = metrics;
        }

        public void done() {
            if (remaining.decrementAndGet() == 0) {
                metrics.fannedOut(appendedNanos);
            }
        }
    }

    private final Map<String, Set<Subscriber>> subscribers = new ConcurrentHashMap<>();
    private final String epoch;
    private final ByteBufAllocator alloc;
    private final ServerMetrics metrics;

    public TopicHub(String epoch, ByteBufAllocator alloc, ServerMetrics metrics) {
        this.epoch = epoch;
        this.alloc = alloc;
        this.metrics = metrics;
    }

    public void subscribe(String topic, Subscriber s) {
        subscribers.computeIfAbsent(topic, t -> ConcurrentHashMap.newKeySet()).add(s);
    }

    public void unsubscribe(String topic, Subscriber s) {
        subscribers.computeIfPresent(topic, (t, set) -> {
            set.remove(s);
            return set.isEmpty() ? null : set;
        });
    }

    public int subscriberCount(String topic) {
        Set<Subscriber> set = subscribers.get(topic);
        return set == null ? 0 : set.size();
    }

    /** Called by the writer thread after the event is in the store, in sequence order. */
    public void fanOut(String topic, long seq, long timestampMillis, byte[] data, long appendedNanos) {
        Set<Subscriber> set = subscribers.get(topic);
        if (set == null || set.isEmpty()) {
            return;
        }
        byte[] frame = ProtocolCodec.encodeEvent(topic, new EventId(epoch, seq), timestampMillis, data);
        ByteBuf shared = alloc.directBuffer(frame.length).writeBytes(frame);
        Delivery delivery = new Delivery(appendedNanos, metrics);
        try {
            for (Subscriber s : set) {
                delivery.remaining.incrementAndGet();
                s.offer(seq, shared.retainedDuplicate(), delivery);
            }
        } finally {
            shared.release();
            delivery.done();
        }
    }
}
