package io.pushd.server.sse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.topic.EventFormat;
import java.nio.charset.StandardCharsets;

/**
 * An event as one SSE message: {@code id: <event id>\ndata: <the WebSocket event JSON>\n\n}. The
 * hub encodes it once per event for every SSE subscriber. A single-topic stream writes it as it
 * is; a multi-topic stream, whose {@code id:} is its own cursor, writes its cursor line followed by
 * the shared bytes after {@link #dataOffset} (the JSON never holds a raw newline, so one
 * {@code data:} line is enough).
 */
public final class SseEventFormat implements EventFormat {

    public static final SseEventFormat INSTANCE = new SseEventFormat();

    private static final byte[] ID = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);

    private SseEventFormat() {
    }

    @Override
    public ByteBuf encode(ByteBufAllocator alloc, String topic, EventId id, long timestampMillis, byte[] data) {
        byte[] json = ProtocolCodec.encodeEvent(topic, id, timestampMillis, data);
        String idText = id.toString();
        ByteBuf buf = alloc.directBuffer(ID.length + idText.length() + DATA.length + json.length + 2);
        buf.writeBytes(ID);
        ByteBufUtil.writeAscii(buf, idText);
        return buf.writeBytes(DATA).writeBytes(json).writeByte('\n').writeByte('\n');
    }

    /** Where the {@code data:} line starts in an encoded event: just after the {@code id:} line's newline. */
    static int dataOffset(ByteBuf encoded) {
        int nl = encoded.indexOf(encoded.readerIndex(), encoded.writerIndex(), (byte) '\n');
        return nl - encoded.readerIndex() + 1;
    }
}
