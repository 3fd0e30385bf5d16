package io.pushd.server.topic;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.pushd.protocol.ProtocolCodec;
import io.pushd.server.history.EventHistory.EventData;
import java.nio.charset.StandardCharsets;

/**
 * Appends the events of one topic and epoch for a replay, each as its transport frames it: the
 * protocol's {@code event} JSON ({@code {"type":"event","topic":…,"id":…,"ts":…,"data":…}}, the
 * bytes {@link ProtocolCodec#encodeEvent} produces) with the transport's {@link #head} before it and
 * its {@link #tail} after it. What is the same for every event (the JSON up to the sequence) is
 * encoded once; per event, everything before the data, head included, is built in a scratch array
 * with plain stores and goes into the buffer with one copy, the data with another and the tail with
 * a third. Few calls into the buffer per event, so the replay's code is small and quickly compiled,
 * and cheap while it is not yet. Topics ({@code [A-Za-z0-9_.:-]}) and epochs ({@code [0-9a-z]})
 * never need JSON escaping, and the data is the compact JSON that was published, copied as is.
 * Not thread-safe: one per replay at a time.
 */
public abstract class EventAppender implements EventFormat.ReplayAppender {

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

    protected final String topic;
    protected final String epoch;
    /** {@link #headRoom} bytes for the head, then the JSON's prefix, then room for the rest of it. */
    protected final byte[] scratch;
    private final int headRoom;
    private final int prefixLength;
    private final byte[] tail;

    /**
     * @param headRoom the longest head, which {@link #head} writes ending where the JSON starts
     * @param tail     what follows the JSON's closing brace
     */
    protected EventAppender(String topic, String epoch, int headRoom, byte[] tail) {
        this.topic = topic;
        this.epoch = epoch;
        this.headRoom = headRoom;
        this.tail = tail.clone();
        prefixLength = TYPE_TOPIC.length + topic.length() + ID.length + epoch.length() + 1;
        scratch = new byte[headRoom + prefixLength + 20 + TS.length + 20 + DATA.length];
        int at = headRoom;
        at = put(TYPE_TOPIC, at);
        at = putAscii(topic, at);
        at = put(ID, at);
        at = putAscii(epoch, at);
        scratch[at] = '-';
    }

    /**
     * Writes the transport's framing of an event whose JSON is {@code json} bytes long into
     * {@link #scratch}, ending at {@code end}; returns where it starts.
     */
    protected abstract int head(int end, int json, long seq, int seqDigits);

    /** Appends the event the slow way: a negative sequence or time, which no stored event has. */
    protected abstract void appendUnusual(ByteBuf out, long seq, long ts, EventData data);

    @Override
    public final void append(ByteBuf out, long seq, long ts, EventData data) {
        if (seq < 0 || ts < 0) {
            appendUnusual(out, seq, ts, data); // never for stored events; kept correct
            return;
        }
        int length = data.length();
        int seqDigits = digits(seq);
        int tsDigits = digits(ts);
        int at = headRoom + prefixLength;
        at = putDecimal(seq, seqDigits, at);
        at = put(TS, at);
        at = putDecimal(ts, tsDigits, at);
        at = put(DATA, at);
        int json = at - headRoom + length + 1;
        // the head ends where the prefix starts, so head and JSON are contiguous
        int start = head(headRoom, json, seq, seqDigits);
        out.ensureWritable(at - start + length + 1 + tail.length);
        out.writeBytes(scratch, start, at - start);
        data.copyTo(out);
        out.writeByte('}');
        if (tail.length > 0) {
            out.writeBytes(tail);
        }
    }

    /** The length of an event's JSON as this class writes it. */
    public static int jsonLength(String topic, String epoch, long seq, long ts, int dataLength) {
        return TYPE_TOPIC.length + topic.length() + ID.length + epoch.length() + 1 + digits(seq) + TS.length
                + digits(ts) + DATA.length + dataLength + 1;
    }

    /** Writes {@code bytes} into the scratch array at {@code at}; returns where they end. */
    protected final int put(byte[] bytes, int at) {
        System.arraycopy(bytes, 0, scratch, at, bytes.length);
        return at + bytes.length;
    }

    /** Writes {@code s} (ASCII) into the scratch array at {@code at}; returns where it ends. */
    protected final int putAscii(String s, int at) {
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
    protected final int putDecimal(long v, int digits, int at) {
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

    /** The number of decimal digits of {@code v} (with its sign). */
    public static int digits(long v) {
        if (v < 0) {
            return 1 + digits(v == Long.MIN_VALUE ? Long.MAX_VALUE : -v); // MIN_VALUE has as many digits as MAX_VALUE
        }
        int n = 1; // compared, not divided (see putDecimal)
        while (n < POWERS_OF_TEN.length && v >= POWERS_OF_TEN[n]) {
            n++;
        }
        return n;
    }

    /** {@code x / 100} for any {@code x >= 0}: 1374389535 is 2^37 / 100 rounded up, exact over every int. */
    static int div100(int x) {
        return (int) ((x * 1374389535L) >>> 37);
    }

    /** Everything of the event's JSON before the data, through {@code out}'s own writes. */
    public static void writeJsonPrefix(ByteBuf out, String topic, String epoch, long seq, long ts) {
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

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
