package io.pushd.server.store;

import io.pushd.server.history.EventHistory;
import io.pushd.server.history.TopicRange;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.core.time.TimeProvider;
import net.openhft.chronicle.queue.RollCycle;
import net.openhft.chronicle.queue.RollCycles;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The history of every topic of one node in one Chronicle Queue (hourly files) plus an in-memory
 * {@link TopicIndex} per topic: 10,000 topics cost 10,000 small arrays, not 10,000 queues or
 * memory maps. One epoch, the data directory's, for every topic. Parts: {@link DataDirectory}
 * (epoch, running marker, heads checkpoint), {@link LogAppender} behind the {@link StorageGuard},
 * {@link LogReader}, {@link Retention}, {@link IdempotencyIndex}; {@link EventRecord} is the layout.
 *
 * <p>Threads: {@link #append}, {@link #sync} and {@link #enforceRetention} from the publisher's
 * writer, one at a time (its thread, or an event loop that runs a publish itself); reads from any
 * thread (each thread gets its own tailer). Deleting files takes a write lock that reads share, so
 * a read never meets a half-deleted file.
 */
public final class ChronicleEventStore implements EventHistory {

    private static final Logger log = LoggerFactory.getLogger(ChronicleEventStore.class);
    static final RollCycle ROLL_CYCLE = RollCycles.FAST_HOURLY;

    private final DataDirectory dir;
    private final boolean fsync;
    private final long retentionCount;
    private final TimeProvider clock;
    private final SingleChronicleQueue queue;
    private final StorageGuard storage;
    private final LogAppender appender;
    private final LogReader reader;
    private final Retention retention;
    private final Map<String, TopicIndex> topics = new ConcurrentHashMap<>();
    private final IdempotencyIndex idempotency;
    private final ReentrantReadWriteLock fileLock = new ReentrantReadWriteLock();
    /** Appended but not yet synced (fsync mode): invisible to readers until {@link #sync()}. */
    private final List<Pending> pending = new ArrayList<>();
    private final long recoveredEvents;
    private long recoveredCount; // set by recover, during construction
    private long markedLogEnd; // the publisher's writer
    private volatile boolean closed;
    /** Chronicle's chunk size; 0: its default. */
    private final long blockSize;

    private record Pending(TopicIndex index, long seq, long position) {
    }

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
                        boolean fsync, TimeProvider clock, Function<Path, StorageGuard> guard) {
        this(dataDir, retentionAge, retentionCount, dedupeWindow, fsync, clock, guard, 0);
    }

    /**
     * @param blockSize the size of the chunks Chronicle maps its files in (0: its default, 64 MiB
     *                  here): tests make it small so that events straddle many chunk boundaries
     */
    ChronicleEventStore(Path dataDir, Duration retentionAge, long retentionCount, Duration dedupeWindow,
                        boolean fsync, TimeProvider clock, Function<Path, StorageGuard> guard, long blockSize) {
        this.blockSize = blockSize;
        this.fsync = fsync;
        this.retentionCount = retentionCount;
        this.clock = clock;
        this.idempotency = new IdempotencyIndex(dedupeWindow.toMillis());
        this.dir = new DataDirectory(dataDir, fsync); // locked for this process from here
        SingleChronicleQueue built = null;
        StorageGuard guarded = null;
        try {
            built = openQueue();
            LogReader.Scan scan = recover(new LogReader(built, fileLock.readLock()));
            String damage = scan.damage();
            long reached = dir.readLogEnd();
            if (damage == null && reached > scan.lastIndex()) {
                damage = "it ends at excerpt " + Long.toHexString(scan.lastIndex()) + " but had reached excerpt "
                        + Long.toHexString(reached) + ": a file is missing or was cut short";
            }
            if (damage != null) {
                built.close();
                built = null;
                topics.clear();
                idempotency.clear();
                dir.startNewHistory(damage);
                built = openQueue();
                scan = recover(new LogReader(built, fileLock.readLock()));
            }
            this.queue = built;
            this.recoveredEvents = recoveredCount;
            this.storage = guarded = guard.apply(dataDir);
            storage.reserveWholeFile(dir.logDir().resolve("metadata.cq4t")); // written in place, e.g. at each roll
            this.appender = new LogAppender(queue, storage);
            this.reader = new LogReader(queue, fileLock.readLock());
            this.retention = new Retention(queue, ROLL_CYCLE, dir.logDir(), retentionAge.toMillis());
            // Log first, checkpoint second: the checkpoint's heads cover events still in the log, and
            // raising the heads first would make recovery skip those events as "repeated".
            dir.readHeads().forEach((topic, head) -> index(topic).raiseHead(head));
            markedLogEnd = scan.lastIndex();
            dir.writeLogEnd(markedLogEnd, false);
            dir.markRunning(fsync);
        } catch (RuntimeException | Error e) {
            // a store that cannot open gives the directory back (the next start must not find it locked)
            if (built != null) {
                built.close();
            }
            if (guarded != null) {
                guarded.close();
            }
            dir.close();
            throw e;
        }
    }

    /** Number of events found in the log at start-up. */
    public long recoveredEvents() {
        return recoveredEvents;
    }

    /** The data directory's epoch: the epoch of every topic of this store. */
    public String epoch() {
        return dir.epoch();
    }

    @Override
    public String epoch(String topic) {
        return dir.epoch();
    }

    @Override
    public void append(String topic, long seq, long timestampMillis, String idempotencyKey, byte[] data) {
        long bytes = appender.reserve(topic, idempotencyKey, data);
        TopicIndex index = index(topic);
        if (seq <= index.head() || (!pending.isEmpty() && seq <= lastPendingSeq(index))) {
            throw new IllegalArgumentException("topic " + topic + ": sequence " + seq + " is not after head "
                    + index.head());
        }
        long position = appender.write(topic, seq, timestampMillis, idempotencyKey, data, bytes);
        if (fsync) {
            // Readers must not see what a power loss could still take back: a client that saw it
            // would resume after a number the next run hands out again.
            pending.add(new Pending(index, seq, position));
        } else {
            makeVisible(index, seq, position);
        }
        if (idempotencyKey != null) {
            idempotency.put(topic, idempotencyKey, seq, timestampMillis, clock.currentTimeMillis());
        }
    }

    private TopicIndex index(String topic) {
        return topics.computeIfAbsent(topic, t -> new TopicIndex());
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
                makeVisible(p.index(), p.seq(), p.position());
            }
            pending.clear();
        }
    }

    /** Hands an appended (and, with fsync, synced) event to readers. */
    private void makeVisible(TopicIndex index, long seq, long position) {
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

    /** The last sequence number of every topic ever written in this epoch, for the local sequencer. */
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
    public int read(String topic, String epoch, long afterSeq, int max, EventVisitor visitor) {
        TopicIndex index = topics.get(topic);
        if (!dir.epoch().equals(epoch)) {
            return EPOCH_CHANGED; // an ID of another data directory: this store never changes its own while running
        }
        if (index == null || closed) {
            return 0;
        }
        return reader.read(topic, index, afterSeq, max, visitor);
    }

    @Override
    public int readData(String topic, String epoch, long afterSeq, int max, EventDataVisitor visitor) {
        TopicIndex index = topics.get(topic);
        if (!dir.epoch().equals(epoch)) {
            return EPOCH_CHANGED;
        }
        if (index == null || closed) {
            return 0;
        }
        return reader.readData(topic, index, afterSeq, max, visitor);
    }

    /** Drops events past retention and deletes log files nothing refers to any more. Writer thread. */
    public void enforceRetention() {
        long now = clock.currentTimeMillis();
        idempotency.expire(now);
        retention.enforce(now, topics.values(), () -> {
            dir.writeHeads(heads());
            // the keys of the events about to go: a retry within the dedupe window still gets its
            // original ID after a restart, though the log no longer holds the event
            dir.writeKeys(idempotency.snapshot(now));
            // Deleting every file moves the log's end back: until it is marked again below, no
            // end is known (a crash in between must not pass for a damaged log).
            dir.writeLogEnd(-1, false);
            markedLogEnd = Long.MIN_VALUE;
        }, fileLock.writeLock());
        markLogEnd();
    }

    /** Bytes of log files on disk. */
    public long diskBytes() {
        try (Stream<Path> files = Files.list(dir.logDir())) {
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
        return closed ? -1 : reader.oldestTimestampMillis();
    }

    /** Topics ever written in this epoch. */
    public int topicCount() {
        return topics.size();
    }

    /** Number of {@code .cq4} log files (hourly cycles), for tests. */
    long logFileCount() {
        try (Stream<Path> files = Files.list(dir.logDir())) {
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
        reader.close();
        fileLock.writeLock().lock();
        try {
            sync();
            long last = queue.lastIndex();
            queue.close();
            dir.writeLogEnd(last, true);
            storage.close();
            dir.markStopped();
            dir.close();
        } finally {
            fileLock.writeLock().unlock();
        }
    }

    private SingleChronicleQueue openQueue() {
        SingleChronicleQueueBuilder builder = SingleChronicleQueueBuilder.binary(dir.logDir().toFile())
                .rollCycle(ROLL_CYCLE)
                .timeProvider(clock);
        if (blockSize > 0) {
            builder.blockSize(blockSize);
        }
        if (fsync) {
            builder.syncMode(SyncMode.SYNC);
        }
        return builder.build();
    }

    /** Indexes the log's events ({@link #recoveredCount}); what the scan found. */
    private LogReader.Scan recover(LogReader reader) {
        long[] count = {0};
        long now = clock.currentTimeMillis();
        byte[] saved = dir.readKeys(); // first: older than the log's keys
        if (saved != null) {
            try {
                idempotency.load(saved, now);
            } catch (IOException e) {
                log.warn("the saved idempotency keys are unreadable ({}); keys of deleted log files are forgotten",
                        e.toString());
            }
        }
        LogReader.Scan scan = reader.scan((position, r) -> {
            String topic = r.topic.toString();
            TopicIndex index = index(topic);
            if (r.seq <= index.head()) {
                log.warn("log entry {} of topic {} repeats sequence {}; skipped", position, topic, r.seq);
                return;
            }
            index.add(r.seq, position);
            String key = r.key();
            if (key != null) {
                idempotency.put(topic, key, r.seq, r.timestampMillis, now);
            }
            count[0]++;
        });
        for (TopicIndex i : topics.values()) {
            i.trimToCount(retentionCount);
        }
        recoveredCount = count[0];
        return scan;
    }

    /**
     * Records how far the log has come, so that a start that finds less knows the log lost its
     * end ({@code log-end}). Writer thread, about once a second; a write only when it moved.
     */
    public void markLogEnd() {
        if (closed) {
            return;
        }
        long last = queue.lastIndex();
        if (last != markedLogEnd) {
            markedLogEnd = last;
            dir.writeLogEnd(last, false);
        }
    }
}
