package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Live fan-out. Each event is encoded to its frame payload once, in a direct buffer that every
 * subscriber of the topic shares through {@link ByteBuf#retainedDuplicate()}.
 */
public final class TopicHub {

    /** A live reader of one topic. {@link #offer} owns the buffer it is given and must release it. */
    public interface Subscriber {
        void offer(long seq, ByteBuf eventFrame);
    }

    private final Map<String, Set<Subscriber>> subscribers = new ConcurrentHashMap<>();
    private final String epoch;
    private final ByteBufAllocator alloc;

    public TopicHub(String epoch, ByteBufAllocator alloc) {
        this.epoch = epoch;
        this.alloc = alloc;
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
    public void fanOut(String topic, long seq, long timestampMillis, byte[] data) {
        Set<Subscriber> set = subscribers.get(topic);
        if (set == null || set.isEmpty()) {
            return;
        }
        byte[] frame = ProtocolCodec.encodeEvent(topic, new EventId(epoch, seq), timestampMillis, data);
        ByteBuf shared = alloc.directBuffer(frame.length).writeBytes(frame);
        try {
            for (Subscriber s : set) {
                s.offer(seq, shared.retainedDuplicate());
            }
        } finally {
            shared.release();
        }
    }
}
