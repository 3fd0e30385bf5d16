package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;

/**
 * How one transport puts an event on the wire. {@link TopicHub} encodes each live event once per
 * format that has subscribers, and every subscriber of that format shares the buffer; replay
 * encodes through the same format, so live and replayed events are byte for byte alike.
 * Implementations are stateless and thread-safe (the hub encodes on the writer thread).
 */
public interface EventFormat {

    /**
     * The WebSocket text frame payload: the protocol's {@code event} message as JSON. (An SSE
     * transport would add its own, e.g. {@code id:}/{@code data:} lines around the same JSON.)
     */
    EventFormat JSON = (alloc, topic, id, timestampMillis, data) -> {
        byte[] json = ProtocolCodec.encodeEvent(topic, id, timestampMillis, data);
        return alloc.directBuffer(json.length).writeBytes(json);
    };

    /** A new buffer (one reference, owned by the caller) holding the encoded event. */
    ByteBuf encode(ByteBufAllocator alloc, String topic, EventId id, long timestampMillis, byte[] data);
}
