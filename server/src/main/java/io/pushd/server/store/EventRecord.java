package io.pushd.server.store;

import net.openhft.chronicle.bytes.Bytes;

/**
 * The layout of one event in the log, written and read only here: a type byte, the topic (UTF-8),
 * the sequence, the append time, the idempotency key (UTF-8, may be null), the data's length and
 * the data. An instance holds the fields of the last header read, so a reader reuses one per thread.
 */
final class EventRecord {

    private static final byte TYPE_EVENT = 1;

    final StringBuilder topic = new StringBuilder();
    private final StringBuilder key = new StringBuilder();
    private boolean hasKey;
    long seq;
    long timestampMillis;

    /** An upper bound of an excerpt's size: header, record fields (UTF-8 at most 3 bytes a char), data. */
    static long maxBytes(String topic, String idempotencyKey, byte[] data) {
        int keyChars = idempotencyKey == null ? 0 : idempotencyKey.length();
        return 64 + 3L * (topic.length() + keyChars) + data.length;
    }

    static void write(Bytes<?> b, String topic, long seq, long timestampMillis, String idempotencyKey, byte[] data) {
        b.writeByte(TYPE_EVENT);
        b.writeUtf8(topic);
        b.writeLong(seq);
        b.writeLong(timestampMillis);
        b.writeUtf8(idempotencyKey);
        b.writeInt(data.length);
        b.write(data);
    }

    /** Reads the fields before the data; false (and nothing else read) when the excerpt is not an event. */
    boolean readHeader(Bytes<?> b) {
        if (b.readByte() != TYPE_EVENT) {
            return false;
        }
        b.readUtf8(topic);
        seq = b.readLong();
        timestampMillis = b.readLong();
        hasKey = b.readUtf8(key);
        return true;
    }

    /** The idempotency key of the last header read, or null. */
    String key() {
        return hasKey ? key.toString() : null;
    }
}
