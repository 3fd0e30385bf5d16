package io.pushd.server.store;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes event records to the queue behind the {@link StorageGuard}. Single writer thread (which
 * may differ from the constructing thread).
 */
final class LogAppender {

    private static final Logger log = LoggerFactory.getLogger(LogAppender.class);
    private static final long PAGE = 4096;

    private final SingleChronicleQueue queue;
    private final ExcerptAppender appender;
    private final StorageGuard storage;

    LogAppender(SingleChronicleQueue queue, StorageGuard storage) {
        this.queue = queue;
        this.storage = storage;
        this.appender = queue.createAppender();
        // The single writer thread may differ from the constructing thread; writes are serialised by the caller.
        this.appender.singleThreadedCheckDisabled(true);
    }

    /**
     * Makes sure the disk has room for the event before anything is written; returns the bytes
     * reserved for {@link #write}, or throws {@link StorageFullException}.
     */
    long reserve(String topic, String idempotencyKey, byte[] data) {
        long bytes = EventRecord.maxBytes(topic, idempotencyKey, data);
        // A roll creates a file whose blocks cannot be reserved beforehand: the guard checks for room instead.
        boolean newFile = appender.currentFile() == null || appender.cycle() != queue.cycle();
        if (!storage.tryReserve(bytes, newFile)) {
            throw new StorageFullException("no room on disk for the event (store.minFreeBytes: "
                    + storage.minFreeBytes() + ", free: " + storage.freeBytes() + " bytes)");
        }
        return bytes;
    }

    /**
     * Writes one excerpt of at most {@code bytes} (as {@link #reserve}d) and returns its index (its
     * position in the log), or throws {@link StorageFullException} when it was not committed. Its pages are touched (non-destructively) from the last one back before
     * anything is written, so a fault that slips past the guard happens while the excerpt holds
     * nothing but its header, which the rollback can then clear: a half-written excerpt would
     * block every reader behind it.
     */
    long write(String topic, long seq, long timestampMillis, String idempotencyKey, byte[] data,
                       long bytes) {
        return write(topic, seq, bytes, b -> EventRecord.write(b, topic, seq, timestampMillis, idempotencyKey, data));
    }

    /** As {@link #write}, for a cluster node's {@link ReplayCache}: the record carries the topic's epoch. */
    long writeCached(String topic, String epoch, long seq, long timestampMillis, byte[] data, long bytes) {
        return write(topic, seq, bytes, b -> EventRecord.writeCached(b, topic, epoch, seq, timestampMillis, data));
    }

    private long write(String topic, long seq, long bytes, java.util.function.Consumer<Bytes<?>> record) {
        long position = Long.MIN_VALUE;
        long end = 0;
        try {
            try (DocumentContext dc = appender.writingDocument()) {
                try {
                    Bytes<?> b = dc.wire().bytes();
                    touch(b, b.writePosition(), b.writePosition() + bytes);
                    record.accept(b);
                    end = b.writePosition();
                    position = dc.index();
                } catch (Throwable t) {
                    dc.rollbackOnClose();
                    throw t;
                }
            }
        } catch (Throwable t) {
            storage.faulted(t);
            if (position != Long.MIN_VALUE && lastIndexAppended() == position) {
                // Committed; what failed came after (Chronicle's index): the event is stored and readable.
                log.warn("event {} of topic {} was stored, but writing the log's index failed", seq, topic, t);
            } else {
                throw new StorageFullException("the event could not be written to the log: " + t, t);
            }
        }
        storage.appended(appender.currentFile(), end);
        return position;
    }

    private long lastIndexAppended() {
        try {
            return appender.lastIndexAppended();
        } catch (IllegalStateException nothingAppended) {
            return Long.MIN_VALUE;
        }
    }

    /** Writes to one int of every page of [from, to) without changing it: allocates the pages, last first. */
    private static void touch(Bytes<?> b, long from, long to) {
        long first = from & ~(PAGE - 1);
        for (long p = (to - 1) & ~(PAGE - 1); p >= first; p -= PAGE) {
            if (p >= from) {
                b.compareAndSwapInt(p, 0, 0);
            }
        }
    }

    /** Forces what was appended to stable storage (fsync mode). */
    void sync() {
        appender.sync();
    }
}
