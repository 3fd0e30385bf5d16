package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.pushd.protocol.EventId;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.history.EventHistory.EventData;

/**
 * Whole WebSocket text frames of {@code event} messages, header included, as the server sends
 * them: FIN, opcode 1, unmasked, the shortest length form (RFC 6455 5.2) — what Netty's frame
 * encoder writes for a {@code TextWebSocketFrame}. The payload is the bytes
 * {@link ProtocolCodec#encodeEvent} produces ({@code {"type":"event","topic":…,"id":…,"ts":…,"data":…}}),
 * written straight into the buffer: topics ({@code [A-Za-z0-9_.:-]}) and epochs ({@code [0-9a-z]})
 * never need JSON escaping, and the data is the compact JSON that was published, copied as is.
 */
final class WebSocketFrames {

    private static final byte FIN_TEXT = (byte) 0x81;
    private static final byte[] TYPE_TOPIC = ascii("{\"type\":\"event\",\"topic\":\"");
    private static final byte[] ID = ascii("\",\"id\":\"");
    private static final byte[] TS = ascii("\",\"ts\":");
    private static final byte[] DATA = ascii(",\"data\":");
    /** 10^0 .. 10^18: a long has at most 19 digits. */
    private static final long[] POWERS_OF_TEN = new long[19];
    /** The tens and the ones digit of 0..99. */
    private static final byte[] TENS = new byte[100];
    private static final byte[] ONES = new byte[100];

    static {
        POWERS_OF_TEN[0] = 1;
        for (int i = 1; i < POWERS_OF_TEN.length; i++) {
            POWERS_OF_TEN[i] = POWERS_OF_TEN[i - 1] * 10;
        }
        for (int i = 0; i < 100; i++) {
            TENS[i] = (byte) ('0' + i / 10);
            ONES[i] = (byte) ('0' + i % 10);
        }
    }

    private WebSocketFrames() {
    }

    /** A new buffer holding one whole frame. */
    static ByteBuf encode(ByteBufAllocator alloc, String topic, EventId id, long ts, byte[] data) {
        int payload = payloadLength(topic, id.epoch(), id.seq(), ts, data.length);
        ByteBuf out = alloc.directBuffer(headerLength(payload) + payload);
        writeHeader(out, payload);
        writePayload(out, topic, id.epoch(), id.seq(), ts, data.length);
        out.writeBytes(data);
        out.writeByte('}');
        return out;
    }

    /** Appends one whole frame to {@code out}, copying the data from wherever it is kept. */
    static void append(ByteBuf out, String topic, String epoch, long seq, long ts, EventData data) {
        int length = data.length();
        int payload = payloadLength(topic, epoch, seq, ts, length);
        out.ensureWritable(headerLength(payload) + payload);
        writeHeader(out, payload);
        writePayload(out, topic, epoch, seq, ts, length);
        data.copyTo(out);
        out.writeByte('}');
    }

    /**
     * Appends whole frames of one topic and epoch, for a replay: the bytes up to the sequence
     * ({@code {"type":"event","topic":"…","id":"<epoch>-}) are encoded once, and per event
     * everything before the data (frame header included) is built in a scratch array with plain
     * stores and goes into the buffer with one copy, the data with another. Few calls into the
     * buffer per event, so the replay's code is small and quickly compiled, and cheap while it is
     * not yet. Not thread-safe: one per replay at a time.
     */
    static final class Appender implements EventFormat.ReplayAppender {
        /** Longest frame header, then the prefix, then room for the rest (two 20-digit numbers). */
        private static final int MAX_HEADER = 10;
        private final String topic;
        private final String epoch;
        private final byte[] scratch;
        private final int prefixLength;

        Appender(String topic, String epoch) {
            this.topic = topic;
            this.epoch = epoch;
            prefixLength = TYPE_TOPIC.length + topic.length() + ID.length + epoch.length() + 1;
            scratch = new byte[MAX_HEADER + prefixLength + 20 + TS.length + 20 + DATA.length];
            int at = MAX_HEADER;
            at = put(TYPE_TOPIC, at);
            at = putAscii(topic, at);
            at = put(ID, at);
            at = putAscii(epoch, at);
            scratch[at] = '-';
        }

        @Override
        public void append(ByteBuf out, long seq, long ts, EventData data) {
            if (seq < 0 || ts < 0) {
                WebSocketFrames.append(out, topic, epoch, seq, ts, data); // never for stored events; kept correct
                return;
            }
            int length = data.length();
            int seqDigits = digits(seq);
            int tsDigits = digits(ts);
            int payload = prefixLength + seqDigits + TS.length + tsDigits + DATA.length + length + 1;
            byte[] b = scratch;
            // the header ends where the prefix starts, so header and prefix are contiguous
            int start;
            if (payload < 126) {
                start = MAX_HEADER - 2;
                b[start + 1] = (byte) payload;
            } else if (payload <= 0xFFFF) {
                start = MAX_HEADER - 4;
                b[start + 1] = 126;
                b[start + 2] = (byte) (payload >>> 8);
                b[start + 3] = (byte) payload;
            } else {
                start = 0;
                b[1] = 127;
                for (int i = 0; i < 8; i++) {
                    b[2 + i] = (byte) ((long) payload >>> (56 - 8 * i));
                }
            }
            b[start] = FIN_TEXT;
            int at = MAX_HEADER + prefixLength;
            at = putDecimal(seq, seqDigits, at);
            at = put(TS, at);
            at = putDecimal(ts, tsDigits, at);
            at = put(DATA, at);
            out.ensureWritable(at - start + length + 1);
            out.writeBytes(b, start, at - start);
            data.copyTo(out);
            out.writeByte('}');
        }

        private int put(byte[] bytes, int at) {
            System.arraycopy(bytes, 0, scratch, at, bytes.length);
            return at + bytes.length;
        }

        private int putAscii(String s, int at) {
            for (int i = 0; i < s.length(); i++) {
                scratch[at + i] = (byte) s.charAt(i);
            }
            return at + s.length();
        }

        /**
         * Writes {@code v} (not negative, {@code digits} long) ending at {@code at + digits}, two
         * digits at a time with a multiplication for each division by 100, and one long division
         * per eight digits above an int: C2 turns a division by a constant into a multiplication
         * itself, C1 (the JIT with C2 off, and the code a fresh JVM runs first) does not, and one
         * long division per digit was most of what a replayed event cost it (a 13-digit time).
         */
        private int putDecimal(long v, int digits, int at) {
            int end = at + digits;
            int i = end;
            while (v > Integer.MAX_VALUE) {
                long q = v / 100_000_000L;
                i = putInt((int) (v - q * 100_000_000L), i, 8); // exactly eight digits, leading zeros included
                v = q;
            }
            putInt((int) v, i, 1);
            return end;
        }

        /** Writes {@code x} (not negative) ending at {@code end}, zero-padded to {@code width}; returns where it starts. */
        private int putInt(int x, int end, int width) {
            byte[] b = scratch;
            int i = end;
            while (x >= 100 || end - i < width - 2) {
                int q = div100(x);
                int pair = x - q * 100;
                b[--i] = ONES[pair];
                b[--i] = TENS[pair];
                x = q;
            }
            if (x >= 10 || end - i < width - 1) {
                b[--i] = ONES[x];
                b[--i] = TENS[x];
            } else {
                b[--i] = (byte) ('0' + x);
            }
            return i;
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

    private static int payloadLength(String topic, String epoch, long seq, long ts, int dataLength) {
        return TYPE_TOPIC.length + topic.length() + ID.length + epoch.length() + 1 + digits(seq) + TS.length
                + digits(ts) + DATA.length + dataLength + 1;
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

    /** Everything before the data. */
    private static void writePayload(ByteBuf out, String topic, String epoch, long seq, long ts, int dataLength) {
        out.writeBytes(TYPE_TOPIC);
        ByteBufUtil.writeAscii(out, topic);
        out.writeBytes(ID);
        ByteBufUtil.writeAscii(out, epoch);
        out.writeByte('-');
        writeDecimal(out, seq);
        out.writeBytes(TS);
        writeDecimal(out, ts);
        out.writeBytes(DATA);
    }

    static int digits(long v) {
        if (v < 0) {
            return 1 + digits(v == Long.MIN_VALUE ? Long.MAX_VALUE : -v); // MIN_VALUE has as many digits as MAX_VALUE
        }
        int n = 1; // compared, not divided (see Appender.putDecimal)
        while (n < POWERS_OF_TEN.length && v >= POWERS_OF_TEN[n]) {
            n++;
        }
        return n;
    }

    /** {@code x / 100} for any {@code x >= 0}: 1374389535 is 2^37 / 100 rounded up, exact over every int. */
    static int div100(int x) {
        return (int) ((x * 1374389535L) >>> 37);
    }

    private static void writeDecimal(ByteBuf out, long v) {
        if (v < 0) {
            ByteBufUtil.writeAscii(out, Long.toString(v)); // never for sequences and times; kept simple
            return;
        }
        int n = digits(v);
        int end = out.writerIndex() + n;
        out.ensureWritable(n);
        for (int i = end - 1; i >= end - n; i--) {
            out.setByte(i, (int) ('0' + v % 10));
            v /= 10;
        }
        out.writerIndex(end);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }
}
