package io.pushd.server.sse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.pushd.protocol.EventId;
import io.pushd.server.history.EventHistory.EventData;
import io.pushd.server.topic.EventAppender;
import io.pushd.server.topic.EventFormat;
import java.nio.charset.StandardCharsets;

/**
 * An event as one SSE message: {@code id: <event id>\ndata: <the WebSocket event JSON>\n\n}. The
 * hub encodes it once per event for every SSE subscriber. A single-topic stream writes it as it
 * is; a multi-topic stream, whose {@code id:} is its own cursor, writes its cursor line followed by
 * the shared bytes after {@link #dataOffset} (the JSON never holds a raw newline, so one
 * {@code data:} line is enough). Messages concatenate, so a single-topic stream's replay appends
 * many to one buffer ({@link Appender}), written as one chunk.
 */
public final class SseEventFormat implements EventFormat {

    public static final SseEventFormat INSTANCE = new SseEventFormat();

    private static final byte[] ID = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\n\n".getBytes(StandardCharsets.US_ASCII);

    private SseEventFormat() {
    }

    @Override
    public ByteBuf encode(ByteBufAllocator alloc, String topic, EventId id, long timestampMillis, byte[] data) {
        int length = ID.length + id.epoch().length() + 1 + EventAppender.digits(id.seq()) + DATA.length
                + EventAppender.jsonLength(topic, id.epoch(), id.seq(), timestampMillis, data.length) + END.length;
        ByteBuf buf = alloc.directBuffer(length);
        new Appender(topic, id.epoch()).append(buf, id.seq(), timestampMillis, EventData.of(data));
        return buf;
    }

    @Override
    public boolean appendable() {
        return true;
    }

    @Override
    public void append(ByteBuf out, String topic, String epoch, long seq, long timestampMillis, EventData data) {
        new Appender(topic, epoch).append(out, seq, timestampMillis, data);
    }

    @Override
    public ReplayAppender appender(String topic, String epoch) {
        return new Appender(topic, epoch);
    }

    /** Where the {@code data:} line starts in an encoded event: just after the {@code id:} line's newline. */
    static int dataOffset(ByteBuf encoded) {
        int nl = encoded.indexOf(encoded.readerIndex(), encoded.writerIndex(), (byte) '\n');
        return nl - encoded.readerIndex() + 1;
    }

    /** SSE messages of one topic and epoch: the {@code id:} line and {@code data: } before each event's JSON. */
    static final class Appender extends EventAppender {
        private final int idPrefixLength;

        Appender(String topic, String epoch) {
            super(topic, epoch, ID.length + epoch.length() + 1 + 20 + DATA.length, END);
            idPrefixLength = ID.length + epoch.length() + 1;
        }

        @Override
        protected int head(int end, int json, long seq, int seqDigits) {
            int start = end - DATA.length - seqDigits - idPrefixLength;
            int at = put(ID, start);
            at = putAscii(epoch, at);
            scratch[at++] = '-';
            at = putDecimal(seq, seqDigits, at);
            put(DATA, at);
            return start;
        }

        @Override
        protected void appendUnusual(ByteBuf out, long seq, long ts, EventData data) {
            out.writeBytes(ID);
            io.netty.buffer.ByteBufUtil.writeAscii(out, epoch + "-" + seq);
            out.writeBytes(DATA);
            EventAppender.writeJsonPrefix(out, topic, epoch, seq, ts);
            data.copyTo(out);
            out.writeByte('}');
            out.writeBytes(END);
        }
    }
}
