package io.pushd.server.store;

import io.netty.buffer.ByteBuf;
import io.pushd.server.history.EventHistory.EventData;
import io.pushd.server.history.EventHistory.EventDataVisitor;
import io.pushd.server.history.EventHistory.EventVisitor;
import java.util.concurrent.locks.Lock;
import io.netty.util.internal.PlatformDependent;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Reads event records from the queue, from any thread: each thread gets its own tailer and scratch
 * arrays, so reads allocate little. Every read holds the store's file lock for reading, so
 * retention never deletes a file under it.
 */
final class LogReader {

    static final int READ_BATCH = 256;

    /** Per-thread read state. */
    private static final class ReadState {
        final ExcerptTailer tailer;
        final long[] seqs = new long[READ_BATCH];
        final long[] positions = new long[READ_BATCH];
        final EventRecord record = new EventRecord();
        final MappedData data = new MappedData();

        ReadState(ExcerptTailer tailer) {
            this.tailer = tailer;
        }
    }

    /**
     * The data of the excerpt being read, copied from the mapped file into the outbound buffer
     * (through one scratch array per thread when it cannot be copied directly): replay allocates
     * nothing per event (Chronicle's mapped bytes are not a Netty buffer).
     */
    private static final class MappedData implements EventData {
        private Bytes<?> bytes;
        private long position;
        private int length;
        private byte[] scratch = new byte[1024];

        void at(Bytes<?> b) {
            length = b.readInt();
            position = b.readPosition();
            bytes = b;
        }

        @Override
        public int length() {
            return length;
        }

        @Override
        public void copyTo(ByteBuf out) {
            // The tailer's bytes may stand in the chunk after the data's (MappedCopy): never read
            // through them at the data's position, always through the chunk that holds it.
            long address = MappedCopy.address(bytes, position, length);
            if (address != 0 && out.hasMemoryAddress() && MappedCopy.NETTY_UNSAFE) {
                // Straight from the mapped file into a direct outbound buffer: one memory copy.
                out.ensureWritable(length);
                int at = out.writerIndex();
                PlatformDependent.copyMemory(address, out.memoryAddress() + at, length);
                out.writerIndex(at + length);
                return;
            }
            if (scratch.length < length) {
                scratch = new byte[Math.max(length, scratch.length * 2)];
            }
            MappedCopy.copy(bytes, position, scratch, length);
            out.writeBytes(scratch, 0, length);
        }

        @Override
        public byte[] toBytes() {
            byte[] copy = new byte[length];
            MappedCopy.copy(bytes, position, copy, length);
            return copy;
        }
    }

    /** Receives every event of the log at start-up, with its position. */
    @FunctionalInterface
    interface RecoveryVisitor {
        void accept(long position, EventRecord header);
    }

    private final SingleChronicleQueue queue;
    private final Lock fileLock;
    private final ThreadLocal<ReadState> readers;
    private volatile boolean closed;

    LogReader(SingleChronicleQueue queue, Lock fileReadLock) {
        this.queue = queue;
        this.fileLock = fileReadLock;
        this.readers = ThreadLocal.withInitial(() -> {
            ExcerptTailer t = queue.createTailer();
            t.singleThreadedCheckDisabled(true);
            return new ReadState(t);
        });
    }

    /**
     * Passes the kept events of {@code index} after {@code afterSeq} (at most {@code max}, and at
     * most {@link #READ_BATCH}) to the visitor, in order; returns how many.
     */
    int read(String topic, TopicIndex index, long afterSeq, int max, EventVisitor visitor) {
        return readData(topic, index, afterSeq, max, (seq, ts, data) -> visitor.accept(seq, ts, data.toBytes()));
    }

    /** As {@link #read}, handing each event's data as a view valid during the call. */
    int readData(String topic, TopicIndex index, long afterSeq, int max, EventDataVisitor visitor) {
        ReadState rs = readers.get();
        int n = index.positionsAfter(afterSeq, Math.min(max, READ_BATCH), rs.seqs, rs.positions);
        int delivered = 0;
        fileLock.lock();
        try {
            for (int i = 0; i < n; i++) {
                // A topic's events often lie back to back in the log (always in a one-topic log):
                // then the tailer already stands at the next one, and moveToIndex (an index lookup
                // per event, most of a replayed event's cost) is skipped.
                if (closed || (rs.tailer.index() != rs.positions[i] && !rs.tailer.moveToIndex(rs.positions[i]))) {
                    break; // deleted by retention meanwhile; the caller sees the new oldest and resets
                }
                try (DocumentContext dc = rs.tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    Bytes<?> b = dc.wire().bytes();
                    if (!rs.record.readSeqAndTime(b) || rs.record.seq != rs.seqs[i]) {
                        throw new IllegalStateException("index of " + topic + " points at sequence "
                                + rs.record.seq + " instead of " + rs.seqs[i]);
                    }
                    rs.data.at(b);
                    visitor.accept(rs.record.seq, rs.record.timestampMillis, rs.data);
                    delivered++;
                }
            }
        } finally {
            fileLock.unlock();
        }
        return delivered;
    }

    /**
     * As {@link #readData}, for a {@link ReplayCache} run of {@code epoch}: returns {@code -1} (and
     * passes nothing) unless the first event passed would be {@code afterSeq + 1}, so a run that
     * retention trimmed meanwhile is never read past a hole; and checks each record's epoch.
     */
    int readRun(String topic, String epoch, TopicIndex index, long afterSeq, int max, EventDataVisitor visitor) {
        ReadState rs = readers.get();
        int n = index.positionsAfter(afterSeq, Math.min(max, READ_BATCH), rs.seqs, rs.positions);
        if (n == 0 || rs.seqs[0] != afterSeq + 1) {
            return -1;
        }
        int delivered = 0;
        fileLock.lock();
        try {
            for (int i = 0; i < n; i++) {
                if (closed || !rs.tailer.moveToIndex(rs.positions[i])) {
                    break; // deleted by retention meanwhile
                }
                try (DocumentContext dc = rs.tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    Bytes<?> b = dc.wire().bytes();
                    if (!rs.record.readHeader(b) || rs.record.seq != rs.seqs[i] || !rs.record.isCachedOf(epoch)) {
                        throw new IllegalStateException("cache index of " + topic + " points at another record than "
                                + epoch + "-" + rs.seqs[i]);
                    }
                    rs.data.at(b);
                    visitor.accept(rs.record.seq, rs.record.timestampMillis, rs.data);
                    delivered++;
                }
            }
        } finally {
            fileLock.unlock();
        }
        return delivered == 0 ? -1 : delivered;
    }

    /** Append time of the oldest event still in the log, or -1 when the log is empty. */
    long oldestTimestampMillis() {
        if (closed) {
            return -1;
        }
        ReadState rs = readers.get();
        fileLock.lock();
        try {
            rs.tailer.toStart();
            try (DocumentContext dc = rs.tailer.readingDocument()) {
                if (!dc.isPresent() || !rs.record.readHeader(dc.wire().bytes())) {
                    return -1;
                }
                return rs.record.timestampMillis;
            }
        } finally {
            fileLock.unlock();
        }
    }

    /**
     * What a scan found: the index of the last whole event record (-1: none), and where the log
     * stops making sense (null: nowhere).
     */
    record Scan(long lastIndex, String damage) {
    }

    /**
     * Reads the whole log once, at start-up, before any other thread reads or writes; stops at
     * the first excerpt that is not a whole event record (a file cut short reads as zeros, which
     * JSON data never holds).
     */
    Scan scan(RecoveryVisitor visitor) {
        EventRecord record = new EventRecord();
        byte[][] scratch = {new byte[4096]};
        long last = -1;
        try (ExcerptTailer t = queue.createTailer()) {
            t.toStart();
            while (true) {
                try (DocumentContext dc = t.readingDocument()) {
                    if (!dc.isPresent()) {
                        return new Scan(last, null);
                    }
                    if (dc.isMetaData()) {
                        continue;
                    }
                    Bytes<?> b = dc.wire().bytes();
                    String bad = wholeRecord(b, record, scratch);
                    if (bad != null) {
                        return new Scan(last, "excerpt " + Long.toHexString(dc.index()) + " " + bad);
                    }
                    visitor.accept(dc.index(), record);
                    last = dc.index();
                }
            }
        } catch (RuntimeException e) { // Chronicle on bytes that are not its format
            return new Scan(last, "unreadable after excerpt " + Long.toHexString(last) + ": " + e);
        }
    }

    /**
     * Null when {@code b} holds one whole event record (read into {@code record}), else what is
     * wrong. A record with a checksum is checked against it; one without (written before the
     * checksum) by its framing and its data's ends, which JSON never leaves zero.
     */
    private static String wholeRecord(Bytes<?> b, EventRecord record, byte[][] scratch) {
        long start = b.readPosition();
        if (b.readRemaining() < 1 || !record.readHeader(b)) {
            return "is not an event record";
        }
        if (b.readRemaining() < 4) {
            return "ends inside its record";
        }
        int length = b.readInt();
        long at = b.readPosition();
        int trailer = record.checked ? EventRecord.CHECKSUM_BYTES : 0;
        if (length < 1 || length + trailer != b.readRemaining()) {
            return "has data of " + length + " bytes in " + b.readRemaining();
        }
        if (record.checked) {
            long end = at + length;
            if (scratch[0].length < end - start) {
                scratch[0] = new byte[(int) Math.max(end - start, 2L * scratch[0].length)];
            }
            if (EventRecord.checksum(b, start, end, scratch[0]) != b.readInt(end)) {
                return "does not match its checksum";
            }
        } else if (b.readByte(at) == 0 || b.readByte(at + length - 1) == 0) {
            return "has data that is not JSON (zeros: the file was cut short)";
        }
        return null;
    }

    /** Reads after this return nothing (called under the file write lock, before the queue closes). */
    void close() {
        closed = true;
    }
}
