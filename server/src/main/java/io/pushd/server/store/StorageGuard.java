package io.pushd.server.store;

import java.io.File;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongSupplier;
import net.openhft.posix.PosixAPI;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes sure the disk blocks an append is about to write exist before the writer touches the
 * memory-mapped log. Chronicle writes through a mapping of a sparse file: on a full file system
 * the first write to a page that has no block gets SIGBUS (an {@code InternalError} in Java),
 * half an excerpt is left behind, and an acknowledgement may already have been promised. So:
 *
 * <ul>
 *   <li>the region ahead of the write position of the current log file is reserved with
 *       {@code fallocate} ({@link #STEP} at a time), so the writes that follow cannot fault;</li>
 *   <li>an append needs, after its reservation, at least {@code store.minFreeBytes} still free
 *       (the usable space of the file system, read at most every {@link #PROBE_EVERY_NANOS});</li>
 *   <li>the first append after a start or into a new hourly file (whose blocks cannot be reserved
 *       before Chronicle creates it) needs {@link #NEW_FILE_BYTES} more, checked with a fresh
 *       reading.</li>
 * </ul>
 *
 * Where {@code fallocate} is not supported the watermark alone protects the writer. The state
 * ({@link #writable()}, {@link #freeBytes()}) is logged once per change, not per refusal.
 *
 * <p>Threads: everything but the two getters runs in the publisher's writer, one batch at a time.
 */
public final class StorageGuard implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StorageGuard.class);

    /** Reserved ahead of the write position at a time: one fallocate per ~200 events of 5 KB. */
    static final long STEP = 1 << 20;
    /**
     * Kept reserved beyond the excerpt itself: Chronicle writes its index arrays (32 KiB for the
     * hourly cycle) inline at the write position when an excerpt is committed.
     */
    static final long INDEX_SLACK = 256 << 10;
    /** Header, index-of-indexes and first index array of a new cycle file, with room to spare. */
    static final long NEW_FILE_BYTES = 1 << 20;
    static final long PROBE_EVERY_NANOS = 100_000_000L;

    /** Reserves the blocks of a file region. The default is {@code fallocate(2)} through OpenHFT's posix. */
    interface Allocator {
        enum Result { OK, NO_SPACE, UNSUPPORTED }

        /** Opens {@code file} for allocation; returns a handle, or -1 when allocation is unsupported. */
        long open(File file);

        Result allocate(long handle, long offset, long length);

        void close(long handle);
    }

    private final Path dataDir;
    private final long minFreeBytes;
    private final LongSupplier usableBytes;
    private final LongSupplier nanoClock;
    private Allocator allocator;

    private File file;          // the log file the last append went to
    private long handle = -1;
    private long writeEnd;      // end of the last excerpt in that file
    private long reservedTo;    // blocks of [.., reservedTo) of that file are known to exist
    private long probedAtNanos;
    private boolean probedOnce;
    private long free;
    private volatile boolean writable = true;
    /** What a refusal means, for the log lines: the store refuses publishes, a replay cache only stops caching. */
    private String whileFull = "publishes get 507 storage_full until space is freed, subscribers are still served";
    private String whenWritable = "publishes are accepted";

    StorageGuard(Path dataDir, long minFreeBytes, LongSupplier usableBytes, Allocator allocator,
                 LongSupplier nanoClock) {
        this.dataDir = dataDir;
        this.minFreeBytes = minFreeBytes;
        this.usableBytes = usableBytes;
        this.allocator = allocator;
        this.nanoClock = nanoClock;
    }

    /** The real thing: usable space of the data directory's file store, posix fallocate. */
    static StorageGuard forDirectory(Path dataDir, long minFreeBytes) {
        FileStore store;
        try {
            store = Files.getFileStore(dataDir);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot find the file system of " + dataDir, e);
        }
        LongSupplier usable = () -> {
            try {
                return store.getUsableSpace();
            } catch (IOException e) {
                return 0; // cannot tell: treat as full rather than risk a fault
            }
        };
        return new StorageGuard(dataDir, minFreeBytes, usable, PosixAllocator.create(), System::nanoTime);
    }

    /** Says in the log lines what a refusal means for this guard's writer (default: the store's publishes). */
    StorageGuard consequences(String whileFull, String whenWritable) {
        this.whileFull = whileFull;
        this.whenWritable = whenWritable;
        return this;
    }

    /**
     * False from a refused append until the next append that fits (publishes are refused for want
     * of space meanwhile). Any thread.
     */
    public boolean writable() {
        return writable;
    }

    /** Usable bytes of the data directory's file system now (a statvfs). Any thread. */
    public long freeBytes() {
        return usableBytes.getAsLong();
    }

    public long minFreeBytes() {
        return minFreeBytes;
    }

    /**
     * Whether an excerpt of about {@code bytes} may be written now. {@code newFile} is true when
     * the append creates a log file (the first after a start, or a new cycle). Reserves blocks
     * ahead when needed. A refusal changes nothing on disk.
     */
    boolean tryReserve(long bytes, boolean newFile) {
        boolean ok = newFile || file == null ? newFileFits(bytes) : reserve(bytes);
        setWritable(ok);
        return ok;
    }

    private boolean newFileFits(long bytes) {
        return probe(true) - NEW_FILE_BYTES - bytes - INDEX_SLACK >= minFreeBytes;
    }

    private boolean reserve(long bytes) {
        long needed = writeEnd + bytes + INDEX_SLACK;
        if (needed <= reservedTo) {
            // The blocks exist; the watermark still applies (someone else may have filled the disk).
            return probe(!writable) >= minFreeBytes;
        }
        if (handle < 0) {
            return probe(!writable) - (needed - writeEnd) >= minFreeBytes; // no fallocate: the watermark alone
        }
        long usable = probe(!writable);
        long target = needed + STEP;
        if (usable - (target - reservedTo) < minFreeBytes) {
            target = needed; // near the watermark: no step ahead, just this excerpt
            if (usable - (target - reservedTo) < minFreeBytes) {
                return false;
            }
        }
        switch (allocator.allocate(handle, reservedTo, target - reservedTo)) {
            case OK -> {
                free -= target - reservedTo; // taken by us: the cached reading stays honest until the next one
                reservedTo = target;
                return true;
            }
            case NO_SPACE -> {
                probedOnce = false; // the reading was wrong; take a new one next time
                return false;
            }
            default -> {
                log.info("the file system of {} does not support fallocate: the writer relies on store.minFreeBytes"
                        + " alone", dataDir);
                closeHandle();
                allocator = null;
                return probe(true) - (needed - writeEnd) >= minFreeBytes;
            }
        }
    }

    /** After an excerpt was written to {@code to}, ending at {@code end}. */
    void appended(File to, long end) {
        if (!to.equals(file)) {
            closeHandle();
            file = to;
            reservedTo = end; // what lies beyond in a new file is unknown: reserve from here
            handle = allocator == null ? -1 : allocator.open(to);
        }
        writeEnd = end;
    }

    /** An append failed inside the mapped file (a fault slipped through): re-check before the next one. */
    void faulted(Throwable cause) {
        probedOnce = false;
        reservedTo = writeEnd;
        if (writable) {
            writable = false;
            log.warn("writing to the log in {} failed ({}); {}", dataDir, cause.toString(), whileFull);
        }
    }

    /** Reserves the whole current length of a small file Chronicle writes in place (its metadata). */
    void reserveWholeFile(Path path) {
        if (allocator == null || !Files.isRegularFile(path)) {
            return;
        }
        long h = allocator.open(path.toFile());
        if (h < 0) {
            return;
        }
        try {
            allocator.allocate(h, 0, Files.size(path));
        } catch (IOException e) {
            log.debug("could not reserve {}: {}", path, e.toString());
        } finally {
            allocator.close(h);
        }
    }

    private long probe(boolean fresh) {
        long now = nanoClock.getAsLong();
        if (fresh || !probedOnce || now - probedAtNanos >= PROBE_EVERY_NANOS) {
            free = usableBytes.getAsLong();
            probedAtNanos = now;
            probedOnce = true;
        }
        return free;
    }

    private void setWritable(boolean ok) {
        if (ok == writable) {
            return;
        }
        writable = ok;
        if (ok) {
            log.info("storage writable again: {} bytes free in {}; {}", free, dataDir, whenWritable);
        } else {
            log.warn("storage full: {} bytes free in {} (store.minFreeBytes: {}); {}", free, dataDir, minFreeBytes,
                    whileFull);
        }
    }

    private void closeHandle() {
        if (handle >= 0 && allocator != null) {
            allocator.close(handle);
        }
        handle = -1;
    }

    @Override
    public void close() {
        closeHandle();
    }

    /** {@code fallocate(fd, FALLOC_FL_KEEP_SIZE, ...)}: reserves blocks without changing the file's length. */
    static final class PosixAllocator implements Allocator {
        private static final int O_RDWR = 2;
        private static final int FALLOC_FL_KEEP_SIZE = 1;
        private static final int ENOSYS = 38;
        private static final int EOPNOTSUPP = 95;

        private final PosixAPI posix;

        private PosixAllocator(PosixAPI posix) {
            this.posix = posix;
        }

        /** Null-safe: an allocator whose {@link #open} answers -1 where posix is not available. */
        static Allocator create() {
            try {
                PosixAPI p = PosixAPI.posix();
                if (p.getClass().getSimpleName().startsWith("NoOp")) {
                    return unsupported();
                }
                return new PosixAllocator(p);
            } catch (RuntimeException | LinkageError e) {
                log.info("posix fallocate not available ({}): the writer relies on store.minFreeBytes alone",
                        e.toString());
                return unsupported();
            }
        }

        private static Allocator unsupported() {
            return new Allocator() {
                @Override
                public long open(File file) {
                    return -1;
                }

                @Override
                public Result allocate(long handle, long offset, long length) {
                    return Result.UNSUPPORTED;
                }

                @Override
                public void close(long handle) {
                }
            };
        }

        @Override
        public long open(File file) {
            try {
                int fd = posix.open(file.getPath(), O_RDWR, 0);
                return fd < 0 ? -1 : fd;
            } catch (RuntimeException e) {
                return -1;
            }
        }

        @Override
        public Result allocate(long handle, long offset, long length) {
            if (posix.fallocate((int) handle, FALLOC_FL_KEEP_SIZE, offset, length) == 0) {
                return Result.OK;
            }
            int errno = posix.lastError();
            // ENOSPC, EDQUOT, EINTR, ...: refuse this time and try again at the next append
            return errno == EOPNOTSUPP || errno == ENOSYS ? Result.UNSUPPORTED : Result.NO_SPACE;
        }

        @Override
        public void close(long handle) {
            posix.close((int) handle);
        }
    }
}
