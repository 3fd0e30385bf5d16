package io.pushd.server.store;

import net.openhft.chronicle.bytes.Bytes;

/**
 * The layout of one event in the log, written and read only here: a type byte, the topic (UTF-8),
 * the sequence, the append time, the idempotency key (UTF-8, may be null), the data's length and
 * the data. A cluster node's {@link ReplayCache} writes the same layout with another type byte and
 * the topic's epoch where the key would be (its epochs are per topic, not the directory's). An
 * instance holds the fields of the last header read, so a reader reuses one per thread.
 */
final class EventRecord {

    private static final byte TYPE_EVENT = 1;
    private static final byte TYPE_CACHED = 2;

    final StringBuilder topic = new StringBuilder();
    private final StringBuilder key = new StringBuilder();
    private boolean hasKey;
    private boolean cached;
    long seq;
    long timestampMillis;

    /** An upper bound of an excerpt's size: header, record fields (UTF-8 at most 3 bytes a char), data. */
    static long maxBytes(String topic, String idempotencyKey, byte[] data) {
        int keyChars = idempotencyKey == null ? 0 : idempotencyKey.length();
        return 64 + 3L * (topic.length() + keyChars) + data.length;
    }

    static void write(Bytes<?> b, String topic, long seq, long timestampMillis, String idempotencyKey, byte[] data) {
        write(b, TYPE_EVENT, topic, seq, timestampMillis, idempotencyKey, data);
    }

    /** A cached event of a cluster node: {@code epoch} in the key's place. */
    static void writeCached(Bytes<?> b, String topic, String epoch, long seq, long timestampMillis, byte[] data) {
        write(b, TYPE_CACHED, topic, seq, timestampMillis, epoch, data);
    }

    private static void write(Bytes<?> b, byte type, String topic, long seq, long timestampMillis, String keyOrEpoch,
                              byte[] data) {
        b.writeByte(type);
        b.writeUtf8(topic);
        b.writeLong(seq);
        b.writeLong(timestampMillis);
        b.writeUtf8(keyOrEpoch);
        b.writeInt(data.length);
        b.write(data);
    }

    /** Reads the fields before the data; false (and nothing else read) when the excerpt is not an event. */
    boolean readHeader(Bytes<?> b) {
        byte type = b.readByte();
        if (type != TYPE_EVENT && type != TYPE_CACHED) {
            return false;
        }
        cached = type == TYPE_CACHED;
        b.readUtf8(topic);
        seq = b.readLong();
        timestampMillis = b.readLong();
        hasKey = b.readUtf8(key);
        return true;
    }

    /**
     * As {@link #readHeader}, for replay: the topic and key are skipped, not decoded (the index
     * already says the topic, and a replay never needs the key), so a replayed event costs no
     * UTF-8 decoding; {@link #topic} and {@link #key()} are left as they were.
     */
    boolean readSeqAndTime(Bytes<?> b) {
        byte type = b.readByte();
        if (type != TYPE_EVENT && type != TYPE_CACHED) {
            return false;
        }
        b.readSkip(b.readStopBit()); // the topic: its UTF-8 length, then its bytes
        seq = b.readLong();
        timestampMillis = b.readLong();
        long keyLength = b.readStopBit(); // -1: no key
        if (keyLength > 0) {
            b.readSkip(keyLength);
        }
        return true;
    }

    /** The idempotency key of the last header read, or null. */
    String key() {
        return hasKey && !cached ? key.toString() : null;
    }

    /** True when the last header read is a cached event whose epoch is {@code epoch}. */
    boolean isCachedOf(String epoch) {
        return cached && hasKey && key.length() == epoch.length() && key.indexOf(epoch) == 0;
    }
}
