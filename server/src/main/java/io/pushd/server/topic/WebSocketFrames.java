package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.pushd.protocol.EventId;
import io.pushd.server.history.EventHistory.EventData;

/**
 * Whole WebSocket text frames of {@code event} messages, header included, as the server sends
 * them: FIN, opcode 1, unmasked, the shortest length form (RFC 6455 5.2) — what Netty's frame
 * encoder writes for a {@code TextWebSocketFrame}. The payload is the event's JSON as
 * {@link EventAppender} writes it (the bytes {@code ProtocolCodec.encodeEvent} produces), written
 * straight into the buffer.
 */
final class WebSocketFrames {

    private static final byte FIN_TEXT = (byte) 0x81;

    private WebSocketFrames() {
    }

    /** A new buffer holding one whole frame. */
    static ByteBuf encode(ByteBufAllocator alloc, String topic, EventId id, long ts, byte[] data) {
        int payload = EventAppender.jsonLength(topic, id.epoch(), id.seq(), ts, data.length);
        ByteBuf out = alloc.directBuffer(headerLength(payload) + payload);
        writeHeader(out, payload);
        EventAppender.writeJsonPrefix(out, topic, id.epoch(), id.seq(), ts);
        out.writeBytes(data);
        out.writeByte('}');
        return out;
    }

    /** Appends one whole frame to {@code out}, copying the data from wherever it is kept. */
    static void append(ByteBuf out, String topic, String epoch, long seq, long ts, EventData data) {
        int length = data.length();
        int payload = EventAppender.jsonLength(topic, epoch, seq, ts, length);
        out.ensureWritable(headerLength(payload) + payload);
        writeHeader(out, payload);
        EventAppender.writeJsonPrefix(out, topic, epoch, seq, ts);
        data.copyTo(out);
        out.writeByte('}');
    }

    /**
     * Appends whole frames of one topic and epoch, for a replay: the frame header is the head
     * {@link EventAppender} writes before each event's JSON.
     */
    static final class Appender extends EventAppender {
        /** The longest frame header. */
        private static final int MAX_HEADER = 10;

        Appender(String topic, String epoch) {
            super(topic, epoch, MAX_HEADER, new byte[0]);
        }

        @Override
        protected int head(int end, int payload, long seq, int seqDigits) {
            byte[] b = scratch;
            int start;
            if (payload < 126) {
                start = end - 2;
                b[start + 1] = (byte) payload;
            } else if (payload <= 0xFFFF) {
                start = end - 4;
                b[start + 1] = 126;
                b[start + 2] = (byte) (payload >>> 8);
                b[start + 3] = (byte) payload;
            } else {
                start = end - 10;
                b[start + 1] = 127;
                for (int i = 0; i < 8; i++) {
                    b[start + 2 + i] = (byte) ((long) payload >>> (56 - 8 * i));
                }
            }
            b[start] = FIN_TEXT;
            return start;
        }

        @Override
        protected void appendUnusual(ByteBuf out, long seq, long ts, EventData data) {
            WebSocketFrames.append(out, topic, epoch, seq, ts, data);
        }
    }

    /** The payload length of a frame made by this class, from the frame's length. */
    static int payloadOf(int frameLength) {
        if (frameLength <= 127) {
            return frameLength - 2;
        }
        return frameLength - 4 <= 0xFFFF ? frameLength - 4 : frameLength - 10;
    }

    static int headerLength(int payload) {
        return payload < 126 ? 2 : payload <= 0xFFFF ? 4 : 10;
    }

    private static void writeHeader(ByteBuf out, int payload) {
        out.writeByte(FIN_TEXT);
        if (payload < 126) {
            out.writeByte(payload);
        } else if (payload <= 0xFFFF) {
            out.writeByte(126);
            out.writeShort(payload);
        } else {
            out.writeByte(127);
            out.writeLong(payload);
        }
    }
}
