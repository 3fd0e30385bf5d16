package io.pushd.server.store;

import java.util.zip.CRC32C;
import net.openhft.chronicle.bytes.Bytes;

/**
 * The layout of one event in the log, written and read only here: a type byte, the topic (UTF-8),
 * the sequence, the append time, the idempotency key (UTF-8, may be null), the data's length and
 * the data; then a CRC32C of all of that (type 3; type 1, without it, is what builds before the
 * checksum wrote, still read). A cluster node's {@link ReplayCache} writes the same layout with
 * another type byte and the topic's epoch where the key would be (its epochs are per topic, not
 * the directory's), without a checksum (a cache: rebuilt from Redis). An instance holds the fields
 * of the last header read, so a reader reuses one per thread.
 */
final class EventRecord {

    private static final byte TYPE_EVENT = 1;
    private static final byte TYPE_CACHED = 2;
    private static final byte TYPE_EVENT_CHECKED = 3;
    static final int CHECKSUM_BYTES = 4;
    /** Each writing thread's heap copy of the record being written (the publisher's writer, an event loop). */
    private static final ThreadLocal<Bytes<byte[]>> SCRATCH = ThreadLocal.withInitial(() -> Bytes.allocateElasticOnHeap(512));
    /** A larger copy (a large event's) is not kept for the thread's life. */
    private static final int SCRATCH_KEPT_BYTES = 64 * 1024;

    final StringBuilder topic = new StringBuilder();
    private final StringBuilder key = new StringBuilder();
    private boolean hasKey;
    private boolean cached;
    /** The record ends with a checksum ({@link #checks}). */
    boolean checked;
    long seq;
    long timestampMillis;

    /** An upper bound of an excerpt's size: header, record fields (UTF-8 at most 3 bytes a char), data. */
    static long maxBytes(String topic, String idempotencyKey, byte[] data) {
        int keyChars = idempotencyKey == null ? 0 : idempotencyKey.length();
        return 64 + CHECKSUM_BYTES + 3L * (topic.length() + keyChars) + data.length;
    }

    /**
     * Writes a checked event record. The record is laid out on the heap first and its checksum
     * taken there, then copied into {@code b}: reading it back from the log, where the write may
     * have moved {@code b} into the next mapped chunk, read outside the mapping (see
     * {@link MappedCopy}).
     */
    static void write(Bytes<?> b, String topic, long seq, long timestampMillis, String idempotencyKey, byte[] data) {
        Bytes<byte[]> record = SCRATCH.get();
        record.clear();
        write(record, TYPE_EVENT_CHECKED, topic, seq, timestampMillis, idempotencyKey, data);
        int n = (int) record.readRemaining();
        byte[] array = record.underlyingObject(); // after the writes: growing replaces it
        CRC32C crc = new CRC32C();
        crc.update(array, 0, n);
        b.write(array, 0, n);
        b.writeInt((int) crc.getValue());
        if (array.length > SCRATCH_KEPT_BYTES) {
            SCRATCH.remove();
        }
    }

    /** As before the checksum (type 1): the compatibility test writes the old format with it. */
    static void writeUnchecked(Bytes<?> b, String topic, long seq, long timestampMillis, String idempotencyKey,
                               byte[] data) {
        write(b, TYPE_EVENT, topic, seq, timestampMillis, idempotencyKey, data);
    }

    /** CRC32C of the bytes [from, to) of {@code b}, through {@code scratch} (at least to - from long). */
    static int checksum(Bytes<?> b, long from, long to, byte[] scratch) {
        int n = (int) (to - from);
        MappedCopy.copy(b, from, scratch, n); // b may stand in a chunk after from's (MappedCopy)
        CRC32C crc = new CRC32C();
        crc.update(scratch, 0, n);
        return (int) crc.getValue();
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
        if (type != TYPE_EVENT && type != TYPE_CACHED && type != TYPE_EVENT_CHECKED) {
            return false;
        }
        cached = type == TYPE_CACHED;
        checked = type == TYPE_EVENT_CHECKED;
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
        if (type != TYPE_EVENT && type != TYPE_CACHED && type != TYPE_EVENT_CHECKED) {
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
