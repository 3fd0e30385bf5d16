package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.history.EventHistory.EventData;

/**
 * How one transport puts an event on the wire. {@link TopicHub} encodes each live event once per
 * format that has subscribers, and every subscriber of that format shares the buffer; replay
 * encodes through the same format, so live and replayed events are byte for byte alike.
 * Implementations are stateless and thread-safe (the hub encodes in the publisher's writer).
 */
public interface EventFormat {

    /**
     * The WebSocket text frame payload: the protocol's {@code event} message as JSON, which the
     * frame encoder (and permessage-deflate, when negotiated) turns into a frame per connection.
     */
    EventFormat JSON = (alloc, topic, id, timestampMillis, data) -> {
        byte[] json = ProtocolCodec.encodeEvent(topic, id, timestampMillis, data);
        return alloc.directBuffer(json.length).writeBytes(json);
    };

    /**
     * The whole WebSocket text frame, header included, of the same JSON: written below the frame
     * encoder, so an event costs one encoding for all its subscribers and no frame per
     * subscriber. For connections without permessage-deflate (a compressed frame differs per
     * connection). Frames concatenate, so a replay step writes many events as one buffer.
     */
    EventFormat WEBSOCKET_FRAME = new EventFormat() {
        @Override
        public ByteBuf encode(ByteBufAllocator alloc, String topic, EventId id, long timestampMillis, byte[] data) {
            return WebSocketFrames.encode(alloc, topic, id, timestampMillis, data);
        }

        @Override
        public boolean appendable() {
            return true;
        }

        @Override
        public void append(ByteBuf out, String topic, String epoch, long seq, long timestampMillis, EventData data) {
            WebSocketFrames.append(out, topic, epoch, seq, timestampMillis, data);
        }

        @Override
        public ReplayAppender appender(String topic, String epoch) {
            return new WebSocketFrames.Appender(topic, epoch);
        }

        @Override
        public int payloadBytes(int encodedBytes) {
            return WebSocketFrames.payloadOf(encodedBytes);
        }
    };

    /** A new buffer (one reference, owned by the caller) holding the encoded event. */
    ByteBuf encode(ByteBufAllocator alloc, String topic, EventId id, long timestampMillis, byte[] data);

    /**
     * True when encoded events can be written back to back as one buffer (whole frames, SSE
     * records), so replay may use {@link #append}; false when each must be its own message.
     */
    default boolean appendable() {
        return false;
    }

    /** Only when {@link #appendable}: appends the encoded event to {@code out}. */
    default void append(ByteBuf out, String topic, String epoch, long seq, long timestampMillis, EventData data) {
        ByteBuf one = encode(out.alloc(), topic, new EventId(epoch, seq), timestampMillis, data.toBytes());
        try {
            out.writeBytes(one);
        } finally {
            one.release();
        }
    }

    /**
     * Only when {@link #appendable}: what a replay appends the events of {@code topic} in
     * {@code epoch} with, made once per replay and used for many events, so that what is the same
     * for all of them is encoded once. Byte for byte what {@link #append} writes.
     */
    default ReplayAppender appender(String topic, String epoch) {
        return (out, seq, timestampMillis, data) -> append(out, topic, epoch, seq, timestampMillis, data);
    }

    /** Appends encoded events of one topic and epoch; one replay's, on one thread. */
    @FunctionalInterface
    interface ReplayAppender {
        void append(ByteBuf out, long seq, long timestampMillis, EventData data);
    }

    /** The message bytes an event encoded in {@code encodedBytes} carries (what {@code push.delivered.bytes} counts). */
    default int payloadBytes(int encodedBytes) {
        return encodedBytes;
    }
}
