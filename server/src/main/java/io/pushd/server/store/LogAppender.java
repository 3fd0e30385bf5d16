package io.pushd.server.store;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes event records to the queue behind the {@link StorageGuard}. The publisher's writer only:
 * one batch at a time, on whichever thread holds its lock (see {@code Publisher}).
 */
final class LogAppender {

    private static final Logger log = LoggerFactory.getLogger(LogAppender.class);
    private static final long PAGE = 4096;

    private final SingleChronicleQueue queue;
    private final StorageGuard storage;
    /** Replaced after a write that failed part-way: see {@link #replaceAppender}. */
    private ExcerptAppender appender;
    /** Why the replaced appender could not sync; thrown by the next {@link #sync}. */
    private Throwable syncFailed;

    LogAppender(SingleChronicleQueue queue, StorageGuard storage) {
        this.queue = queue;
        this.storage = storage;
        this.appender = newAppender(queue);
    }

    private static ExcerptAppender newAppender(SingleChronicleQueue queue) {
        ExcerptAppender appender = queue.createAppender();
        // The writer's thread varies (the publisher's lock serialises the writes), and is not the constructing one.
        appender.singleThreadedCheckDisabled(true);
        return appender;
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
     * position in the log), or throws {@link StorageFullException} when it was not committed. Its
     * pages are touched (non-destructively) from the last one back before anything is written, so
     * that a fault which slips past the guard comes as early as it can; the excerpt is rolled back
     * and its appender replaced ({@link #replaceAppender}), so the next append starts clean.
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
            boolean committed = position != Long.MIN_VALUE && lastIndexAppended() == position;
            replaceAppender();
            if (committed) {
                // Committed; what failed came after (Chronicle's index): the event is stored and readable.
                log.warn("event {} of topic {} was stored, but writing the log's index failed", seq, topic, t);
            } else {
                throw new StorageFullException("the event could not be written to the log: " + t, t);
            }
        }
        storage.appended(appender.currentFile(), end);
        return position;
    }

    /**
     * A fault inside the mapped file is raised by the JVM after the faulting access, so it may come
     * out of Chronicle's own rollback too, which then leaves the appender believing it is still
     * inside the excerpt's header: every later append would fail until a restart. Nothing of the
     * failed excerpt was committed (its header is only set at the commit, and a commit zeroes the
     * next header's slot), so a new appender, which finds the log's end from the store, starts
     * clean where the failed excerpt was.
     */
    private void replaceAppender() {
        try {
            // A new appender syncs nothing until it has written: what this one appended since the
            // last sync (with fsync, still unacknowledged) is synced here, or the next sync fails.
            appender.sync();
        } catch (Throwable t) {
            syncFailed = t;
        }
        try {
            appender.close();
        } catch (Throwable ignored) {
            // Its state is what is being thrown away.
        }
        appender = newAppender(queue);
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
        if (syncFailed != null) {
            Throwable t = syncFailed;
            syncFailed = null;
            throw new IllegalStateException("syncing the log failed: " + t, t);
        }
        appender.sync();
    }
}
