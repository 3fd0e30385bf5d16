package io.pushd.server.store;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.channels.FileChannel;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The history of every topic in one Chronicle Queue (hourly files) plus an in-memory index per
 * topic. 10,000 topics cost 10,000 small arrays, not 10,000 queues or memory maps.
 *
 * <p>Files in the data directory: {@code epoch} (the history's name, written once),
 * {@code heads.properties} (each topic's last sequence, written before log files are deleted so
 * the sequence never goes back), {@code log/} (the queue).
 *
 * <p>Threads: {@link #append} and {@link #enforceRetention} from the single writer thread; reads
 * from any thread (each thread gets its own tailer). Deleting files takes a write lock that reads
 * share, so a read never meets a half-deleted file.
 */
public final class ChronicleEventStore implements EventStore {

    private static final Logger log = LoggerFactory.getLogger(ChronicleEventStore.class);
    private static final byte RECORD_EVENT = 1;
    private static final RollCycle ROLL_CYCLE = RollCycles.FAST_HOURLY;
    private static final int READ_BATCH = 256;

    private final Path dataDir;
    private final Path logDir;
    private final String epoch;
    private final boolean fsync;
    private final long retentionAgeMillis;
    private final long retentionCount;
    private final TimeProvider clock;
    private final SingleChronicleQueue queue;
    private final ExcerptAppender appender;
    private final Map<String, TopicIndex> topics = new ConcurrentHashMap<>();
    private final IdempotencyIndex idempotency;
    private final ReentrantReadWriteLock fileLock = new ReentrantReadWriteLock();
    private final ThreadLocal<ReadState> readers;
    private final DateTimeFormatter cycleFileFormat;
    private final long recoveredEvents;
    private final StorageGuard storage;
    private volatile boolean closed;

    /** Per-thread read state: a tailer and scratch arrays, so reads allocate little. */
    private static final class ReadState {
        final ExcerptTailer tailer;
        final long[] seqs = new long[READ_BATCH];
        final long[] positions = new long[READ_BATCH];

        ReadState(ExcerptTailer tailer) {
            this.tailer = tailer;
        }
    }

    /** Appended but not yet synced (fsync mode): invisible to readers until {@link #sync()}. */
    private record Pending(TopicIndex index, long seq, long position) {
    }

    private final java.util.ArrayList<Pending> pending = new java.util.ArrayList<>();

    /** A store with no free-space watermark (blocks are still reserved ahead of the writer). */
    public ChronicleEventStore(Path dataDir, Duration retentionAge, long retentionCount, Duration dedupeWindow,
                               boolean fsync, TimeProvider clock) {
        this(dataDir, retentionAge, retentionCount, dedupeWindow, fsync, clock, 0);
    }

    /** @param minFreeBytes appends are refused while less than this would stay free on the data directory's disk */
    public ChronicleEventStore(Path dataDir, Duration retentionAge, long retentionCount, Duration dedupeWindow,
                               boolean fsync, TimeProvider clock, long minFreeBytes) {
        this(dataDir, retentionAge, retentionCount, dedupeWindow, fsync, clock,
                d -> StorageGuard.forDirectory(d, minFreeBytes));
    }

    ChronicleEventStore(Path dataDir, Duration retentionAge, long retentionCount, Duration dedupeWindow,
                        boolean fsync, TimeProvider clock, java.util.function.Function<Path, StorageGuard> guard) {
        this.dataDir = dataDir;
        this.logDir = dataDir.resolve("log");
        this.fsync = fsync;
        this.retentionAgeMillis = retentionAge.toMillis();
        this.retentionCount = retentionCount;
        this.clock = clock;
        this.idempotency = new IdempotencyIndex(dedupeWindow.toMillis());
        this.cycleFileFormat = DateTimeFormatter.ofPattern(ROLL_CYCLE.format()).withZone(ZoneOffset.UTC);
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create data directory " + dataDir, e);
        }
        discardHistoryLostWithTheMachine(dataDir, fsync);
        this.epoch = loadOrCreateEpoch(dataDir);
        SingleChronicleQueueBuilder builder = SingleChronicleQueueBuilder.binary(logDir.toFile())
                .rollCycle(ROLL_CYCLE)
                .timeProvider(clock);
        if (fsync) {
            builder.syncMode(SyncMode.SYNC);
        }
        this.queue = builder.build();
        this.storage = guard.apply(dataDir);
        storage.reserveWholeFile(logDir.resolve("metadata.cq4t")); // written in place, e.g. at each roll
        this.appender = queue.createAppender();
        // The single writer thread may differ from the constructing thread; writes are serialised by the caller.
        this.appender.singleThreadedCheckDisabled(true);
        this.readers = ThreadLocal.withInitial(() -> {
            ExcerptTailer t = queue.createTailer();
            t.singleThreadedCheckDisabled(true);
            return new ReadState(t);
        });
        // Log first, checkpoint second: the checkpoint's heads cover events still in the log, and
        // raising the heads first would make recovery skip those events as "repeated".
        this.recoveredEvents = recover();
        loadHeadsCheckpoint();
        markRunning(dataDir, fsync);
    }

    /** Number of events found in the log at start-up. */
    public long recoveredEvents() {
        return recoveredEvents;
    }

    @Override
    public String epoch() {
        return epoch;
    }

    @Override
    public long append(String topic, long seq, long timestampMillis, String idempotencyKey, byte[] data) {
        long bytes = recordBytes(topic, idempotencyKey, data);
        // A roll creates a file whose blocks cannot be reserved beforehand: the guard checks for room instead.
        boolean newFile = appender.currentFile() == null || appender.cycle() != queue.cycle();
        if (!storage.tryReserve(bytes, newFile)) {
            throw new StorageFullException("no room on disk for the event (store.minFreeBytes: "
                    + storage.minFreeBytes() + ", free: " + storage.freeBytes() + " bytes)");
        }
        TopicIndex index = topics.computeIfAbsent(topic, t -> new TopicIndex());
        if (seq <= index.head() || (!pending.isEmpty() && seq <= lastPendingSeq(index))) {
            throw new IllegalArgumentException("topic " + topic + ": sequence " + seq + " is not after head "
                    + index.head());
        }
        long position = write(topic, seq, timestampMillis, idempotencyKey, data, bytes);
        if (fsync) {
            // Readers must not see what a power loss could still take back: a client that saw it
            // would resume after a number the next run hands out again.
            pending.add(new Pending(index, seq, position));
        } else {
            publish(index, seq, position);
        }
        if (idempotencyKey != null) {
            idempotency.put(topic, idempotencyKey, seq, timestampMillis, clock.currentTimeMillis());
        }
        return position;
    }

    /**
     * Writes one excerpt. Its pages are touched (non-destructively) from the last one back before
     * anything is written, so a fault that slips past the guard happens while the excerpt holds
     * nothing but its header, which the rollback can then clear: a half-written excerpt would
     * block every reader behind it. Returns the excerpt's index, or throws {@link StorageFullException}
     * when it was not committed.
     */
    private long write(String topic, long seq, long timestampMillis, String idempotencyKey, byte[] data,
                       long bytes) {
        long position = Long.MIN_VALUE;
        long end = 0;
        try {
            try (DocumentContext dc = appender.writingDocument()) {
                try {
                    Bytes<?> b = dc.wire().bytes();
                    touch(b, b.writePosition(), b.writePosition() + bytes);
                    b.writeByte(RECORD_EVENT);
                    b.writeUtf8(topic);
                    b.writeLong(seq);
                    b.writeLong(timestampMillis);
                    b.writeUtf8(idempotencyKey);
                    b.writeInt(data.length);
                    b.write(data);
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

    private static final long PAGE = 4096;

    /** An upper bound of an excerpt's size: header, record fields (UTF-8 at most 3 bytes a char), data. */
    private static long recordBytes(String topic, String idempotencyKey, byte[] data) {
        int keyChars = idempotencyKey == null ? 0 : idempotencyKey.length();
        return 64 + 3L * (topic.length() + keyChars) + data.length;
    }

    /** False while appends are refused for want of disk space. */
    @Override
    public boolean writable() {
        return storage.writable();
    }

    /** Free space and writability of the data directory's disk, for metrics. */
    public StorageGuard storage() {
        return storage;
    }

    @Override
    public void sync() {
        if (fsync) {
            appender.sync();
            for (Pending p : pending) {
                publish(p.index(), p.seq(), p.position());
            }
            pending.clear();
        }
    }

    private void publish(TopicIndex index, long seq, long position) {
        index.add(seq, position);
        index.trimToCount(retentionCount);
    }

    private long lastPendingSeq(TopicIndex index) {
        for (int i = pending.size() - 1; i >= 0; i--) {
            if (pending.get(i).index() == index) {
                return pending.get(i).seq();
            }
        }
        return 0;
    }

    @Override
    public TopicRange range(String topic) {
        TopicIndex index = topics.get(topic);
        return index == null ? TopicRange.EMPTY : index.range();
    }

    @Override
    public Map<String, Long> heads() {
        Map<String, Long> heads = new HashMap<>();
        topics.forEach((t, i) -> heads.put(t, i.head()));
        return heads;
    }

    @Override
    public long findByIdempotencyKey(String topic, String key) {
        return idempotency.find(topic, key, clock.currentTimeMillis());
    }

    @Override
    public int read(String topic, long afterSeq, int max, EventVisitor visitor) {
        TopicIndex index = topics.get(topic);
        if (index == null || closed) {
            return 0;
        }
        ReadState rs = readers.get();
        int n = index.positionsAfter(afterSeq, Math.min(max, READ_BATCH), rs.seqs, rs.positions);
        int delivered = 0;
        fileLock.readLock().lock();
        try {
            for (int i = 0; i < n; i++) {
                if (closed || !rs.tailer.moveToIndex(rs.positions[i])) {
                    break; // deleted by retention meanwhile; the caller sees the new oldest and resets
                }
                try (DocumentContext dc = rs.tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    Bytes<?> b = dc.wire().bytes();
                    b.readByte();
                    b.readUtf8();
                    long seq = b.readLong();
                    long ts = b.readLong();
                    b.readUtf8();
                    byte[] data = new byte[b.readInt()];
                    b.read(data);
                    if (seq != rs.seqs[i]) {
                        throw new IllegalStateException("index of " + topic + " points at sequence " + seq
                                + " instead of " + rs.seqs[i]);
                    }
                    visitor.accept(seq, ts, data);
                    delivered++;
                }
            }
        } finally {
            fileLock.readLock().unlock();
        }
        return delivered;
    }

    @Override
    public void enforceRetention() {
        long now = clock.currentTimeMillis();
        idempotency.expire(now);
        int current = queue.cycle();
        int first = queue.firstCycle();
        if (first == Integer.MAX_VALUE || first >= current) {
            return;
        }
        long lowWater = Long.MAX_VALUE; // nothing below this position is still kept by count
        for (TopicIndex i : topics.values()) {
            lowWater = Math.min(lowWater, i.oldestPosition());
        }
        long cycleMillis = ROLL_CYCLE.lengthInMillis();
        int keepFrom = first;
        for (int c = first; c < current; c++) {
            long cycleEnd = (c + 1L) * cycleMillis;
            long nextCycleStart = ROLL_CYCLE.toIndex(c + 1, 0);
            boolean tooOld = cycleEnd <= now - retentionAgeMillis;
            boolean unreferenced = nextCycleStart <= lowWater;
            if (!tooOld && !unreferenced) {
                break;
            }
            keepFrom = c + 1;
        }
        if (keepFrom == first) {
            return;
        }
        long keptPosition = ROLL_CYCLE.toIndex(keepFrom, 0);
        writeHeadsCheckpoint(); // before any file goes, so no head is ever forgotten
        fileLock.writeLock().lock();
        try {
            for (TopicIndex i : topics.values()) {
                i.trimBelowPosition(keptPosition);
            }
            for (int c = first; c < keepFrom; c++) {
                File f = logDir.resolve(cycleFileFormat.format(Instant.ofEpochMilli(c * cycleMillis)) + ".cq4")
                        .toFile();
                if (f.exists() && !f.delete()) {
                    log.warn("could not delete expired log file {}", f);
                } else {
                    log.info("deleted expired log file {}", f.getName());
                }
            }
            queue.refreshDirectoryListing();
        } finally {
            fileLock.writeLock().unlock();
        }
    }

    @Override
    public long diskBytes() {
        try (Stream<Path> files = Files.list(logDir)) {
            return files.filter(p -> p.toString().endsWith(".cq4")).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        } catch (IOException e) {
            return 0;
        }
    }

    /** Append time of the oldest event still in the log, or -1 when the log is empty. Any thread. */
    public long oldestTimestampMillis() {
        if (closed) {
            return -1;
        }
        ReadState rs = readers.get();
        fileLock.readLock().lock();
        try {
            rs.tailer.toStart();
            try (DocumentContext dc = rs.tailer.readingDocument()) {
                if (!dc.isPresent()) {
                    return -1;
                }
                Bytes<?> b = dc.wire().bytes();
                b.readByte();
                b.readUtf8();
                b.readLong();
                return b.readLong();
            }
        } finally {
            fileLock.readLock().unlock();
        }
    }

    /** Topics ever written in this epoch. */
    public int topicCount() {
        return topics.size();
    }

    /** Number of {@code .cq4} log files (hourly cycles), for tests and metrics. */
    public long logFileCount() {
        try (Stream<Path> files = Files.list(logDir)) {
            return files.filter(p -> p.toString().endsWith(".cq4")).count();
        } catch (IOException e) {
            return 0;
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        fileLock.writeLock().lock();
        try {
            sync();
            queue.close();
            storage.close();
            Files.deleteIfExists(dataDir.resolve(RUNNING_MARKER)); // a clean stop
        } catch (IOException e) {
            log.warn("could not remove {}", dataDir.resolve(RUNNING_MARKER), e);
        } finally {
            fileLock.writeLock().unlock();
        }
    }

    private long recover() {
        long count = 0;
        long now = clock.currentTimeMillis();
        try (ExcerptTailer t = queue.createTailer()) {
            t.toStart();
            StringBuilder topicBuf = new StringBuilder();
            while (true) {
                try (DocumentContext dc = t.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    Bytes<?> b = dc.wire().bytes();
                    if (b.readByte() != RECORD_EVENT) {
                        continue;
                    }
                    b.readUtf8(topicBuf);
                    long seq = b.readLong();
                    long ts = b.readLong();
                    String key = b.readUtf8();
                    String topic = topicBuf.toString();
                    TopicIndex index = topics.computeIfAbsent(topic, x -> new TopicIndex());
                    if (seq <= index.head()) {
                        log.warn("log entry {} of topic {} repeats sequence {}; skipped", dc.index(), topic, seq);
                        continue;
                    }
                    index.add(seq, dc.index());
                    if (key != null) {
                        idempotency.put(topic, key, seq, ts, now);
                    }
                    count++;
                }
            }
        }
        for (TopicIndex i : topics.values()) {
            i.trimToCount(retentionCount);
        }
        return count;
    }

    /** Present while a server runs on the data directory: {@code <boot id> <fsync>}. */
    static final String RUNNING_MARKER = "running";
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    /**
     * Without fsync, an OS crash or power loss can take back events that were acknowledged and
     * seen by clients; the next run would hand their numbers out again under the same epoch, and
     * a client resuming after such a number would silently miss the new events. So when the last
     * run did not stop cleanly, ran without fsync, and the machine has booted since, the history
     * is dropped and a new epoch starts: every client gets {@code reset}. A process crash on the
     * same boot (kill -9, OOM) keeps the history: the page cache kept every write.
     */
    static void discardHistoryLostWithTheMachine(Path dataDir, boolean fsyncNow) {
        Path marker = dataDir.resolve(RUNNING_MARKER);
        if (!Files.exists(marker)) {
            return;
        }
        try {
            String[] last = Files.readString(marker, StandardCharsets.US_ASCII).trim().split(" ");
            boolean lastFsync = last.length > 1 && Boolean.parseBoolean(last[1]);
            String boot = bootId();
            if (!lastFsync && boot != null && !boot.equals(last[0])) {
                log.warn("the last run on {} ran without fsync and did not stop before the machine restarted: "
                        + "acknowledged events may be lost, so a new history (epoch) starts", dataDir);
                Files.deleteIfExists(dataDir.resolve("epoch")); // loadOrCreateEpoch then clears the log
            }
        } catch (IOException | RuntimeException e) {
            log.warn("unreadable {}; keeping the history", marker, e);
        }
    }

    private static void markRunning(Path dataDir, boolean fsync) {
        String boot = bootId();
        try {
            Files.writeString(dataDir.resolve(RUNNING_MARKER), (boot == null ? "unknown" : boot) + " " + fsync,
                    StandardCharsets.US_ASCII);
        } catch (IOException e) {
            log.warn("could not write {}", dataDir.resolve(RUNNING_MARKER), e);
        }
    }

    /** This boot of the machine (Linux); null where unknown, which never discards history. */
    static String bootId() {
        String forced = System.getProperty("push.bootId"); // tests simulate a reboot with it
        if (forced != null) {
            return forced;
        }
        try {
            return Files.readString(BOOT_ID, StandardCharsets.US_ASCII).trim();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String loadOrCreateEpoch(Path dataDir) {
        Path file = dataDir.resolve("epoch");
        try {
            if (Files.exists(file)) {
                String e = Files.readString(file, StandardCharsets.US_ASCII).trim();
                if (e.matches("[0-9a-z]{1,32}")) {
                    return e;
                }
                throw new IllegalStateException("data directory " + dataDir + " has a corrupt epoch file");
            }
            Path logPath = dataDir.resolve("log");
            if (Files.isDirectory(logPath)) {
                // A log without its epoch is a history we cannot vouch for: start a new one.
                log.warn("data directory {} has a log but no epoch file; starting a new history", dataDir);
                try (Stream<Path> old = Files.list(logPath)) {
                    for (Path p : (Iterable<Path>) old::iterator) {
                        Files.delete(p);
                    }
                }
                Files.deleteIfExists(dataDir.resolve("heads.properties"));
            }
            SecureRandom random = new SecureRandom();
            String epoch = Long.toString(System.currentTimeMillis() / 1000, 36)
                    + Long.toString(Math.floorMod(random.nextLong(), 36L * 36 * 36 * 36), 36);
            writeAtomically(dataDir, file, epoch.getBytes(StandardCharsets.US_ASCII));
            return epoch;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or create " + file, e);
        }
    }

    private void loadHeadsCheckpoint() {
        Path file = dataDir.resolve("heads.properties");
        if (!Files.exists(file)) {
            return;
        }
        Properties p = new Properties();
        try (var in = Files.newInputStream(file)) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        for (String topic : p.stringPropertyNames()) {
            topics.computeIfAbsent(topic, t -> new TopicIndex()).raiseHead(Long.parseLong(p.getProperty(topic)));
        }
    }

    private void writeHeadsCheckpoint() {
        Properties p = new Properties();
        topics.forEach((t, i) -> p.setProperty(t, Long.toString(i.head())));
        try {
            var out = new java.io.ByteArrayOutputStream();
            p.store(out, "last sequence of each topic; written before log files are deleted");
            writeAtomically(dataDir, dataDir.resolve("heads.properties"), out.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write heads checkpoint", e);
        }
    }

    /** Write to a temp file, fsync, rename over the target, fsync the directory. */
    private static void writeAtomically(Path dir, Path target, byte[] content) throws IOException {
        Path tmp = dir.resolve(target.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(java.nio.ByteBuffer.wrap(content));
            ch.force(true);
        }
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // some file systems cannot fsync a directory; the rename is still atomic
        }
    }
}
