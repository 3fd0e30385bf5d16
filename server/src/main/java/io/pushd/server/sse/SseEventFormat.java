package io.pushd.server.sse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
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
 * many to one buffer ({@link Appender}).
 *
 * <p>{@link #CHUNKED} is the same message as one whole HTTP/1.1 chunk ({@code <hex length>\r\n},
 * the message, {@code \r\n}): what the HTTP codec would make of it, written below the codec by a
 * single-topic chunked stream, so an event costs one encoding for all its subscribers and no
 * {@code HttpContent}, chunk header or encoder pass per subscriber.
 */
public final class SseEventFormat implements EventFormat {

    /** One SSE message, unframed: for multi-topic (cursor) streams and HTTP/1.0 (close-delimited) ones. */
    public static final SseEventFormat INSTANCE = new SseEventFormat(false);
    /** One SSE message as one HTTP chunk: for single-topic streams on a chunked response. */
    public static final SseEventFormat CHUNKED = new SseEventFormat(true);

    private static final byte[] ID = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END_CHUNK = "\n\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    /** A chunk's size line at its longest (an int in hex) and its CRLF. */
    private static final int MAX_CHUNK_HEAD = 8 + 2;

    private final boolean chunked;

    private SseEventFormat(boolean chunked) {
        this.chunked = chunked;
    }

    @Override
    public ByteBuf encode(ByteBufAllocator alloc, String topic, EventId id, long timestampMillis, byte[] data) {
        int length = ID.length + id.epoch().length() + 1 + EventAppender.digits(id.seq()) + DATA.length
                + EventAppender.jsonLength(topic, id.epoch(), id.seq(), timestampMillis, data.length) + END.length;
        ByteBuf buf = alloc.directBuffer(chunked ? hexDigits(length) + 2 + length + 2 : length);
        new Appender(topic, id.epoch(), chunked).append(buf, id.seq(), timestampMillis, EventData.of(data));
        return buf;
    }

    @Override
    public boolean appendable() {
        return true;
    }

    @Override
    public void append(ByteBuf out, String topic, String epoch, long seq, long timestampMillis, EventData data) {
        new Appender(topic, epoch, chunked).append(out, seq, timestampMillis, data);
    }

    @Override
    public ReplayAppender appender(String topic, String epoch) {
        return new Appender(topic, epoch, chunked);
    }

    /** The SSE message's bytes (what {@code push.delivered.bytes} counts): without the chunk's framing. */
    @Override
    public int payloadBytes(int encodedBytes) {
        if (!chunked) {
            return encodedBytes;
        }
        for (int h = 1; h <= 8; h++) {
            int message = encodedBytes - h - 4;
            if (hexDigits(message) == h) {
                return message;
            }
        }
        return encodedBytes; // not a chunk of this format
    }

    static int hexDigits(int n) {
        return Math.max(1, (Integer.SIZE - Integer.numberOfLeadingZeros(n) + 3) / 4);
    }

    /** Writes {@code n} (>= 0) in lower-case hex, as a chunk's size line has it. */
    static void writeHex(ByteBuf out, int n) {
        for (int shift = (hexDigits(n) - 1) * 4; shift >= 0; shift -= 4) {
            out.writeByte(HEX[(n >>> shift) & 0xF]);
        }
    }

    /** Where the {@code data:} line starts in an encoded event: just after the {@code id:} line's newline. */
    static int dataOffset(ByteBuf encoded) {
        int nl = encoded.indexOf(encoded.readerIndex(), encoded.writerIndex(), (byte) '\n');
        return nl - encoded.readerIndex() + 1;
    }

    /**
     * SSE messages of one topic and epoch: the {@code id:} line and {@code data: } before each
     * event's JSON, and with {@code chunked} each message framed as one HTTP chunk.
     */
    static final class Appender extends EventAppender {
        private final int idPrefixLength;
        private final boolean chunked;

        Appender(String topic, String epoch, boolean chunked) {
            super(topic, epoch, MAX_CHUNK_HEAD + ID.length + epoch.length() + 1 + 20 + DATA.length,
                    chunked ? END_CHUNK : END);
            idPrefixLength = ID.length + epoch.length() + 1;
            this.chunked = chunked;
        }

        @Override
        protected int head(int end, int json, long seq, int seqDigits) {
            int start = end - DATA.length - seqDigits - idPrefixLength;
            int at = put(ID, start);
            at = putAscii(epoch, at);
            scratch[at++] = '-';
            at = putDecimal(seq, seqDigits, at);
            put(DATA, at);
            if (chunked) {
                int message = end - start + json + END.length;
                scratch[--start] = '\n';
                scratch[--start] = '\r';
                do {
                    scratch[--start] = HEX[message & 0xF];
                    message >>>= 4;
                } while (message != 0);
            }
            return start;
        }

        @Override
        protected void appendUnusual(ByteBuf out, long seq, long ts, EventData data) {
            ByteBuf message = out.alloc().heapBuffer();
            try {
                message.writeBytes(ID);
                ByteBufUtil.writeAscii(message, epoch + "-" + seq);
                message.writeBytes(DATA);
                EventAppender.writeJsonPrefix(message, topic, epoch, seq, ts);
                data.copyTo(message);
                message.writeByte('}');
                message.writeBytes(END);
                if (chunked) {
                    writeHex(out, message.readableBytes());
                    out.writeByte('\r').writeByte('\n');
                }
                out.writeBytes(message);
                if (chunked) {
                    out.writeByte('\r').writeByte('\n');
                }
            } finally {
                message.release();
            }
        }
    }
}
